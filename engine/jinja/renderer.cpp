#include "engine/jinja/renderer.h"

#include <ctime>

#include "engine/jinja/filters.h"
#include "engine/jinja/lexer.h"
#include "engine/jinja/operations.h"

namespace hearth::jinja {
namespace {

constexpr std::int64_t kMaxRange = 100000;  // jinja2's sandbox MAX_RANGE

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

class Renderer {
 public:
  Renderer(const Value& variables, std::string_view source, const RenderLimits& limits)
      : vars_(variables), map_(source), limits_(limits) {
    install_builtins();
  }

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

  Result<void> append(std::string& out, std::string_view s) {
    total_output_ += s.size();
    if (total_output_ > limits_.max_output_bytes) {
      return make_error(ErrorCode::kInvalidArgument,
                        "chat template: output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
    }
    out += s;
    return {};
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

  Result<Flow> exec(const Stmt& s, Scope& scope, std::string& out);
  Result<Flow> exec_for(const Stmt& s, Scope& scope, std::string& out);
  Result<void> bind(const std::vector<std::string>& targets, const Value& v, Scope& scope);
  Result<void> exec_set(const Stmt& s, Scope& scope);
  Result<Value> eval(const Expr& e, Scope& scope);
  Result<Value> eval_call(const Expr& e, Scope& scope);
  Result<Value> eval_compare(const Expr& e, Scope& scope);
  Result<CallArgs> eval_args(const Expr& e, Scope& scope, std::size_t first);

  const Value& vars_;
  SourceMap map_;
  RenderLimits limits_;
  Scope root_;
  std::vector<std::pair<std::string, Value>> builtins_;
  std::size_t total_output_ = 0;
  std::size_t iterations_ = 0;
  int call_depth_ = 0;
  bool raised_ = false;
  mutable bool positioned_ = false;
};

Result<Value> make_range(const CallArgs& a) {
  std::int64_t bounds[3] = {0, 0, 1};
  const std::size_t n = a.args.size();
  if (n < 1 || n > 3) return make_error(ErrorCode::kInvalidArgument, "range expects 1 to 3 integers");
  for (std::size_t i = 0; i < n; ++i) {
    if (!a.args[i].is_int() && !a.args[i].is_bool())
      return make_error(ErrorCode::kInvalidArgument, "range expects integers");
  }
  if (n == 1) {
    bounds[1] = a.args[0].as_int();
  } else {
    bounds[0] = a.args[0].as_int();
    bounds[1] = a.args[1].as_int();
    if (n == 3) bounds[2] = a.args[2].as_int();
  }
  if (bounds[2] == 0) return make_error(ErrorCode::kInvalidArgument, "range() arg 3 must not be zero");
  std::vector<Value> out;
  for (std::int64_t i = bounds[0]; bounds[2] > 0 ? i < bounds[1] : i > bounds[1]; i += bounds[2]) {
    if (static_cast<std::int64_t>(out.size()) >= kMaxRange) {
      return make_error(ErrorCode::kInvalidArgument, "range too big (more than 100000 items)");
    }
    out.emplace_back(i);
  }
  return Value::list(std::move(out));
}

Result<Value> make_namespace(const CallArgs& a) {
  Value ns = Value::namespace_object();
  for (const auto& arg : a.args) {
    if (!arg.is_dict()) return make_error(ErrorCode::kInvalidArgument, "namespace() takes a mapping or keywords");
    for (const auto& [k, v] : arg.dict_value().entries) ns.set(k, v);
  }
  for (const auto& [k, v] : a.kwargs) ns.set(Value(k), v);
  return ns;
}

Result<Value> strftime_now(const CallArgs& a) {
  if (a.args.empty() || !a.args[0].is_string())
    return make_error(ErrorCode::kInvalidArgument, "strftime_now expects a format string");
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[512];
  const std::size_t n = std::strftime(buf, sizeof(buf), a.args[0].as_string().c_str(), &tm);
  return Value(std::string(buf, n));
}

void Renderer::install_builtins() {
  builtins_.emplace_back("range", Value::function("range", make_range));
  builtins_.emplace_back("namespace", Value::function("namespace", make_namespace));
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

Result<Flow> Renderer::exec(const Stmt& s, Scope& scope, std::string& out) {
  switch (s.kind) {
    case StmtKind::kText:
      HEARTH_TRY(append(out, s.text));
      return Flow::kNormal;
    case StmtKind::kOutput: {
      HEARTH_ASSIGN_OR_RETURN(Value v, eval_at(*s.expr, scope));
      HEARTH_TRY(append(out, v.str()));
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
      scope.set(s.targets[0], Value(std::move(captured)));
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
      return make_error(ErrorCode::kInvalidArgument, "chat template: too many loop iterations");
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
  ns.set(Value(s.text), std::move(v));
  return {};
}

Result<Value> Renderer::call_macro(const Stmt& macro, const CallArgs& args) {
  if (call_depth_ >= limits_.max_call_depth) {
    return make_error(ErrorCode::kInvalidArgument,
                      "macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
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

Result<Value> Renderer::eval(const Expr& e, Scope& scope) {
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
  return Renderer(variables, source, limits).run(body);
}

}  // namespace hearth::jinja
