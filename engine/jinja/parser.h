// Builds the syntax tree from lexer tokens with jinja2's grammar and operator
// precedence (or < and < not < comparisons/in < + - < ~ < * / // % < ** <
// unary +/- < postfix . [] () < filters | and tests `is`). Filter and test
// names are checked here, as jinja2 does when it compiles a template, so an
// unknown one is a parse error naming its line and column.
#pragma once

#include <string_view>
#include <vector>

#include "engine/jinja/ast.h"
#include "engine/jinja/lexer.h"
#include "hearth/result.h"

namespace hearth::jinja {

// `source` is the normalized source the tokens came from (for positions).
Result<Body> parse_template(const std::vector<Token>& tokens, std::string_view source);

}  // namespace hearth::jinja
