// The chat format a model renders with: its own template, or the named
// fallbacks of chat_format.h (exact text, written out by hand from the
// documented format).
#include <gtest/gtest.h>

#include "engine/chat/chat_format.h"
#include "engine/chat/chat_template.h"

namespace hearth::chat {
namespace {

TemplateInputs conversation() {
  TemplateInputs in;
  in.messages = {{"system", "Be brief. ", Value::dict()},
                 {"user", " Hi! ", Value::dict()},
                 {"assistant", "Hello.", Value::dict()},
                 {"user", "What is 2+2?", Value::dict()}};
  in.add_generation_prompt = true;
  in.bos_token = "<bos>";
  return in;
}

TEST(ChatFormat, AFileTemplateThatParsesIsUsedAsIs) {
  const ChatFormat f = choose_chat_format("{{ messages[0]['content'] }}", true);
  EXPECT_FALSE(f.fallback);
  EXPECT_EQ(f.describe(), "the model's template");
}

TEST(ChatFormat, GemmaVocabulariesWithoutATemplateGetGemmaTurns) {
  const ChatFormat f = choose_chat_format("", true);
  ASSERT_TRUE(f.fallback);
  EXPECT_EQ(f.name, "gemma-turns");
  EXPECT_EQ(f.describe(), "fallback gemma-turns (the model has no chat template)");
  auto tmpl = ChatTemplate::parse(f.source);
  ASSERT_TRUE(tmpl.ok()) << tmpl.error().message;
  auto text = tmpl->render(conversation());
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text,
            "<bos><start_of_turn>user\nBe brief.\n\nHi!<end_of_turn>\n"
            "<start_of_turn>model\nHello.<end_of_turn>\n"
            "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n"
            "<start_of_turn>model\n");
  TemplateInputs no_system = conversation();
  no_system.messages.erase(no_system.messages.begin());
  no_system.add_generation_prompt = false;
  EXPECT_EQ(*tmpl->render(no_system),
            "<bos><start_of_turn>user\nHi!<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"
            "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n");
}

TEST(ChatFormat, OtherVocabulariesAndBrokenTemplatesGetChatMl) {
  const ChatFormat none = choose_chat_format("", false);
  EXPECT_TRUE(none.fallback);
  EXPECT_EQ(none.name, "chatml");
  EXPECT_TRUE(none.source.empty());  // render_fallback renders it
  const ChatFormat broken = choose_chat_format("{% include 'x' %}", false);
  EXPECT_TRUE(broken.fallback);
  EXPECT_EQ(broken.name, "chatml");
  EXPECT_NE(broken.reason.find("include"), std::string::npos) << broken.reason;
}

}  // namespace
}  // namespace hearth::chat
