// The front API: rendering chat messages, errors that name the construct and
// its position, hostile templates, the ChatML fallback, concurrent renders.
#include "engine/chat/chat_template.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace hearth::chat {
namespace {

const char* kChatMl =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

TemplateInputs two_turns() {
  TemplateInputs in;
  in.messages = {{"system", "Be brief.", Value::dict()}, {"user", "Hi\nthere", Value::dict()}};
  in.add_generation_prompt = true;
  return in;
}

TEST(ChatTemplate, RendersChatMl) {
  auto t = ChatTemplate::parse(kChatMl);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto r = t->render(two_turns());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi\nthere<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, PassesTokensToolsExtraFieldsAndVariables) {
  auto t = ChatTemplate::parse(
      "{{ bos_token }}{{ tools is none }}{{ documents is none }}{{ messages[1].name }}{{ messages[1].content is none }}"
      "{{ date_string }}{{ eos_token }}");
  ASSERT_TRUE(t.ok());
  TemplateInputs in = two_turns();
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  in.messages[1].extra.set(Value("name"), Value("bob"));
  in.messages[1].extra.set(Value("content"), Value::none());
  in.variables.set(Value("date_string"), Value("26 Jul 2024"));
  auto r = t->render(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "<s>TrueTruebobTrue26 Jul 2024</s>");
}

TEST(ChatTemplate, RaiseExceptionReturnsTheMessage) {
  auto t = ChatTemplate::parse(
      "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}");
  ASSERT_TRUE(t.ok());
  auto r = t->render(two_turns());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "System role not supported");
}

TEST(ChatTemplate, UnsupportedConstructsNameLineAndColumn) {
  struct Case {
    const char* tpl;
    const char* message;
  };
  const Case cases[] = {
      {"hello\n  {% include 'x.jinja' %}", "chat template: unsupported tag 'include' at line 2, column 6"},
      {"{{ x | frobnicate }}", "chat template: unsupported filter 'frobnicate' at line 1, column 8"},
      {"{% if x is prime %}{% endif %}", "chat template: unsupported test 'prime' at line 1, column 12"},
      {"{% for x in y recursive %}{% endfor %}",
       "chat template: unsupported construct 'recursive' loop at line 1, column 15"},
      {"a\nb {% endif %}", "chat template: unexpected 'endif' at line 2, column 6"},
  };
  for (const auto& c : cases) {
    auto t = ChatTemplate::parse(c.tpl);
    ASSERT_FALSE(t.ok()) << c.tpl;
    EXPECT_EQ(t.error().message, c.message);
  }
}

TEST(ChatTemplate, MalformedTemplatesAreErrorsNotCrashes) {
  const std::string deep_parens = std::string(5000, '(') + "1" + std::string(5000, ')');
  std::string deep_ifs;
  for (int i = 0; i < 3000; ++i) deep_ifs += "{% if true %}";
  const std::vector<std::string> bad = {
      "{{",
      "{{ 1 +",
      "{% if %}",
      "{% for %}",
      "{% for x in %}",
      "{{ 'unterminated }}",
      "{# never closed",
      "{% raw %}never closed",
      "{{ ) }}",
      "{{ [1, 2 }}",
      "{% if true %}no end",
      "{% set %}",
      "{{ a. }}",
      "{{ {1: } }}",
      "{% macro m( %}",
      "{{ 99999999999999999999999 }}",
      "{{ 1 is }}",
      "{{ x | }}",
      "{{ f(a=1, 2) }}",
      "{% else %}",
      "{{ '\\x4' }}",
      "{% endfor %}",
      "{%- -%}",
      "{{}}",
      "{{ " + deep_parens + " }}",
      deep_ifs + "x",
  };
  for (const auto& src : bad) {
    auto t = ChatTemplate::parse(src);
    EXPECT_FALSE(t.ok()) << src.substr(0, 40);
  }
}

TEST(ChatTemplate, RuntimeLimitsStopRunawayTemplates) {
  RenderLimits limits;
  limits.max_output_bytes = 1000;
  auto big = ChatTemplate::parse("{% for i in range(100000) %}xxxxxxxxxx{% endfor %}", limits);
  ASSERT_TRUE(big.ok());
  EXPECT_FALSE(big->render({}).ok());

  auto recursive = ChatTemplate::parse("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}");
  ASSERT_TRUE(recursive.ok());
  auto r = recursive->render({});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("macro calls nested deeper"), std::string::npos);

  auto huge_range = ChatTemplate::parse("{{ range(1000000) | length }}");
  ASSERT_TRUE(huge_range.ok());
  EXPECT_FALSE(huge_range->render({}).ok());

  auto nested = ChatTemplate::parse(
      "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(10) %}{% endfor %}{% endfor %}{% endfor "
      "%}");
  ASSERT_TRUE(nested.ok());
  EXPECT_FALSE(nested->render({}).ok());
}

TEST(ChatTemplate, ConcurrentRendersAgree) {
  auto t = ChatTemplate::parse(
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content | upper }}{% endfor %}"
      "{{ ns.n }}");
  ASSERT_TRUE(t.ok());
  std::vector<std::string> results(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      TemplateInputs in;
      for (std::size_t k = 0; k <= i; ++k) in.messages.push_back({"user", "m" + std::to_string(k), Value::dict()});
      for (int rep = 0; rep < 200; ++rep) results[i] = t->render(in).value();
    });
  }
  for (auto& th : threads) th.join();
  for (std::size_t i = 0; i < results.size(); ++i) {
    std::string expected;
    for (std::size_t k = 0; k <= i; ++k) expected += "M" + std::to_string(k);
    EXPECT_EQ(results[i], expected + std::to_string(i + 1));
  }
}

TEST(ChatTemplate, FallbackIsChatMlAndFlagged) {
  TemplateInputs in = two_turns();
  const std::string expected =
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi\nthere<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(render_fallback(in), expected);

  RenderedPrompt bad = render_or_fallback("{% include 'x' %}", in);
  EXPECT_TRUE(bad.used_fallback);
  EXPECT_EQ(bad.text, expected);
  EXPECT_NE(bad.fallback_reason.find("unsupported tag 'include'"), std::string::npos);

  RenderedPrompt empty = render_or_fallback("", in);
  EXPECT_TRUE(empty.used_fallback);

  RenderedPrompt good = render_or_fallback(kChatMl, in);
  EXPECT_FALSE(good.used_fallback);
  EXPECT_EQ(good.text, expected);
}

TEST(ChatTemplate, InputsFromJson) {
  auto in = inputs_from_json(
      R"({"messages": [{"role": "user", "content": "hi", "name": "x"}, {"role": "assistant", "content": null}],
          "add_generation_prompt": true, "bos_token": "<s>", "tools": [], "date_string": "d"})");
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_EQ(in->messages.size(), 2u);
  EXPECT_EQ(in->messages[0].content, "hi");
  ASSERT_NE(in->messages[0].extra.get("name"), nullptr);
  ASSERT_NE(in->messages[1].extra.get("content"), nullptr);
  EXPECT_TRUE(in->messages[1].extra.get("content")->is_none());
  EXPECT_TRUE(in->add_generation_prompt);
  EXPECT_EQ(in->bos_token, "<s>");
  EXPECT_TRUE(in->tools.is_list());
  ASSERT_NE(in->variables.get("date_string"), nullptr);
  EXPECT_FALSE(inputs_from_json(R"({"messages": [{"content": "no role"}]})").ok());
  EXPECT_FALSE(inputs_from_json("[1, 2").ok());
}

}  // namespace
}  // namespace hearth::chat
