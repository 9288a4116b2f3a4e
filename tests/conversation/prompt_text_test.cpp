// The text side of prompts: references, {{variables}}, titles. Table-driven.
#include <gtest/gtest.h>

#include "conversation/prompt_text.h"

namespace hearth::conversation {
namespace {

TEST(PromptVariables, FoundInOrderWithoutRepeats) {
  EXPECT_EQ(variables_in("Hi {{name}}, {{ place }} and {{name}}; {{not a var}} {{}} {{x"),
            (std::vector<std::string>{"name", "place"}));
}

TEST(PromptVariables, RenderedAndRecorded) {
  auto r = render_variables("You help {{ who }} with {{topic}}. {{who}}!",
                            {{"who", "Ada"}, {"topic", "maths"}, {"x", "1"}}, "prompt 'p' version 1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "You help Ada with maths. Ada!");
  EXPECT_EQ(r->used, (Variables{{"topic", "maths"}, {"who", "Ada"}}));  // the unused x is not recorded
  EXPECT_EQ(variables_to_json(r->used), R"({"topic":"maths","who":"Ada"})");
  EXPECT_EQ(variables_from_json(variables_to_json(r->used)), r->used);
  EXPECT_TRUE(variables_from_json("not json").empty());
}

TEST(PromptVariables, AMissingOneIsAnErrorNamingIt) {
  auto r = render_variables("Dear {{name}}, about {{topic}}", {{"name", "Bo"}}, R"(prompt "letter" version 2)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, store::StoreErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("\"topic\""), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(R"(prompt "letter" version 2)"), std::string::npos) << r.error().message;
}

TEST(PromptVariables, AssignmentsFromTheCommandLine) {
  auto a = parse_variable_assignment("who=a=b");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "who");
  EXPECT_EQ(a->second, "a=b");
  EXPECT_FALSE(parse_variable_assignment("novalue").ok());
  EXPECT_FALSE(parse_variable_assignment("bad key=1").ok());
}

TEST(Title, FirstLineShortened) {
  EXPECT_EQ(title_from_message("  \n Hello   there\nsecond"), "Hello there");
  EXPECT_EQ(title_from_message(" \n "), "New chat");
  const std::string long_line(60, 'x');
  EXPECT_EQ(title_from_message(long_line), std::string(47, 'x') + "\xE2\x80\xA6");
  std::string accents;
  for (int i = 0; i < 48; ++i) accents += "\xC3\xA9";  // 48 code points: kept whole
  EXPECT_EQ(title_from_message(accents), accents);
}

}  // namespace
}  // namespace hearth::conversation
