// Internal: the recursive-descent parser shared by parser.cpp (statements)
// and parser_expr.cpp (expressions). Not part of the chat API.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "engine/jinja/ast.h"
#include "engine/jinja/lexer.h"
#include "hearth/result.h"

namespace hearth::jinja::parser_detail {

constexpr int kMaxNesting = 128;  // expression and block nesting; deeper is an error, not a stack overflow
// The tallest expression tree: `a ~ b ~ c ...` and `x.a.b...` grow trees in a
// loop rather than by recursion, and the evaluator (and the tree's destructor)
// recurses once per level, so a chain of 20,000 is refused here.
constexpr std::uint32_t kMaxExprHeight = 256;

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::string_view source) : t_(tokens), map_(source) {}

  Result<Body> run();

 private:
  using Ends = std::initializer_list<std::string_view>;

  const Token& cur() const { return t_[pos_]; }
  const Token& peek(std::size_t k = 1) const { return t_[std::min(pos_ + k, t_.size() - 1)]; }
  void advance() {
    if (pos_ + 1 < t_.size()) ++pos_;
  }
  bool is_op(std::string_view op) const { return cur().type == TokenType::kOp && cur().text == op; }
  bool is_name(std::string_view n) const { return cur().type == TokenType::kName && cur().text == n; }

  Error fail(const std::string& what, std::size_t offset) const {
    return make_error(ErrorCode::kInvalidArgument, "chat template: " + what + " at " + map_.describe(offset));
  }
  Error unexpected() const {
    const Token& tok = cur();
    std::string desc;
    switch (tok.type) {
      case TokenType::kEnd:
        desc = "end of template";
        break;
      case TokenType::kBlockEnd:
        desc = "end of statement block";
        break;
      case TokenType::kVarEnd:
        desc = "end of print statement";
        break;
      default:
        desc = "'" + tok.text + "'";
    }
    return fail("unexpected " + desc, tok.offset);
  }
  Result<void> expect_op(std::string_view op);
  Result<std::string> expect_name();
  Result<void> expect_block_end();

  // Sets e's height from its children (whose heights are final) and refuses a
  // tree taller than kMaxExprHeight.
  Result<ExprPtr> sized(ExprPtr e) const;

  static ExprPtr node(ExprKind kind, std::size_t offset) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->offset = offset;
    return e;
  }

  // Statements ---------------------------------------------------------------

  Result<Body> parse_body(Ends ends, std::string* which, int depth);

  Result<StmtPtr> parse_statement(int depth);

  Result<void> parse_if(Stmt& s, int depth);

  Result<void> parse_targets(Stmt& s);

  Result<void> parse_for(Stmt& s, int depth);

  Result<void> parse_set(Stmt& s, int depth);

  Result<void> parse_macro(Stmt& s, int depth);

  // Expressions --------------------------------------------------------------

  bool is_tuple_end(Ends extra) const;

  Result<ExprPtr> parse_tuple(bool with_condexpr, bool explicit_parens, Ends extra);

  Result<ExprPtr> parse_expression(bool with_condexpr);

  Result<ExprPtr> parse_condexpr();

  Result<ExprPtr> binary(ExprPtr left, std::string op, ExprPtr right, std::size_t offset);

  Result<ExprPtr> parse_or();

  Result<ExprPtr> parse_and();

  Result<ExprPtr> parse_not();

  Result<ExprPtr> parse_compare();

  Result<ExprPtr> parse_math1();

  Result<ExprPtr> parse_concat();

  Result<ExprPtr> parse_math2();

  Result<ExprPtr> parse_pow();

  Result<ExprPtr> parse_unary(bool with_filter);

  Result<ExprPtr> parse_primary();
  Result<ExprPtr> parse_postfix(ExprPtr e);
  Result<ExprPtr> parse_subscript(ExprPtr e);
  Result<ExprPtr> parse_filter_expr(ExprPtr e);
  Result<void> parse_call_args(Expr& call);

  const std::vector<Token>& t_;
  SourceMap map_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace hearth::jinja::parser_detail
