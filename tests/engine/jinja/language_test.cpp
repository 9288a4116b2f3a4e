// Table-driven checks of the template language with exact expected output
// (the values Python jinja2 prints for the same template, worked out by hand).
#include <gtest/gtest.h>

#include <string>

#include "engine/chat/chat_template.h"
#include "engine/jinja/json.h"

namespace hearth::jinja {
namespace {

using chat::ChatTemplate;

struct Case {
  const char* tpl;
  const char* expected;
};

std::string render(const std::string& tpl, const char* vars_json = "{}") {
  auto vars = parse_json(vars_json);
  EXPECT_TRUE(vars.ok());
  auto t = ChatTemplate::parse(tpl);
  if (!t) return "PARSE ERROR: " + t.error().message;
  auto r = t->render_variables(*vars);
  if (!r) return "RENDER ERROR: " + r.error().message;
  return *r;
}

TEST(ChatLanguage, Expressions) {
  const Case cases[] = {
      {"{{ 1 + 2 * 3 }}", "7"},
      {"{{ (1 + 2) * 3 }}", "9"},
      {"{{ 7 // 2 }},{{ -7 // 2 }},{{ -7 % 3 }},{{ 7 / 2 }}", "3,-4,2,3.5"},
      {"{{ 2 ** 3 ** 2 }}", "64"},
      {"{{ 'a' ~ 1 ~ none }}", "a1None"},
      {"{{ 'ab' * 2 }}{{ [1] + [2] }}", "abab[1, 2]"},
      {"{{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1.5e-5 }} {{ 2.0 }}", "0.30000000000000004 1e+16 1.5e-05 2.0"},
      {"{{ 'x' if false }}|{{ 'y' if true else 'z' }}", "|y"},
      {"{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }}", "True False"},
      {"{{ 'b' in 'abc' }} {{ 2 not in [1, 2] }}", "True False"},
      {"{{ not 1 == 2 }}", "True"},
      {"{{ 0 or '' or 'last' }} {{ 1 and 'two' }}", "last two"},
      {"{{ -2 | abs }}", "2"},
      {"{{ 'hello'[1:4] }}{{ 'hello'[::-1] }}{{ 'hello'[-1] }}", "ellolleho"},
      {"{{ [1, 2, 3][::-1] }} {{ [1, 2, 3][5] }}|", "[3, 2, 1] |"},
      {"{{ {'a': 1}['a'] }}{{ {'a': 1}.a }}{{ {'a': 1}.b }}|", "11|"},
      {"{{ ('a', 1) }} {{ (1,) }} {{ {'k': \"it's\"} }}", "('a', 1) (1,) {'k': \"it's\"}"},
      {"{{ '\\u00e9\\n\\x41' }}", "\xC3\xA9\nA"},
      {"{{ 'adj' 'acent' }}", "adjacent"},
      {"{{ true }} {{ none }} {{ undefined_name }}|", "True None |"},
  };
  for (const auto& c : cases) EXPECT_EQ(render(c.tpl), c.expected) << c.tpl;
}

TEST(ChatLanguage, FiltersAndTests) {
  const Case cases[] = {
      {"{{ '  x  ' | trim }}|{{ 'xax' | trim('x') }}", "x|a"},
      {"{{ [1, 2] | length }}{{ 'héllo' | length }}{{ nothing | length }}", "250"},
      {"{{ nothing | default('d') }}{{ none | default('d') }}{{ '' | d('e', true) }}", "dNonee"},
      {"{{ {'b': 1, 'a': 'é'} | tojson }}", "{\"b\": 1, \"a\": \"\xC3\xA9\"}"},
      {"{{ [1, {'a': []}] | tojson(indent=2) }}", "[\n  1,\n  {\n    \"a\": []\n  }\n]"},
      {"{{ ['a', 'b'] | join('-') }}{{ [3, 1, 2] | sort | first }}{{ [3, 1, 2] | last }}", "a-b12"},
      {"{{ 'aXa' | replace('a', 'b') }}{{ 'Hi' | upper }}{{ 'Hi' | lower }}", "bXbHIhi"},
      {"{{ [1, 2, 1] | unique | list }}{{ [1, 2] | reverse | list }}", "[1, 2][2, 1]"},
      {"{{ '12' | int + 1 }} {{ 'x' | int }} {{ '2.5' | float }} {{ 2.5 | round }}", "13 0 2.5 2.0"},
      {"{{ x | selectattr('r', 'equalto', 'u') | map(attribute='c') | join(',') }}", "1,3"},
      {"{{ x | rejectattr('r', 'equalto', 'u') | list | length }}", "1"},
      {"{{ 1 is number }}{{ 's' is string }}{{ {} is mapping }}{{ none is none }}{{ q is defined }}",
       "TrueTrueTrueTrueFalse"},
      {"{{ 3 is odd }}{{ 4 is even }}{{ 1 is not string }}{{ true is boolean }}{{ 1 is integer }}",
       "TrueTrueTrueTrueTrue"},
  };
  const char* vars = R"({"x": [{"r": "u", "c": 1}, {"r": "a", "c": 2}, {"r": "u", "c": 3}]})";
  for (const auto& c : cases) EXPECT_EQ(render(c.tpl, vars), c.expected) << c.tpl;
}

TEST(ChatLanguage, StatementsAndScoping) {
  const Case cases[] = {
      {"{% for x in [1, 2, 3] %}{{ loop.index }}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}", "11,22,33"},
      {"{% for x in [] %}a{% else %}empty{% endfor %}", "empty"},
      {"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}{{ v }}{% endfor %}", "a1b2"},
      {"{% for x in [1, 2, 3, 4] if x is even %}{{ x }}/{{ loop.length }}{% endfor %}", "2/24/2"},
      {"{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}", "13"},
      {"{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}", "1"},
      {"{% set y = 1 %}{% for x in [5] %}{% set y = x %}{% endfor %}{{ y }}", "1"},
      {"{% set ns = namespace(y=1) %}{% for x in [5] %}{% set ns.y = x %}{% endfor %}{{ ns.y }}", "5"},
      {"{% if false %}a{% elif true %}b{% else %}c{% endif %}", "b"},
      {"{% set a, b = 1, 2 %}{{ b }}{{ a }}", "21"},
      {"{% set s %}in {{ 1 }}{% endset %}[{{ s }}]", "[in 1]"},
      {"{% macro m(a, b='B') %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}{{ m(2, b=3) }}", "1B23"},
      {"{% for x in 'ab' %}{{ loop.cycle('o', 'e') }}{% endfor %}", "oe"},
      {"{% raw %}{{ x }}{% endraw %}", "{{ x }}"},
  };
  for (const auto& c : cases) EXPECT_EQ(render(c.tpl), c.expected) << c.tpl;
}

TEST(ChatLanguage, WhitespaceControlAsJinja) {
  const Case cases[] = {
      {"a\n{% if true %}\nb\n{% endif %}\nc", "a\nb\nc"},          // trim_blocks eats the newline after a tag
      {"a\n    {% if true %}\nb\n    {% endif %}\nc", "a\nb\nc"},  // lstrip_blocks eats the indentation
      {"a  {%- if true -%}  b  {%- endif %}", "ab"},
      {"a\n  {{- 'b' -}}  \nc", "abc"},
      {"  {{ 'v' }}\n", "  v"},  // variables are not lstripped; one trailing newline is dropped
      {"{# c #}\nx", "x"},
      {"x {%+ if true %}y{% endif %}", "x y"},
      {"{% if true +%}\nz{% endif %}", "\nz"},
      {"a\r\nb\rc", "a\nb\nc"},
  };
  for (const auto& c : cases) EXPECT_EQ(render(c.tpl), c.expected) << c.tpl;
}

TEST(ChatLanguage, UndefinedSemantics) {
  EXPECT_EQ(render("{{ u }}{{ u | length }}{% for x in u %}x{% endfor %}{{ u is undefined }}"), "0True");
  EXPECT_EQ(render("{{ d.missing }}|", R"({"d": {}})"), "|");
  EXPECT_NE(render("{{ u + 1 }}").find("RENDER ERROR"), std::string::npos);
  EXPECT_NE(render("{{ u.attr }}").find("RENDER ERROR"), std::string::npos);
  EXPECT_NE(render("{{ d.missing.deeper }}", R"({"d": {}})").find("RENDER ERROR"), std::string::npos);
}

}  // namespace
}  // namespace hearth::jinja
