// Hostile chat templates (issue 14): each case once crashed or hung the
// process (SIGFPE, SIGSEGV from stack overflow, std::bad_alloc, endless
// loops). Every one must now end with a clear error naming the limit and the
// template line, or render what Python prints, quickly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "engine/chat/chat_template.h"

namespace hearth::jinja {
namespace {

using chat::ChatTemplate;
using Clock = std::chrono::steady_clock;

struct Outcome {
  bool ok = false;
  std::string text;  // the output, or the error message
  ErrorCode code = ErrorCode::kInternal;
  double seconds = 0;
};

Outcome run(const std::string& tpl, const RenderLimits& limits = {}, const std::atomic<bool>* cancel = nullptr) {
  Outcome o;
  const auto t0 = Clock::now();
  auto t = ChatTemplate::parse(tpl, limits);
  if (!t) {
    o.text = t.error().message;
    o.code = t.error().code;
  } else if (auto r = t->render_variables(Value::dict(), cancel); !r) {
    o.text = r.error().message;
    o.code = r.error().code;
  } else {
    o.ok = true;
    o.text = *r;
  }
  o.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return o;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(JinjaHostile, IntegerDivisionOverflowIsAnErrorNotSigfpe) {
  const Outcome div = run("{{ (-9223372036854775807-1) // -1 }}");
  ASSERT_FALSE(div.ok) << div.text;
  EXPECT_TRUE(has(div.text, "integer overflow")) << div.text;
  EXPECT_TRUE(has(div.text, "line 1")) << div.text;
  // x % -1 is 0 in Python for every x, INT64_MIN included: the result fits.
  EXPECT_EQ(run("{{ (-9223372036854775807-1) % -1 }}").text, "0");
  EXPECT_EQ(run("{{ 7 // -1 }},{{ -7 // 2 }},{{ 7 % -3 }},{{ -7 % 3 }},{{ 9223372036854775807 // -1 }}").text,
            "-7,-4,-2,2,-9223372036854775807");
}

TEST(JinjaHostile, HugePowersAreInstantOrAnError) {
  const Outcome one = run("{{ 1 ** (10**18) }}");
  EXPECT_EQ(one.text, "1");
  EXPECT_LT(one.seconds, 1.0);
  EXPECT_EQ(run("{{ (-1) ** 9223372036854775807 }}").text, "-1");
  EXPECT_EQ(run("{{ (-1) ** 9223372036854775806 }},{{ 0 ** 0 }},{{ 2 ** 62 }},{{ 3 ** 39 }}").text,
            "1,1,4611686018427387904,4052555153018976267");
  const Outcome big = run("{{ 2 ** 64 }}");
  ASSERT_FALSE(big.ok);
  EXPECT_TRUE(has(big.text, "integer overflow")) << big.text;
  EXPECT_FALSE(run("{{ 0 ** -1 }}").ok);
  EXPECT_EQ(run("{{ 2 ** -1 }}").text, "0.5");
}

TEST(JinjaHostile, ExponentialMacroRecursionHitsTheStepBudget) {
  RenderLimits limits;
  limits.max_steps = 200'000;
  const Outcome o =
      run("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}\n{{ f(60) }}", limits);
  ASSERT_FALSE(o.ok);
  EXPECT_EQ(o.code, ErrorCode::kOutOfMemory);
  EXPECT_TRUE(has(o.text, "max_steps = 200000")) << o.text;
  EXPECT_TRUE(has(o.text, "line ")) << o.text;
  EXPECT_LT(o.seconds, 5.0);
}

// A list doubled by '+' (found by the fuzzer) or multiplied past the budget
// is refused by the bytes budget before the copy that would pass it.
TEST(JinjaHostile, ListDoublingAndRepetitionHitTheBytesBudgetBeforeCopying) {
  RenderLimits limits;
  limits.max_allocated_bytes = 1u << 20;
  const Outcome doubled =
      run("{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}"
          "{{ ns.l | length }}",
          limits);
  ASSERT_FALSE(doubled.ok);
  EXPECT_EQ(doubled.code, ErrorCode::kOutOfMemory);
  EXPECT_TRUE(has(doubled.text, "max_allocated_bytes")) << doubled.text;
  const Outcome repeated = run("{{ ([1, 2, 3] * 200000) | length }}", limits);
  ASSERT_FALSE(repeated.ok);
  EXPECT_TRUE(has(repeated.text, "max_allocated_bytes")) << repeated.text;
  const Outcome small = run("{{ ([1, 2] * 3) | length }} {{ ([1] + [2, 3]) | length }}", limits);
  ASSERT_TRUE(small.ok) << small.text;
  EXPECT_EQ(small.text, "6 3");
}

TEST(JinjaHostile, DeadlineStopsALongRender) {
  RenderLimits limits;
  limits.max_steps = 1'000'000'000;
  limits.max_loop_iterations = 1'000'000'000;
  limits.deadline = std::chrono::milliseconds(200);
  const Outcome o =
      run("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}", limits);
  ASSERT_FALSE(o.ok);
  EXPECT_TRUE(has(o.text, "wall-clock time")) << o.text;
  EXPECT_TRUE(has(o.text, "deadline = 200")) << o.text;
  EXPECT_LT(o.seconds, 3.0);
}

TEST(JinjaHostile, CancelFlagReachesARunningRender) {
  RenderLimits limits;
  limits.max_steps = 1'000'000'000;
  limits.max_loop_iterations = 1'000'000'000;
  limits.deadline = std::chrono::seconds(600);
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the render start; not synchronisation
    cancel.store(true);
  });
  const Outcome o =
      run("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}", limits,
          &cancel);
  canceller.join();
  ASSERT_FALSE(o.ok);
  EXPECT_EQ(o.code, ErrorCode::kCancelled);
  EXPECT_TRUE(has(o.text, "cancelled")) << o.text;
  EXPECT_LT(o.seconds, 30.0);
}

std::string chain(const std::string& head, const std::string& link, int n) {
  std::string s = "{{ " + head;
  for (int i = 0; i < n; ++i) s += link;
  return s + " }}";
}

TEST(JinjaHostile, LongOperatorChainsAreRefusedNotStackOverflows) {
  for (const char* link : {" ~ 'a'", " + 1", " | string", ".x"}) {
    const Outcome o = run(chain(std::string(link) == ".x" ? "ns" : "1", link, 20'000));
    ASSERT_FALSE(o.ok) << link;
    EXPECT_TRUE(has(o.text, "nested too deeply")) << o.text;
    EXPECT_TRUE(has(o.text, "line 1")) << o.text;
  }
  // A chain of ordinary length still works.
  EXPECT_EQ(run(chain("'x'", " ~ 'a'", 100)).text, "x" + std::string(100, 'a'));
}

TEST(JinjaHostile, DeepNestingInsideMacrosHitsTheDepthBudget) {
  // A left-deep chain of 200 concatenations with the recursive call at its
  // bottom, 60 calls deep: each piece is within the parser's limits, the
  // whole would nest ~12,000 evaluations on the C stack.
  std::string body = "(f(n - 1) if n > 0 else 0)";
  for (int i = 0; i < 200; ++i) body += " ~ 'a'";
  const Outcome o = run("{% macro f(n) %}{{ " + body + " }}{% endmacro %}{{ f(60) }}");
  ASSERT_FALSE(o.ok);
  EXPECT_TRUE(has(o.text, "max_depth = 500")) << o.text;
}

TEST(JinjaHostile, ListNested200000DeepIsRefusedAndFreesWithoutRecursion) {
  const std::string tpl =
      "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}"
      "{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x | length }}";
  const Outcome o = run(tpl);
  ASSERT_FALSE(o.ok);
  EXPECT_TRUE(has(o.text, "max_value_depth")) << o.text;
  EXPECT_TRUE(has(o.text, "line 1")) << o.text;

  // Built directly (as a caller could), a 200,000-deep list frees iteratively.
  Value deep = Value::list();
  for (int i = 0; i < 200'000; ++i) deep = Value::list({std::move(deep)});
  EXPECT_EQ(deep.depth(), 200'001u);
  Value dict_chain = Value::dict();
  for (int i = 0; i < 200'000; ++i) dict_chain = Value::dict({{"k", std::move(dict_chain)}});
  deep = Value();        // would overflow the stack with recursive destructors
  dict_chain = Value();  // the same for dicts
  SUCCEED();
}

TEST(JinjaHostile, HugeIndentArgumentsAreRefused) {
  const Outcome ind = run("{{ 'a\nb' | indent(10**10) }}");
  ASSERT_FALSE(ind.ok);
  EXPECT_TRUE(has(ind.text, "indent")) << ind.text;
  const Outcome js = run("{{ [1, [2]] | tojson(indent=10**12) }}");
  ASSERT_FALSE(js.ok);
  EXPECT_TRUE(has(js.text, "indent")) << js.text;
  EXPECT_EQ(run("{{ 'a\nb' | indent(2) }}|{{ [1] | tojson(indent=2) }}").text, "a\n  b|[\n  1\n]");
}

TEST(JinjaHostile, DoublingStringsAndListsHitsTheValueBudget) {
  const Outcome s =
      run("{% set ns = namespace(s='a') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ "
          "ns.s|length }}");
  ASSERT_FALSE(s.ok);
  EXPECT_EQ(s.code, ErrorCode::kOutOfMemory);
  EXPECT_TRUE(has(s.text, "bytes")) << s.text;
  const Outcome l =
      run("{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ "
          "ns.l|length }}");
  ASSERT_FALSE(l.ok);
  EXPECT_EQ(l.code, ErrorCode::kOutOfMemory);
  // Many large strings held at once: each fits, their sum is bounded.
  // (Sizes small enough that the byte budget, not the deadline, ends it even
  // under ASan on a loaded machine: each `+` copies the list's strings.)
  RenderLimits limits;
  limits.max_allocated_bytes = 8u << 20;
  limits.deadline = std::chrono::seconds(120);
  const Outcome many =
      run("{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = ns.l + ['x' * 100000] %}{% endfor %}",
          limits);
  ASSERT_FALSE(many.ok);
  EXPECT_TRUE(has(many.text, "max_allocated_bytes")) << many.text;
  // replace() that would grow past the cap.
  EXPECT_FALSE(run("{{ ('a' * 1000000) | replace('a', 'a' * 1000) | length }}").ok);
  EXPECT_FALSE(run("{{ ('a' * 1000000).replace('a', 'a' * 1000) | length }}").ok);
  // A list of a million references to one large string cannot print terabytes.
  // Refused before the copy (a gigabyte of copied strings), not while printing.
  const Outcome printed = run("{% set s = 'x' * 1000 %}{{ [s] * 1000000 }}");
  ASSERT_FALSE(printed.ok);
  EXPECT_TRUE(has(printed.text, "list repetition")) << printed.text;
  EXPECT_EQ(run("{{ ([1] * 100000) | length }}").text, "100000");
}

// Found by fuzz_chat_template with the structure-aware mutator: 'a' * 1000000
// appended a million times (seconds under the sanitizers, past libFuzzer's
// timeout; the deadline is only checked between steps). Repetition now
// doubles, and string '*' and '+' are checked against the bytes budget before
// they build.
TEST(JinjaHostile, StringRepetitionDoublesAndChecksTheBudgetFirst) {
  EXPECT_EQ(
      run("{{ 'ab' * 3 }}|{{ 3 * 'xy' }}|{{ 'a' * 0 }}|{{ 'a' * -2 }}|{{ ('' * 1000000) | length }}|{{ 'q' * true }}")
          .text,
      "ababab|xyxyxy|||0|q");
  EXPECT_EQ(run("{{ ('abc' * 1000001) | length }} {{ ('abc' * 1000001)[-4:] }}").text, "3000003 cabc");
  const Outcome big = run("{{ ('a' * 30000000) | length }}");
  ASSERT_TRUE(big.ok) << big.text;
  EXPECT_EQ(big.text, "30000000");
  EXPECT_LT(big.seconds, 5.0);
  RenderLimits limits;
  limits.max_allocated_bytes = 1u << 20;
  const Outcome refused = run("{{ ('a' * 2000000) | length }}", limits);
  ASSERT_FALSE(refused.ok);
  EXPECT_EQ(refused.code, ErrorCode::kOutOfMemory);
  EXPECT_TRUE(has(refused.text, "max_allocated_bytes")) << refused.text;
  const Outcome joined = run("{% set s = 'a' * 600000 %}{{ (s + s) | length }}", limits);
  ASSERT_FALSE(joined.ok);
  EXPECT_TRUE(has(joined.text, "max_allocated_bytes")) << joined.text;
  // Found by fuzz/run_long.sh: an empty list passed every size check and then
  // looped 10**12 times (a hang in the product too).
  const Outcome empty =
      run("{{ ([] * 1000000000000) | length }}|{{ [] * 9223372036854775807 }}|{{ (() * 10**15) | length }}");
  ASSERT_TRUE(empty.ok) << empty.text;
  EXPECT_EQ(empty.text, "0|[]|0");
  EXPECT_LT(empty.seconds, 5.0);
  // A list '+' copies its strings: they count, not only the items.
  const Outcome lists = run("{% set l = ['x' * 400000] %}{{ (l + l) | length }}", limits);
  ASSERT_FALSE(lists.ok);
  EXPECT_TRUE(has(lists.text, "max_allocated_bytes")) << lists.text;
}

TEST(JinjaHostile, NamespaceCyclesAreRefused) {
  const Outcome o = run("{% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ ns }}");
  ASSERT_FALSE(o.ok);
  EXPECT_TRUE(has(o.text, "namespace")) << o.text;
  EXPECT_FALSE(run("{% set ns = namespace(a=1) %}{% set ns.a = [ns] %}{{ ns }}").ok);
}

TEST(JinjaHostile, OverflowingRangesAndSlicesEnd) {
  EXPECT_EQ(run("{{ range(9223372036854775800, 9223372036854775807, 5) | list }}").text,
            "[9223372036854775800, 9223372036854775805]");
  EXPECT_EQ(run("{{ [1, 2, 3][1::9223372036854775807] }}").text, "[2]");
  EXPECT_FALSE(run("{{ (-9223372036854775807-1) | abs }}").ok);
}

TEST(JinjaHostile, LimitErrorsNameTheLine) {
  RenderLimits limits;
  limits.max_output_bytes = 10;
  const Outcome o = run("ok\n{% for i in range(100) %}xxxx{% endfor %}", limits);
  ASSERT_FALSE(o.ok);
  EXPECT_TRUE(has(o.text, "max_output_bytes = 10")) << o.text;
  EXPECT_TRUE(has(o.text, "line 2")) << o.text;
}

}  // namespace
}  // namespace hearth::jinja
