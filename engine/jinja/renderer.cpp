#include "engine/jinja/renderer.h"

#include <algorithm>
#include <new>
#include <stdexcept>

#include "engine/jinja/builtins.h"
#include "engine/jinja/filters.h"
#include "engine/jinja/lexer.h"
#include "engine/jinja/operations.h"

namespace hearth::jinja {
namespace {

struct Scope {
  Scope* parent = nullptr;
  std::vector<std::pair<std::string, Value>> vars;

  const Value* find(std::string_view name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      for (const auto& [k, v] : s->vars) {
        if (k == name) return &v;
      }
    }
    return nullptr;
  }
  void set(const std::string& name, Value v) {
    for (auto& [k, old] : vars) {
      if (k == name) {
        old = std::move(v);
        return;
      }
    }
    vars.emplace_back(name, std::move(v));
  }
};

enum class Flow { kNormal, kBreak, kContinue };

// Releases the level of nesting Renderer::enter() took, on every return path.
struct DepthGuard {
  int& depth;
  ~DepthGuard() { --depth; }
};

class Renderer {
 public:
  Renderer(const Value& variables, std::string_view source, const RenderLimits& limits)
      : vars_(variables), map_(source), limits_(limits), deadline_(Clock::now() + limits.deadline) {
    install_builtins();
  }
  ~Renderer() { break_cycles(); }

  Result<std::string> run(const Body& body) {
    std::string out;
    HEARTH_ASSIGN_OR_RETURN(Flow f, exec_body(body, root_, out));
    (void)f;
    return out;
  }

 private:
  void install_builtins();
  Result<Value> call_macro(const Stmt& macro, const CallArgs& args);

  // Adds the position to an error raised by the interpreter (not by raise_exception).
  Error at(Error e, std::size_t offset) const {
    if (raised_ || positioned_) return e;
    positioned_ = true;
    e.message = "chat template: " + e.message + " at " + map_.describe(offset);
    return e;
  }

  // "chat template: <what> exceeded the limit <name> = <limit> at line L, column C".
  Error limit_error(std::string_view what, std::string_view name, std::uint64_t limit, std::size_t offset) const {
    positioned_ = true;
    return make_error(ErrorCode::kOutOfMemory, "chat template: " + std::string(what) + " exceeded the limit " +
                                                   std::string(name) + " = " + std::to_string(limit) + " at " +
                                                   map_.describe(offset));
  }

  Result<void> append(std::string& out, std::string_view s, std::size_t offset) {
    total_output_ += s.size();
    if (total_output_ > limits_.max_output_bytes) {
      return limit_error("output bytes", "max_output_bytes", limits_.max_output_bytes, offset);
    }
    out += s;
    return {};
  }

  // One unit of work and one level of nesting (released by the caller's
  // DepthGuard). Every 256 steps the clock and the cancel flag are read too.
  Result<void> enter(std::size_t offset) {
    if (++depth_ > limits_.max_depth) {
      return limit_error("evaluation nesting", "max_depth", static_cast<std::uint64_t>(limits_.max_depth), offset);
    }
    if (++steps_ > limits_.max_steps) return limit_error("evaluation steps", "max_steps", limits_.max_steps, offset);
    if ((steps_ & 255u) != 0) return {};
    if (limits_.cancel != nullptr && limits_.cancel->load(std::memory_order_relaxed)) {
      positioned_ = true;
      return make_error(ErrorCode::kCancelled, "chat template: render cancelled at " + map_.describe(offset));
    }
    if (Clock::now() > deadline_) {
      return limit_error("wall-clock time (ms)", "deadline", static_cast<std::uint64_t>(limits_.deadline.count()),
                         offset);
    }
    return {};
  }

  // Bytes a '+' or '*' of lists or strings would build (0 for anything
  // else), as a double so that a huge repeat count cannot wrap.
  static double result_bytes(std::string_view op, const Value& a, const Value& b) {
    const auto size = [](const Value& v) {  // a list's copy copies its strings' bytes too
      if (v.is_string()) return static_cast<double>(v.as_string().size());
      double bytes = 0;
      for (const Value& item : v.items()) {
        bytes +=
            static_cast<double>(sizeof(Value)) + (item.is_string() ? static_cast<double>(item.as_string().size()) : 0);
      }
      return bytes;
    };
    const auto sequence = [](const Value& v) { return v.is_string() || v.is_list(); };
    if (op == "+" && sequence(a) && sequence(b) && a.is_string() == b.is_string()) return size(a) + size(b);
    if (op != "*") return 0;
    const Value* seq = sequence(a) ? &a : sequence(b) ? &b : nullptr;
    const Value& times = seq == &a ? b : a;
    if (seq == nullptr || !(times.is_int() || times.is_bool())) return 0;
    return size(*seq) * static_cast<double>(std::max<std::int64_t>(0, times.as_int()));
  }

  // An operation about to build `bytes`: refused before it copies anything
  // when the render's budget cannot take them (copying a large list can take
  // longer than the deadline, which is only checked between steps).
  Result<void> can_build(double bytes, std::size_t offset) {
    if (static_cast<double>(allocated_) + bytes > static_cast<double>(limits_.max_allocated_bytes)) {
      return limit_error("bytes built by values", "max_allocated_bytes", limits_.max_allocated_bytes, offset);
    }
    return {};
  }

  // Counts a value an operation just built against the per-value caps, the
  // nesting cap and the bytes built over the render (a superset of the bytes
  // held at any time, so it bounds memory without tracking frees).
  Result<void> charge(const Value& v, std::size_t offset) {
    std::size_t bytes = 0;
    if (v.is_string()) {
      bytes = v.as_string().size();
      if (bytes > kMaxValueBytes) return limit_error("one string's bytes", "kMaxValueBytes", kMaxValueBytes, offset);
    } else if (v.is_list() || v.kind() == Value::Kind::kDict) {
      const std::size_t n = v.is_list() ? v.items().size() : v.dict_value().entries.size();
      if (n > kMaxValueItems) return limit_error("one container's items", "kMaxValueItems", kMaxValueItems, offset);
      bytes = n * sizeof(Value) * (v.is_list() ? 1 : 2);
      if (v.depth() > limits_.max_value_depth) {
        return limit_error("value nesting", "max_value_depth", limits_.max_value_depth, offset);
      }
    }
    allocated_ += bytes;
    if (allocated_ > limits_.max_allocated_bytes) {
      return limit_error("bytes built by values", "max_allocated_bytes", limits_.max_allocated_bytes, offset);
    }
    return {};
  }

  // Namespaces are the only mutable values, so the only way to a reference
  // cycle; set_attribute refuses one, and this clears every namespace at the
  // end as a second line, so no cycle outlives the render.
  void break_cycles() {
    std::vector<Value> entries;
    for (Value& ns : namespaces_) ns.take_entries(entries);
    entries.clear();
    namespaces_.clear();
  }

  Result<Value> lookup(const std::string& name, const Scope& scope) const {
    if (const Value* v = scope.find(name)) return *v;
    if (const Value* v = vars_.get(name)) return *v;
    for (const auto& [k, v] : builtins_) {
      if (k == name) return v;
    }
    return Value();
  }

  Result<Flow> exec_body(const Body& body, Scope& scope, std::string& out) {
    for (const auto& stmt : body) {
      HEARTH_ASSIGN_OR_RETURN(Flow f, exec(*stmt, scope, out));
      if (f != Flow::kNormal) return f;
    }
    return Flow::kNormal;
  }

  Result<Value> eval_at(const Expr& e, Scope& scope) {
    auto r = eval(e, scope);
    if (!r) return at(std::move(r).error(), e.offset);
    return r;
  }

  Result<Flow> exec(const Stmt& s, Scope& scope, std::string& out) {
    DepthGuard guard{depth_};
    HEARTH_TRY(enter(s.offset));
    return exec_stmt(s, scope, out);
  }
  Result<Flow> exec_stmt(const Stmt& s, Scope& scope, std::string& out);
  Result<Flow> exec_for(const Stmt& s, Scope& scope, std::string& out);
  Result<void> bind(const std::vector<std::string>& targets, const Value& v, Scope& scope);
  Result<void> exec_set(const Stmt& s, Scope& scope);
  Result<Value> eval(const Expr& e, Scope& scope) {
    DepthGuard guard{depth_};
    HEARTH_TRY(enter(e.offset));
    HEARTH_ASSIGN_OR_RETURN(Value v, eval_node(e, scope));
    if (builds_value(e.kind)) HEARTH_TRY(charge(v, e.offset));
    return v;
  }
  // Kinds that make a new value (the others look one up or pass it on).
  static bool builds_value(ExprKind k) {
    return k == ExprKind::kBinary || k == ExprKind::kFilter || k == ExprKind::kCall || k == ExprKind::kList ||
           k == ExprKind::kTuple || k == ExprKind::kDict || k == ExprKind::kSlice;
  }
  Result<Value> eval_node(const Expr& e, Scope& scope);
  Result<Value> eval_call(const Expr& e, Scope& scope);
  Result<Value> eval_compare(const Expr& e, Scope& scope);
  Result<CallArgs> eval_args(const Expr& e, Scope& scope, std::size_t first);

  using Clock = std::chrono::steady_clock;

  const Value& vars_;
  SourceMap map_;
  RenderLimits limits_;
  Clock::time_point deadline_;
  Scope root_;
  std::vector<std::pair<std::string, Value>> builtins_;
  std::vector<Value> namespaces_;  // every namespace() of this render (see break_cycles)
  std::size_t total_output_ = 0;
  std::size_t iterations_ = 0;
  std::size_t allocated_ = 0;
  std::uint64_t steps_ = 0;
  int depth_ = 0;
  int call_depth_ = 0;
  bool raised_ = false;
  mutable bool positioned_ = false;
};

void Renderer::install_builtins() {
  builtins_.emplace_back("range", Value::function("range", make_range));
  builtins_.emplace_back(
      "namespace", Value::function("namespace", [this](const CallArgs& a) { return make_namespace(a, namespaces_); }));
  builtins_.emplace_back("dict", Value::function("dict", [](const CallArgs& a) -> Result<Value> {
                           Value d = Value::dict();
                           for (const auto& [k, v] : a.kwargs) d.set(Value(k), v);
                           return d;
                         }));
  builtins_.emplace_back("strftime_now", Value::function("strftime_now", strftime_now));
  builtins_.emplace_back("raise_exception",
                         Value::function("raise_exception", [this](const CallArgs& a) -> Result<Value> {
                           raised_ = true;
                           return make_error(ErrorCode::kInvalidArgument, a.args.empty() ? "" : a.args[0].str());
                         }));
}

Result<Flow> Renderer::exec_stmt(const Stmt& s, Scope& scope, std::string& out) {
  switch (s.kind) {
    case StmtKind::kText:
      HEARTH_TRY(append(out, s.text, s.offset));
      return Flow::kNormal;
    case StmtKind::kOutput: {
      HEARTH_ASSIGN_OR_RETURN(Value v, eval_at(*s.expr, scope));
      HEARTH_TRY(append(out, v.str(), s.offset));
      return Flow::kNormal;
    }
    case StmtKind::kIf:
      for (const auto& [cond, body] : s.branches) {
        HEARTH_ASSIGN_OR_RETURN(Value c, eval_at(*cond, scope));
        if (c.truthy()) return exec_body(body, scope, out);
      }
      return exec_body(s.else_body, scope, out);
    case StmtKind::kFor:
      return exec_for(s, scope, out);
    case StmtKind::kSet:
      HEARTH_TRY(exec_set(s, scope));
      return Flow::kNormal;
    case StmtKind::kSetBlock: {
      std::string captured;
      HEARTH_ASSIGN_OR_RETURN(Flow f, exec_body(s.body, scope, captured));
      (void)f;
      Value text(std::move(captured));
      HEARTH_TRY(charge(text, s.offset));
      scope.set(s.targets[0], std::move(text));
      return Flow::kNormal;
    }
    case StmtKind::kMacro: {
      const Stmt* macro = &s;
      scope.set(s.text, Value::function(s.text, [this, macro](const CallArgs& a) { return call_macro(*macro, a); }));
      return Flow::kNormal;
    }
    case StmtKind::kBreak:
      return Flow::kBreak;
    case StmtKind::kContinue:
      return Flow::kContinue;
    case StmtKind::kScope:
      return exec_body(s.body, scope, out);
  }
  return Flow::kNormal;
}

Result<void> Renderer::bind(const std::vector<std::string>& targets, const Value& v, Scope& scope) {
  if (targets.size() == 1) {
    scope.set(targets[0], v);
    return {};
  }
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> parts, iterate(v));
  if (v.is_undefined() || parts.size() != targets.size()) {
    return make_error(ErrorCode::kInvalidArgument, "cannot unpack " + std::to_string(parts.size()) + " values into " +
                                                       std::to_string(targets.size()) + " names");
  }
  for (std::size_t i = 0; i < targets.size(); ++i) scope.set(targets[i], parts[i]);
  return {};
}

Value loop_object(std::size_t i, const std::vector<Value>& items) {
  const auto n = static_cast<std::int64_t>(items.size());
  const auto idx = static_cast<std::int64_t>(i);
  Value loop = Value::dict({{"index", Value(idx + 1)},
                            {"index0", Value(idx)},
                            {"revindex", Value(n - idx)},
                            {"revindex0", Value(n - idx - 1)},
                            {"first", Value(idx == 0)},
                            {"last", Value(idx == n - 1)},
                            {"length", Value(n)},
                            {"depth", Value(1)},
                            {"depth0", Value(0)}});
  if (i > 0) loop.set(Value("previtem"), items[i - 1]);
  if (idx + 1 < n) loop.set(Value("nextitem"), items[i + 1]);
  loop.set(Value("cycle"), Value::function("cycle", [idx](const CallArgs& a) -> Result<Value> {
             if (a.args.empty()) return make_error(ErrorCode::kInvalidArgument, "no items for cycling given");
             return a.args[static_cast<std::size_t>(idx) % a.args.size()];
           }));
  return loop;
}

Result<Flow> Renderer::exec_for(const Stmt& s, Scope& scope, std::string& out) {
  HEARTH_ASSIGN_OR_RETURN(Value iterable, eval_at(*s.expr, scope));
  auto listed = iterate(iterable);
  if (!listed) return at(std::move(listed).error(), s.expr->offset);
  std::vector<Value> items = std::move(listed).value();
  Scope inner{&scope, {}};
  if (s.cond) {  // `for x in xs if cond`: filtered before the loop, so loop.length counts kept items
    std::vector<Value> kept;
    for (auto& item : items) {
      HEARTH_TRY(bind(s.targets, item, inner));
      HEARTH_ASSIGN_OR_RETURN(Value c, eval_at(*s.cond, inner));
      if (c.truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (++iterations_ > limits_.max_loop_iterations) {
      return limit_error("loop iterations", "max_loop_iterations", limits_.max_loop_iterations, s.offset);
    }
    auto bound = bind(s.targets, items[i], inner);
    if (!bound) return at(std::move(bound).error(), s.offset);
    inner.set("loop", loop_object(i, items));
    HEARTH_ASSIGN_OR_RETURN(Flow f, exec_body(s.body, inner, out));
    if (f == Flow::kBreak) break;
  }
  if (items.empty()) {
    Scope else_scope{&scope, {}};
    HEARTH_ASSIGN_OR_RETURN(Flow f, exec_body(s.else_body, else_scope, out));
    (void)f;
  }
  return Flow::kNormal;
}

Result<void> Renderer::exec_set(const Stmt& s, Scope& scope) {
  HEARTH_ASSIGN_OR_RETURN(Value v, eval_at(*s.expr, scope));
  if (s.text.empty()) {
    auto r = bind(s.targets, v, scope);
    if (!r) return at(std::move(r).error(), s.offset);
    return {};
  }
  HEARTH_ASSIGN_OR_RETURN(Value ns, lookup(s.targets[0], scope));
  if (!ns.is_namespace()) {
    return at(make_error(ErrorCode::kInvalidArgument, "cannot assign attribute on non-namespace object"), s.offset);
  }
  // A namespace inside a namespace attribute is the one way to build a cycle
  // (lists and dicts are immutable); jinja2 allows it, no chat template needs it.
  if (v.holds_namespace()) {
    return at(make_error(ErrorCode::kUnsupported, "unsupported construct: a namespace stored in a namespace"),
              s.offset);
  }
  if (v.depth() + 1 > limits_.max_value_depth) {
    return limit_error("value nesting", "max_value_depth", limits_.max_value_depth, s.offset);
  }
  ns.set(Value(s.text), std::move(v));
  return {};
}

Result<Value> Renderer::call_macro(const Stmt& macro, const CallArgs& args) {
  if (call_depth_ >= limits_.max_call_depth) {
    return limit_error(
        "nesting of macro calls (macro calls nested deeper than " + std::to_string(limits_.max_call_depth) + ")",
        "max_call_depth", static_cast<std::uint64_t>(limits_.max_call_depth), macro.offset);
  }
  if (args.args.size() > macro.params.size()) {
    return make_error(ErrorCode::kInvalidArgument, "macro '" + macro.text + "' takes not more than " +
                                                       std::to_string(macro.params.size()) + " argument(s)");
  }
  Scope ms{&root_, {}};
  for (std::size_t i = 0; i < macro.params.size(); ++i) {
    const auto& [name, def] = macro.params[i];
    if (i < args.args.size()) {
      ms.set(name, args.args[i]);
    } else if (const Value* kw = args.kwarg(name)) {
      ms.set(name, *kw);
    } else if (def) {
      HEARTH_ASSIGN_OR_RETURN(Value d, eval_at(*def, ms));
      ms.set(name, std::move(d));
    } else {
      ms.set(name, Value());
    }
  }
  for (const auto& [k, v] : args.kwargs) {
    bool known = false;
    for (const auto& p : macro.params) known = known || p.first == k;
    if (!known)
      return make_error(ErrorCode::kInvalidArgument, "macro '" + macro.text + "' has no argument '" + k + "'");
  }
  ++call_depth_;
  std::string out;
  auto r = exec_body(macro.body, ms, out);
  --call_depth_;
  if (!r) return std::move(r).error();
  return Value(std::move(out));
}

Result<CallArgs> Renderer::eval_args(const Expr& e, Scope& scope, std::size_t first) {
  CallArgs a;
  for (std::size_t i = first; i < e.args.size(); ++i) {
    HEARTH_ASSIGN_OR_RETURN(Value v, eval(*e.args[i], scope));
    a.args.push_back(std::move(v));
  }
  for (const auto& [k, ex] : e.kwargs) {
    HEARTH_ASSIGN_OR_RETURN(Value v, eval(*ex, scope));
    a.kwargs.emplace_back(k, std::move(v));
  }
  return a;
}

Result<Value> Renderer::eval_call(const Expr& e, Scope& scope) {
  const Expr& callee = *e.args[0];
  Value fn;
  if (callee.kind == ExprKind::kGetattr) {
    HEARTH_ASSIGN_OR_RETURN(Value obj, eval(*callee.args[0], scope));
    if (has_method(obj, callee.name)) {
      HEARTH_ASSIGN_OR_RETURN(CallArgs a, eval_args(e, scope, 1));
      return call_method(obj, callee.name, a);
    }
    HEARTH_ASSIGN_OR_RETURN(fn, get_attr(obj, callee.name));
  } else {
    HEARTH_ASSIGN_OR_RETURN(fn, eval(callee, scope));
  }
  if (fn.is_undefined()) {
    const std::string what =
        callee.kind == ExprKind::kName || callee.kind == ExprKind::kGetattr ? callee.name : "value";
    return undefined_error("'" + what + "' is undefined and cannot be called");
  }
  if (!fn.is_callable())
    return make_error(ErrorCode::kInvalidArgument, std::string("'") + fn.type_name() + "' object is not callable");
  HEARTH_ASSIGN_OR_RETURN(CallArgs a, eval_args(e, scope, 1));
  return fn.callable().fn(a);
}

Result<Value> Renderer::eval_compare(const Expr& e, Scope& scope) {
  HEARTH_ASSIGN_OR_RETURN(Value left, eval(*e.args[0], scope));
  for (std::size_t i = 0; i < e.ops.size(); ++i) {
    HEARTH_ASSIGN_OR_RETURN(Value right, eval(*e.args[i + 1], scope));
    HEARTH_ASSIGN_OR_RETURN(bool ok, compare(e.ops[i], left, right));
    if (!ok) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Result<Value> Renderer::eval_node(const Expr& e, Scope& scope) {
  switch (e.kind) {
    case ExprKind::kConst:
      return e.value;
    case ExprKind::kName:
      return lookup(e.name, scope);
    case ExprKind::kGetattr: {
      HEARTH_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0], scope));
      if (obj.is_undefined() && e.args[0]->kind == ExprKind::kName)
        return undefined_error("'" + e.args[0]->name + "' is undefined");
      return get_attr(obj, e.name);
    }
    case ExprKind::kGetitem: {
      HEARTH_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0], scope));
      if (obj.is_undefined() && e.args[0]->kind == ExprKind::kName)
        return undefined_error("'" + e.args[0]->name + "' is undefined");
      HEARTH_ASSIGN_OR_RETURN(Value key, eval(*e.args[1], scope));
      return get_item(obj, key);
    }
    case ExprKind::kSlice: {
      HEARTH_ASSIGN_OR_RETURN(Value obj, eval(*e.args[0], scope));
      Value b[3];
      for (int i = 0; i < 3; ++i) {
        if (e.args[static_cast<std::size_t>(i) + 1]) {
          HEARTH_ASSIGN_OR_RETURN(b[i], eval(*e.args[static_cast<std::size_t>(i) + 1], scope));
        }
      }
      return get_slice(obj, b[0], b[1], b[2]);
    }
    case ExprKind::kCall:
      return eval_call(e, scope);
    case ExprKind::kFilter: {
      HEARTH_ASSIGN_OR_RETURN(Value input, eval(*e.args[0], scope));
      HEARTH_ASSIGN_OR_RETURN(CallArgs a, eval_args(e, scope, 1));
      return apply_filter(e.name, input, a);
    }
    case ExprKind::kTest: {
      HEARTH_ASSIGN_OR_RETURN(Value input, eval(*e.args[0], scope));
      HEARTH_ASSIGN_OR_RETURN(CallArgs a, eval_args(e, scope, 1));
      HEARTH_ASSIGN_OR_RETURN(bool r, apply_test(e.name, input, a));
      return Value(r != e.negated);
    }
    case ExprKind::kUnary: {
      HEARTH_ASSIGN_OR_RETURN(Value v, eval(*e.args[0], scope));
      if (e.name == "not") return Value(!v.truthy());
      if (e.name == "-") return unary_minus(v);
      if (v.is_undefined()) return undefined_error("operand of unary '+'");
      if (!v.is_number())
        return make_error(ErrorCode::kInvalidArgument,
                          std::string("bad operand type for unary +: '") + v.type_name() + "'");
      return v.is_bool() ? Value(v.as_int()) : v;
    }
    case ExprKind::kBinary: {
      HEARTH_ASSIGN_OR_RETURN(Value left, eval(*e.args[0], scope));
      if (e.name == "and" && !left.truthy()) return left;
      if (e.name == "or" && left.truthy()) return left;
      HEARTH_ASSIGN_OR_RETURN(Value right, eval(*e.args[1], scope));
      if (e.name == "and" || e.name == "or") return right;
      HEARTH_TRY(can_build(result_bytes(e.name, left, right), e.offset));
      return binary_op(e.name, left, right);
    }
    case ExprKind::kCompare:
      return eval_compare(e, scope);
    case ExprKind::kCondExpr: {
      HEARTH_ASSIGN_OR_RETURN(Value c, eval(*e.args[0], scope));
      if (c.truthy()) return eval(*e.args[1], scope);
      if (!e.args[2]) return Value();
      return eval(*e.args[2], scope);
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      HEARTH_ASSIGN_OR_RETURN(CallArgs a, eval_args(e, scope, 0));
      return e.kind == ExprKind::kList ? Value::list(std::move(a.args)) : Value::tuple(std::move(a.args));
    }
    case ExprKind::kDict: {
      Value d = Value::dict();
      for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) {
        HEARTH_ASSIGN_OR_RETURN(Value k, eval(*e.args[i], scope));
        HEARTH_ASSIGN_OR_RETURN(Value v, eval(*e.args[i + 1], scope));
        d.set(std::move(k), std::move(v));
      }
      return d;
    }
  }
  return make_error(ErrorCode::kInternal, "unknown expression kind");
}

}  // namespace

Result<std::string> render_template(const Body& body, const Value& variables, std::string_view source,
                                    const RenderLimits& limits) {
  // The budget keeps allocations bounded; this is the last line should the
  // machine still refuse one (no std::bad_alloc reaches the engine or the app).
  try {
    return Renderer(variables, source, limits).run(body);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorCode::kOutOfMemory, "chat template: out of memory while rendering");
  } catch (const std::length_error&) {
    return make_error(ErrorCode::kOutOfMemory, "chat template: a value grew past what memory can hold");
  }
}

}  // namespace hearth::jinja
