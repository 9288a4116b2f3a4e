#include "engine/jinja/parser.h"

#include <algorithm>

#include "engine/jinja/filters.h"
#include "engine/jinja/parser_impl.h"

namespace hearth::jinja {
namespace parser_detail {

Result<Body> Parser::run() {
  std::string which;
  HEARTH_ASSIGN_OR_RETURN(Body body, parse_body({}, &which, 0));
  return body;
}

Result<Body> Parser::parse_body(Ends ends, std::string* which, int depth) {
  if (depth > kMaxNesting) return fail("blocks nested too deeply", cur().offset);
  Body body;
  while (true) {
    const Token& tok = cur();
    if (tok.type == TokenType::kEnd) {
      if (ends.size() == 0) return body;
      return fail("unexpected end of template, expected '" + std::string(*ends.begin()) + "'", tok.offset);
    }
    if (tok.type == TokenType::kData) {
      auto s = std::make_unique<Stmt>();
      s->kind = StmtKind::kText;
      s->offset = tok.offset;
      s->text = tok.text;
      body.push_back(std::move(s));
      advance();
    } else if (tok.type == TokenType::kVarBegin) {
      advance();
      auto s = std::make_unique<Stmt>();
      s->kind = StmtKind::kOutput;
      s->offset = tok.offset;
      HEARTH_ASSIGN_OR_RETURN(s->expr, parse_tuple(true, false, {}));
      if (cur().type != TokenType::kVarEnd) return unexpected();
      advance();
      body.push_back(std::move(s));
    } else if (tok.type == TokenType::kBlockBegin) {
      const Token& tag = peek();
      if (tag.type == TokenType::kName && std::find(ends.begin(), ends.end(), tag.text) != ends.end()) {
        *which = tag.text;
        pos_ += 2;
        return body;
      }
      advance();
      HEARTH_ASSIGN_OR_RETURN(StmtPtr s, parse_statement(depth));
      body.push_back(std::move(s));
    } else {
      return unexpected();
    }
  }
}

Result<StmtPtr> Parser::parse_statement(int depth) {
  const Token tag = cur();
  if (tag.type != TokenType::kName) return fail("expected a statement name", tag.offset);
  advance();
  auto s = std::make_unique<Stmt>();
  s->offset = tag.offset;
  const std::string& n = tag.text;
  if (n == "if") {
    HEARTH_TRY(parse_if(*s, depth));
  } else if (n == "for") {
    HEARTH_TRY(parse_for(*s, depth));
  } else if (n == "set") {
    HEARTH_TRY(parse_set(*s, depth));
  } else if (n == "macro") {
    HEARTH_TRY(parse_macro(*s, depth));
  } else if (n == "break" || n == "continue") {
    s->kind = n == "break" ? StmtKind::kBreak : StmtKind::kContinue;
    HEARTH_TRY(expect_block_end());
  } else if (n == "generation") {
    s->kind = StmtKind::kScope;
    HEARTH_TRY(expect_block_end());
    std::string which;
    HEARTH_ASSIGN_OR_RETURN(s->body, parse_body({"endgeneration"}, &which, depth + 1));
    HEARTH_TRY(expect_block_end());
  } else if (n.rfind("end", 0) == 0 || n == "else" || n == "elif") {
    return fail("unexpected '" + n + "'", tag.offset);
  } else {
    return fail("unsupported tag '" + n + "'", tag.offset);
  }
  return s;
}

Result<void> Parser::parse_if(Stmt& s, int depth) {
  s.kind = StmtKind::kIf;
  while (true) {
    HEARTH_ASSIGN_OR_RETURN(ExprPtr cond, parse_tuple(false, false, {}));
    HEARTH_TRY(expect_block_end());
    std::string which;
    HEARTH_ASSIGN_OR_RETURN(Body body, parse_body({"elif", "else", "endif"}, &which, depth + 1));
    s.branches.emplace_back(std::move(cond), std::move(body));
    if (which == "elif") continue;
    if (which == "else") {
      HEARTH_TRY(expect_block_end());
      HEARTH_ASSIGN_OR_RETURN(s.else_body, parse_body({"endif"}, &which, depth + 1));
    }
    return expect_block_end();
  }
}

Result<void> Parser::parse_targets(Stmt& s) {
  const bool paren = is_op("(");
  if (paren) advance();
  while (true) {
    HEARTH_ASSIGN_OR_RETURN(std::string n, expect_name());
    s.targets.push_back(std::move(n));
    if (!is_op(",")) break;
    advance();
  }
  if (paren) HEARTH_TRY(expect_op(")"));
  return {};
}

Result<void> Parser::parse_for(Stmt& s, int depth) {
  s.kind = StmtKind::kFor;
  HEARTH_TRY(parse_targets(s));
  if (!is_name("in")) return fail("expected 'in'", cur().offset);
  advance();
  HEARTH_ASSIGN_OR_RETURN(s.expr, parse_tuple(false, false, {"recursive"}));
  if (is_name("if")) {
    advance();
    HEARTH_ASSIGN_OR_RETURN(s.cond, parse_expression(true));
  }
  if (is_name("recursive")) return fail("unsupported construct 'recursive' loop", cur().offset);
  HEARTH_TRY(expect_block_end());
  std::string which;
  HEARTH_ASSIGN_OR_RETURN(s.body, parse_body({"else", "endfor"}, &which, depth + 1));
  if (which == "else") {
    HEARTH_TRY(expect_block_end());
    HEARTH_ASSIGN_OR_RETURN(s.else_body, parse_body({"endfor"}, &which, depth + 1));
  }
  return expect_block_end();
}

Result<void> Parser::parse_set(Stmt& s, int depth) {
  s.kind = StmtKind::kSet;
  if (cur().type == TokenType::kName && peek().type == TokenType::kOp && peek().text == ".") {
    s.targets.push_back(cur().text);
    pos_ += 2;
    HEARTH_ASSIGN_OR_RETURN(s.text, expect_name());
  } else {
    HEARTH_TRY(parse_targets(s));
  }
  if (is_op("=")) {
    advance();
    HEARTH_ASSIGN_OR_RETURN(s.expr, parse_tuple(true, false, {}));
    return expect_block_end();
  }
  if (is_op("|")) return fail("unsupported construct 'filtered block set'", cur().offset);
  if (!s.text.empty() || s.targets.size() != 1) return fail("block set needs one plain name", s.offset);
  s.kind = StmtKind::kSetBlock;
  HEARTH_TRY(expect_block_end());
  std::string which;
  HEARTH_ASSIGN_OR_RETURN(s.body, parse_body({"endset"}, &which, depth + 1));
  return expect_block_end();
}

Result<void> Parser::parse_macro(Stmt& s, int depth) {
  s.kind = StmtKind::kMacro;
  HEARTH_ASSIGN_OR_RETURN(s.text, expect_name());
  HEARTH_TRY(expect_op("("));
  while (!is_op(")")) {
    if (!s.params.empty()) HEARTH_TRY(expect_op(","));
    HEARTH_ASSIGN_OR_RETURN(std::string n, expect_name());
    ExprPtr def;
    if (is_op("=")) {
      advance();
      HEARTH_ASSIGN_OR_RETURN(def, parse_expression(true));
    }
    s.params.emplace_back(std::move(n), std::move(def));
  }
  advance();
  HEARTH_TRY(expect_block_end());
  std::string which;
  HEARTH_ASSIGN_OR_RETURN(s.body, parse_body({"endmacro"}, &which, depth + 1));
  if (cur().type == TokenType::kName && cur().text == s.text) advance();
  return expect_block_end();
}

}  // namespace parser_detail

Result<Body> parse_template(const std::vector<Token>& tokens, std::string_view source) {
  return parser_detail::Parser(tokens, source).run();
}

}  // namespace hearth::jinja
