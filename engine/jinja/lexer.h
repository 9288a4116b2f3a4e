// Splits a chat template into tokens exactly as jinja2's lexer does with
// trim_blocks=True and lstrip_blocks=True: text data, `{{ }}` / `{% %}`
// delimiters with their `-` / `+` whitespace control, and the expression
// tokens between them. Comments vanish; `{% raw %}` bodies become text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/result.h"

namespace hearth::jinja {

enum class TokenType : std::uint8_t {
  kData,        // literal template text (already whitespace-controlled)
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,  // text holds the unescaped value
  kInt,
  kFloat,
  kOp,  // text holds the operator: + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  kEnd,
};

struct Token {
  TokenType type = TokenType::kEnd;
  std::string text;
  std::int64_t int_value = 0;
  double float_value = 0.0;
  std::size_t offset = 0;  // byte offset into the normalized source
};

// Maps byte offsets of the normalized source to 1-based line and column.
class SourceMap {
 public:
  explicit SourceMap(std::string_view source);
  std::string describe(std::size_t offset) const;  // "line L, column C"

 private:
  std::vector<std::size_t> line_starts_;
};

// jinja2's source preparation: \r\n and \r become \n, and one trailing
// newline is dropped (keep_trailing_newline=False).
std::string normalize_source(std::string_view source);

// Tokenizes a normalized source. Errors name line and column.
Result<std::vector<Token>> tokenize(std::string_view source);

}  // namespace hearth::jinja
