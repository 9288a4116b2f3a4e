// The syntax tree of a parsed chat template. Immutable after parsing: a
// ChatTemplate renders it concurrently from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/jinja/value.h"

namespace hearth::jinja {

enum class ExprKind : std::uint8_t {
  kConst,     // value
  kName,      // name
  kGetattr,   // args[0].name
  kGetitem,   // args[0][args[1]]
  kSlice,     // args[0][args[1]:args[2]:args[3]]; a null arg is an omitted bound
  kCall,      // args[0](args[1..], kwargs)
  kFilter,    // args[0] | name(args[1..], kwargs)
  kTest,      // args[0] is [not] name(args[1..]); negated
  kUnary,     // op: "-", "+", "not"
  kBinary,    // op: + - * / // % ** ~ and or
  kCompare,   // args[0] ops[i] args[i+1] ... (chained)
  kCondExpr,  // args[1] if args[0] else args[2] (args[2] may be null)
  kList,
  kTuple,
  kDict,  // args alternate key, value
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::kConst;
  std::size_t offset = 0;  // into the normalized source, for messages
  std::string name;        // name / attribute / filter / test / operator
  Value value;             // kConst
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;  // kCompare operators
  bool negated = false;          // kTest
  std::uint32_t height = 1;      // 1 + the tallest child: the evaluator's recursion depth for this node
};

enum class StmtKind : std::uint8_t {
  kText,      // text
  kOutput,    // {{ expr }}
  kIf,        // branches (cond, body); else_body
  kFor,       // targets in expr [if cond]: body; else_body
  kSet,       // targets (or ns.attr in attr) = expr
  kSetBlock,  // targets = rendered body
  kMacro,     // name(params = defaults): body
  kBreak,
  kContinue,
  kScope,  // a body rendered as is ({% generation %})
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind = StmtKind::kText;
  std::size_t offset = 0;
  std::string text;                                // kText; kMacro name; kSet namespace attribute (ns.attr)
  std::vector<std::string> targets;                // kFor / kSet names (several: tuple unpacking)
  ExprPtr expr;                                    // kOutput, kFor iterable, kSet value
  ExprPtr cond;                                    // kFor filter
  std::vector<std::pair<ExprPtr, Body>> branches;  // kIf
  Body body;
  Body else_body;
  std::vector<std::pair<std::string, ExprPtr>> params;  // kMacro; null default = required
};

}  // namespace hearth::jinja
