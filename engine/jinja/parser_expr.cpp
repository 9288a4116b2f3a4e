// Expression parsing: jinja2's precedence climbing, postfix subscripts and
// calls, filters and tests.
#include <algorithm>

#include "engine/jinja/filters.h"
#include "engine/jinja/parser_impl.h"

namespace hearth::jinja::parser_detail {

Result<ExprPtr> Parser::sized(ExprPtr e) const {
  std::uint32_t h = 0;
  for (const auto& a : e->args) {
    if (a) h = std::max(h, a->height);
  }
  for (const auto& [k, a] : e->kwargs) h = std::max(h, a->height);
  e->height = h + 1;
  if (e->height > kMaxExprHeight) {
    return fail("expression nested too deeply (taller than " + std::to_string(kMaxExprHeight) + " levels)", e->offset);
  }
  return e;
}

Result<void> Parser::expect_op(std::string_view op) {
  if (!is_op(op)) return fail("expected '" + std::string(op) + "'", cur().offset);
  advance();
  return {};
}

Result<std::string> Parser::expect_name() {
  if (cur().type != TokenType::kName) return fail("expected a name", cur().offset);
  std::string n = cur().text;
  advance();
  return n;
}

Result<void> Parser::expect_block_end() {
  if (cur().type != TokenType::kBlockEnd) return unexpected();
  advance();
  return {};
}

bool Parser::is_tuple_end(Ends extra) const {
  const Token& tok = cur();
  if (tok.type == TokenType::kVarEnd || tok.type == TokenType::kBlockEnd || tok.type == TokenType::kEnd) return true;
  if (tok.type == TokenType::kOp && tok.text == ")") return true;
  return tok.type == TokenType::kName && std::find(extra.begin(), extra.end(), tok.text) != extra.end();
}

Result<ExprPtr> Parser::parse_tuple(bool with_condexpr, bool explicit_parens, Ends extra) {
  const std::size_t offset = cur().offset;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) HEARTH_TRY(expect_op(","));
    if (is_tuple_end(extra)) break;
    HEARTH_ASSIGN_OR_RETURN(ExprPtr e, parse_expression(with_condexpr));
    items.push_back(std::move(e));
    if (!is_op(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) return unexpected();
  }
  auto t = node(ExprKind::kTuple, offset);
  t->args = std::move(items);
  return sized(std::move(t));
}

Result<ExprPtr> Parser::parse_expression(bool with_condexpr) {
  if (++depth_ > kMaxNesting) return fail("expression nested too deeply", cur().offset);
  auto r = with_condexpr ? parse_condexpr() : parse_or();
  --depth_;
  return r;
}

Result<ExprPtr> Parser::parse_condexpr() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr expr, parse_or());
  while (is_name("if")) {
    const std::size_t offset = cur().offset;
    advance();
    auto c = node(ExprKind::kCondExpr, offset);
    HEARTH_ASSIGN_OR_RETURN(ExprPtr test, parse_or());
    ExprPtr other;
    if (is_name("else")) {
      advance();
      HEARTH_ASSIGN_OR_RETURN(other, parse_expression(true));
    }
    c->args.push_back(std::move(test));
    c->args.push_back(std::move(expr));
    c->args.push_back(std::move(other));
    HEARTH_ASSIGN_OR_RETURN(expr, sized(std::move(c)));
  }
  return expr;
}

Result<ExprPtr> Parser::binary(ExprPtr left, std::string op, ExprPtr right, std::size_t offset) {
  auto b = node(ExprKind::kBinary, offset);
  b->name = std::move(op);
  b->args.push_back(std::move(left));
  b->args.push_back(std::move(right));
  return sized(std::move(b));
}

Result<ExprPtr> Parser::parse_or() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
  while (is_name("or")) {
    const std::size_t offset = cur().offset;
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
    HEARTH_ASSIGN_OR_RETURN(left, binary(std::move(left), "or", std::move(right), offset));
  }
  return left;
}

Result<ExprPtr> Parser::parse_and() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
  while (is_name("and")) {
    const std::size_t offset = cur().offset;
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
    HEARTH_ASSIGN_OR_RETURN(left, binary(std::move(left), "and", std::move(right), offset));
  }
  return left;
}

Result<ExprPtr> Parser::parse_not() {
  if (is_name("not")) {
    const std::size_t offset = cur().offset;
    advance();
    if (++depth_ > kMaxNesting) return fail("expression nested too deeply", offset);
    HEARTH_ASSIGN_OR_RETURN(ExprPtr inner, parse_not());
    --depth_;
    auto u = node(ExprKind::kUnary, offset);
    u->name = "not";
    u->args.push_back(std::move(inner));
    return sized(std::move(u));
  }
  return parse_compare();
}

Result<ExprPtr> Parser::parse_compare() {
  const std::size_t offset = cur().offset;
  HEARTH_ASSIGN_OR_RETURN(ExprPtr first, parse_math1());
  auto cmp = node(ExprKind::kCompare, offset);
  cmp->args.push_back(std::move(first));
  while (true) {
    std::string op;
    if (cur().type == TokenType::kOp && (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
                                         cur().text == "<=" || cur().text == ">" || cur().text == ">=")) {
      op = cur().text;
      advance();
    } else if (is_name("in")) {
      op = "in";
      advance();
    } else if (is_name("not") && peek().type == TokenType::kName && peek().text == "in") {
      op = "notin";
      pos_ += 2;
    } else {
      break;
    }
    HEARTH_ASSIGN_OR_RETURN(ExprPtr rhs, parse_math1());
    cmp->ops.push_back(std::move(op));
    cmp->args.push_back(std::move(rhs));
  }
  if (cmp->ops.empty()) return std::move(cmp->args[0]);
  return sized(std::move(cmp));
}

Result<ExprPtr> Parser::parse_math1() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_concat());
  while (is_op("+") || is_op("-")) {
    const Token op = cur();
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_concat());
    HEARTH_ASSIGN_OR_RETURN(left, binary(std::move(left), op.text, std::move(right), op.offset));
  }
  return left;
}

Result<ExprPtr> Parser::parse_concat() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_math2());
  while (is_op("~")) {
    const Token op = cur();
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_math2());
    HEARTH_ASSIGN_OR_RETURN(left, binary(std::move(left), "~", std::move(right), op.offset));
  }
  return left;
}

Result<ExprPtr> Parser::parse_math2() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_pow());
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token op = cur();
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_pow());
    HEARTH_ASSIGN_OR_RETURN(left, binary(std::move(left), op.text, std::move(right), op.offset));
  }
  return left;
}

Result<ExprPtr> Parser::parse_pow() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_unary(true));
  while (is_op("**")) {
    const Token op = cur();
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_unary(true));
    HEARTH_ASSIGN_OR_RETURN(left, binary(std::move(left), "**", std::move(right), op.offset));
  }
  return left;
}

Result<ExprPtr> Parser::parse_unary(bool with_filter) {
  if (++depth_ > kMaxNesting) return fail("expression nested too deeply", cur().offset);
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    auto u = node(ExprKind::kUnary, cur().offset);
    u->name = cur().text;
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr inner, parse_unary(false));
    u->args.push_back(std::move(inner));
    HEARTH_ASSIGN_OR_RETURN(e, sized(std::move(u)));
  } else {
    HEARTH_ASSIGN_OR_RETURN(e, parse_primary());
  }
  HEARTH_ASSIGN_OR_RETURN(e, parse_postfix(std::move(e)));
  if (with_filter) {
    HEARTH_ASSIGN_OR_RETURN(e, parse_filter_expr(std::move(e)));
  }
  --depth_;
  return e;
}

Result<ExprPtr> Parser::parse_primary() {
  const Token tok = cur();
  if (tok.type == TokenType::kName) {
    advance();
    auto e = node(ExprKind::kConst, tok.offset);
    if (tok.text == "true" || tok.text == "True") {
      e->value = Value(true);
    } else if (tok.text == "false" || tok.text == "False") {
      e->value = Value(false);
    } else if (tok.text == "none" || tok.text == "None") {
      e->value = Value::none();
    } else {
      e->kind = ExprKind::kName;
      e->name = tok.text;
    }
    return e;
  }
  if (tok.type == TokenType::kString) {
    std::string s;
    while (cur().type == TokenType::kString) {  // adjacent literals concatenate
      s += cur().text;
      advance();
    }
    auto e = node(ExprKind::kConst, tok.offset);
    e->value = Value(std::move(s));
    return e;
  }
  if (tok.type == TokenType::kInt || tok.type == TokenType::kFloat) {
    advance();
    auto e = node(ExprKind::kConst, tok.offset);
    e->value = tok.type == TokenType::kInt ? Value(tok.int_value) : Value(tok.float_value);
    return e;
  }
  if (is_op("(")) {
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr e, parse_tuple(true, true, {}));
    HEARTH_TRY(expect_op(")"));
    return e;
  }
  if (is_op("[") || is_op("{")) {
    const bool is_list = is_op("[");
    const std::string close = is_list ? "]" : "}";
    auto e = node(is_list ? ExprKind::kList : ExprKind::kDict, tok.offset);
    advance();
    while (!is_op(close)) {
      if (!e->args.empty()) {
        HEARTH_TRY(expect_op(","));
        if (is_op(close)) break;
      }
      HEARTH_ASSIGN_OR_RETURN(ExprPtr item, parse_expression(true));
      e->args.push_back(std::move(item));
      if (!is_list) {
        HEARTH_TRY(expect_op(":"));
        HEARTH_ASSIGN_OR_RETURN(ExprPtr val, parse_expression(true));
        e->args.push_back(std::move(val));
      }
    }
    advance();
    return sized(std::move(e));
  }
  return unexpected();
}

Result<ExprPtr> Parser::parse_postfix(ExprPtr e) {
  while (true) {
    if (is_op(".") || is_op("[")) {
      HEARTH_ASSIGN_OR_RETURN(e, parse_subscript(std::move(e)));
    } else if (is_op("(")) {
      auto call = node(ExprKind::kCall, cur().offset);
      call->args.push_back(std::move(e));
      HEARTH_TRY(parse_call_args(*call));
      HEARTH_ASSIGN_OR_RETURN(e, sized(std::move(call)));
    } else {
      return e;
    }
  }
}

Result<ExprPtr> Parser::parse_subscript(ExprPtr e) {
  const Token tok = cur();
  advance();
  if (tok.text == ".") {
    if (cur().type == TokenType::kName) {
      auto g = node(ExprKind::kGetattr, tok.offset);
      g->name = cur().text;
      advance();
      g->args.push_back(std::move(e));
      return sized(std::move(g));
    }
    if (cur().type != TokenType::kInt) return fail("expected an attribute name", cur().offset);
    auto g = node(ExprKind::kGetitem, tok.offset);
    auto idx = node(ExprKind::kConst, cur().offset);
    idx->value = Value(cur().int_value);
    advance();
    g->args.push_back(std::move(e));
    g->args.push_back(std::move(idx));
    return sized(std::move(g));
  }
  // '[': an index or a slice start:stop:step, each part optional.
  ExprPtr parts[3];
  bool is_slice = false;
  for (int i = 0; i < 3; ++i) {
    if (!is_op(":") && !is_op("]")) {
      HEARTH_ASSIGN_OR_RETURN(parts[i], parse_expression(true));
    }
    if (!is_op(":")) break;
    is_slice = true;
    advance();
  }
  if (is_op(",")) return fail("unsupported construct 'tuple subscript'", cur().offset);
  HEARTH_TRY(expect_op("]"));
  auto g = node(is_slice ? ExprKind::kSlice : ExprKind::kGetitem, tok.offset);
  g->args.push_back(std::move(e));
  if (!is_slice && !parts[0]) return fail("expected an index", tok.offset);
  for (int i = 0; i < (is_slice ? 3 : 1); ++i) g->args.push_back(std::move(parts[i]));
  return sized(std::move(g));
}

Result<void> Parser::parse_call_args(Expr& call) {
  HEARTH_TRY(expect_op("("));
  bool first = true;
  while (!is_op(")")) {
    if (!first) {
      HEARTH_TRY(expect_op(","));
      if (is_op(")")) break;
    }
    first = false;
    if (is_op("*") || is_op("**")) return fail("unsupported construct '*args' in a call", cur().offset);
    if (cur().type == TokenType::kName && peek().type == TokenType::kOp && peek().text == "=") {
      std::string key = cur().text;
      pos_ += 2;
      HEARTH_ASSIGN_OR_RETURN(ExprPtr v, parse_expression(true));
      call.kwargs.emplace_back(std::move(key), std::move(v));
    } else {
      if (!call.kwargs.empty()) return fail("positional argument after keyword argument", cur().offset);
      HEARTH_ASSIGN_OR_RETURN(ExprPtr v, parse_expression(true));
      call.args.push_back(std::move(v));
    }
  }
  advance();
  return {};
}

Result<ExprPtr> Parser::parse_filter_expr(ExprPtr e) {
  while (true) {
    if (is_op("|")) {
      advance();
      const std::size_t offset = cur().offset;
      HEARTH_ASSIGN_OR_RETURN(std::string n, expect_name());
      if (!is_known_filter(n)) return fail("unsupported filter '" + n + "'", offset);
      auto f = node(ExprKind::kFilter, offset);
      f->name = std::move(n);
      f->args.push_back(std::move(e));
      if (is_op("(")) HEARTH_TRY(parse_call_args(*f));
      HEARTH_ASSIGN_OR_RETURN(e, sized(std::move(f)));
    } else if (is_name("is")) {
      advance();
      auto t = node(ExprKind::kTest, cur().offset);
      if (is_name("not")) {
        t->negated = true;
        advance();
      }
      const std::size_t offset = cur().offset;
      HEARTH_ASSIGN_OR_RETURN(t->name, expect_name());
      if (!is_known_test(t->name)) return fail("unsupported test '" + t->name + "'", offset);
      t->args.push_back(std::move(e));
      if (is_op("(")) {
        HEARTH_TRY(parse_call_args(*t));
      } else if ((cur().type == TokenType::kName || cur().type == TokenType::kString || cur().type == TokenType::kInt ||
                  cur().type == TokenType::kFloat || is_op("(") || is_op("[") || is_op("{")) &&
                 !is_name("else") && !is_name("or") && !is_name("and")) {
        if (is_name("is")) return fail("cannot chain multiple tests with 'is'", cur().offset);
        HEARTH_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary());
        HEARTH_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
        t->args.push_back(std::move(arg));
      }
      HEARTH_ASSIGN_OR_RETURN(e, sized(std::move(t)));
    } else if (is_op("(")) {
      auto call = node(ExprKind::kCall, cur().offset);
      call->args.push_back(std::move(e));
      HEARTH_TRY(parse_call_args(*call));
      HEARTH_ASSIGN_OR_RETURN(e, sized(std::move(call)));
    } else {
      return e;
    }
  }
}

}  // namespace hearth::jinja::parser_detail
