// Values print as Python prints them; JSON in and out matches Python's json.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "engine/jinja/json.h"
#include "engine/jinja/pystr.h"
#include "engine/jinja/value.h"

namespace hearth::jinja {
namespace {

TEST(ChatValue, FloatReprMatchesPython) {
  const std::pair<double, const char*> cases[] = {
      {1.0, "1.0"},
      {0.1, "0.1"},
      {-2.5, "-2.5"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {0.0001, "0.0001"},
      {0.00001, "1e-05"},
      {1.5e-7, "1.5e-07"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0 / 3.0, "0.3333333333333333"},
      {5e-324, "5e-324"},
      {std::numeric_limits<double>::infinity(), "inf"},
  };
  for (const auto& [d, s] : cases) EXPECT_EQ(python_float_repr(d), s) << s;
  EXPECT_EQ(python_float_repr(std::nan("")), "nan");
}

TEST(ChatValue, StrAndReprLikePython) {
  Value list = Value::list({Value(1), Value("it's"), Value("a\"b'c\n"), Value::none(), Value(true), Value(2.0)});
  EXPECT_EQ(list.str(), "[1, \"it's\", 'a\"b\\'c\\n', None, True, 2.0]");
  EXPECT_EQ(Value::tuple({Value(1)}).str(), "(1,)");
  EXPECT_EQ(Value::dict({{"k", Value::list()}}).str(), "{'k': []}");
  EXPECT_EQ(Value().str(), "");
  EXPECT_FALSE(Value().truthy());
  EXPECT_FALSE(Value::dict().truthy());
  EXPECT_TRUE(Value("x").truthy());
}

TEST(ChatValue, EqualityIsPythons) {
  EXPECT_TRUE(equals(Value(1), Value(1.0)));
  EXPECT_TRUE(equals(Value(true), Value(1)));
  EXPECT_FALSE(equals(Value("1"), Value(1)));
  EXPECT_TRUE(equals(Value::list({Value(1)}), Value::list({Value(1.0)})));
  EXPECT_FALSE(equals(Value::list({Value(1)}), Value::tuple({Value(1)})));
  EXPECT_FALSE(less_than(Value("a"), Value(1)).ok());
}

TEST(ChatJson, DumpsLikePythonJson) {
  auto v = parse_json(R"({"b": [1, 2.5, -0.0, 1e300, "é\u0001\t\"\\/"], "a": {}, "c": [], "d": null, "e": true})");
  ASSERT_TRUE(v.ok()) << v.error().message;
  auto s = to_json(*v);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s,
            "{\"b\": [1, 2.5, -0.0, 1e+300, \"\xC3\xA9\\u0001\\t\\\"\\\\/\"], \"a\": {}, \"c\": [], \"d\": null, "
            "\"e\": true}");
  JsonDumpOptions indent;
  indent.indent = "  ";
  indent.item_separator = ",";
  auto pretty = to_json(Value::dict({{"x", Value::list({Value(1), Value(2)})}}), indent);
  EXPECT_EQ(*pretty, "{\n  \"x\": [\n    1,\n    2\n  ]\n}");
  JsonDumpOptions ascii;
  ascii.ensure_ascii = true;
  EXPECT_EQ(*to_json(Value("\xC3\xA9\xF0\x9F\x98\x80"), ascii), "\"\\u00e9\\ud83d\\ude00\"");
  EXPECT_FALSE(to_json(Value()).ok());
}

TEST(ChatJson, ParsesAndRejects) {
  auto v = parse_json(R"(  {"a": [1, -2, 3.5e2, "\ud83d\ude00"], "a": 7}  )");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->get("a")->as_int(), 7);  // a repeated key keeps the last value, first position
  EXPECT_EQ(v->dict_value().entries.size(), 1u);
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "\"\\ud800\"", "01x", "[1] 2", "\"tab\there\"", "nul"}) {
    EXPECT_FALSE(parse_json(bad).ok()) << bad;
  }
  std::string deep(10000, '[');
  EXPECT_FALSE(parse_json(deep).ok());
}

TEST(ChatPyStr, PythonStringOperations) {
  EXPECT_EQ(pystr::length("h\xC3\xA9llo"), 5u);
  EXPECT_EQ(pystr::strip("\xC2\xA0 x \n", true, true, nullptr), "x");  // U+00A0 is whitespace to Python
  EXPECT_EQ(pystr::split(" a  b ", nullptr, -1), (std::vector<std::string>{"a", "b"}));
  std::string sep = ",";
  EXPECT_EQ(pystr::split("a,,b", &sep, -1), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(pystr::rsplit("a,b,c", &sep, 1), (std::vector<std::string>{"a,b", "c"}));
  EXPECT_EQ(pystr::splitlines("a\r\nb\n\nc", false), (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(pystr::replace("ab", "", "-", -1), "-a-b-");
  EXPECT_EQ(pystr::upper("stra\xC3\x9F"
                         "e \xC3\xA9"),
            "STRASSE \xC3\x89");
  EXPECT_EQ(pystr::title_jinja("hello-world (x)"), "Hello-World (X)");
}

}  // namespace
}  // namespace hearth::jinja
