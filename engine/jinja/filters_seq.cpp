// Sequence filters: first, last, join, list, items, reverse, sort, unique,
// select/reject, selectattr/rejectattr, map, sum, min, max, dictsort.
#include <algorithm>

#include "engine/jinja/filter_args.h"
#include "engine/jinja/filters.h"
#include "engine/jinja/operations.h"
#include "engine/jinja/pystr.h"

namespace hearth::jinja::filter_detail {

Result<Value> lookup_path(const Value& item, const std::string& path) {
  Value cur = item;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool numeric =
        !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    HEARTH_ASSIGN_OR_RETURN(cur,
                            get_item(cur, numeric ? Value(static_cast<std::int64_t>(std::stoll(part))) : Value(part)));
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

namespace {

Value lower_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(pystr::lower(v.as_string()));
  return v;
}

Result<Value> key_of(const Value& item, const Value* attribute, bool case_sensitive) {
  Value k = item;
  if (attribute != nullptr && !attribute->is_none()) {
    HEARTH_ASSIGN_OR_RETURN(k, lookup_path(item, attribute->str()));
  }
  return lower_key(k, case_sensitive);
}

Result<Value> f_first(const Value& v, const CallArgs&) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  return items.empty() ? Value() : items.front();
}

Result<Value> f_last(const Value& v, const CallArgs&) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  return items.empty() ? Value() : items.back();
}

Result<Value> f_list(const Value& v, const CallArgs&) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  return Value::list(std::move(items));
}

Result<Value> f_join(const Value& v, const CallArgs& a) {
  const Value* sep = arg(a, 0, "d");
  const Value* attribute = arg(a, 1, "attribute");
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0 && sep != nullptr) out += sep->str();
    Value item = items[i];
    if (attribute != nullptr && !attribute->is_none()) {
      HEARTH_ASSIGN_OR_RETURN(item, lookup_path(item, attribute->str()));
    }
    out += item.str();
    HEARTH_TRY(check_value_bytes(out.size(), "join"));
  }
  return Value(std::move(out));
}

Result<Value> f_items(const Value& v, const CallArgs&) {
  if (v.is_undefined()) return Value::list();
  if (!v.is_dict()) return make_error(ErrorCode::kInvalidArgument, "items filter needs a mapping");
  std::vector<Value> out;
  for (const auto& [k, val] : v.dict_value().entries) out.push_back(Value::tuple({k, val}));
  return Value::list(std::move(out));
}

Result<Value> f_reverse(const Value& v, const CallArgs&) {
  if (v.is_string()) {
    std::u32string cps = pystr::decode(v.as_string());
    std::reverse(cps.begin(), cps.end());
    return Value(pystr::encode(cps));
  }
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

// Stable sort by key; the first comparison error wins.
Result<void> sort_by_keys(std::vector<std::pair<Value, Value>>& keyed, bool reverse) {
  Error err;
  bool failed = false;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    if (failed) return false;
    auto r = reverse ? less_than(y.first, x.first) : less_than(x.first, y.first);
    if (!r) {
      failed = true;
      err = r.error();
      return false;
    }
    return *r;
  });
  if (failed) return err;
  return {};
}

Result<Value> f_sort(const Value& v, const CallArgs& a) {
  const Value* reverse = arg(a, 0, "reverse");
  const Value* cs = arg(a, 1, "case_sensitive");
  const Value* attribute = arg(a, 2, "attribute");
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& item : items) {
    HEARTH_ASSIGN_OR_RETURN(Value k, key_of(item, attribute, cs != nullptr && cs->truthy()));
    keyed.emplace_back(std::move(k), item);
  }
  HEARTH_TRY(sort_by_keys(keyed, reverse != nullptr && reverse->truthy()));
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return Value::list(std::move(out));
}

Result<Value> f_dictsort(const Value& v, const CallArgs& a) {
  const Value* cs = arg(a, 0, "case_sensitive");
  const Value* by = arg(a, 1, "by");
  const Value* reverse = arg(a, 2, "reverse");
  if (!v.is_dict()) return make_error(ErrorCode::kInvalidArgument, "dictsort needs a mapping");
  const bool by_value = by != nullptr && by->str() == "value";
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto& [k, val] : v.dict_value().entries) {
    keyed.emplace_back(lower_key(by_value ? val : k, cs != nullptr && cs->truthy()), Value::tuple({k, val}));
  }
  HEARTH_TRY(sort_by_keys(keyed, reverse != nullptr && reverse->truthy()));
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return Value::list(std::move(out));
}

Result<Value> f_unique(const Value& v, const CallArgs& a) {
  const Value* cs = arg(a, 0, "case_sensitive");
  const Value* attribute = arg(a, 1, "attribute");
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::vector<Value> seen;
  std::vector<Value> out;
  for (auto& item : items) {
    HEARTH_ASSIGN_OR_RETURN(Value k, key_of(item, attribute, cs != nullptr && cs->truthy()));
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, k); })) continue;
    seen.push_back(std::move(k));
    out.push_back(item);
  }
  return Value::list(std::move(out));
}

Result<Value> min_max(const Value& v, const CallArgs& a, bool want_max) {
  const Value* cs = arg(a, 0, "case_sensitive");
  const Value* attribute = arg(a, 1, "attribute");
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  if (items.empty()) return Value();
  std::size_t best = 0;
  HEARTH_ASSIGN_OR_RETURN(Value best_key, key_of(items[0], attribute, cs != nullptr && cs->truthy()));
  for (std::size_t i = 1; i < items.size(); ++i) {
    HEARTH_ASSIGN_OR_RETURN(Value k, key_of(items[i], attribute, cs != nullptr && cs->truthy()));
    HEARTH_ASSIGN_OR_RETURN(bool better, want_max ? less_than(best_key, k) : less_than(k, best_key));
    if (better) {
      best = i;
      best_key = std::move(k);
    }
  }
  return items[best];
}

Result<Value> f_max(const Value& v, const CallArgs& a) {
  return min_max(v, a, true);
}
Result<Value> f_min(const Value& v, const CallArgs& a) {
  return min_max(v, a, false);
}

Result<Value> f_sum(const Value& v, const CallArgs& a) {
  const Value* attribute = arg(a, 0, "attribute");
  const Value* start = arg(a, 1, "start");
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  Value total = start ? *start : Value(0);
  for (auto& item : items) {
    Value x = item;
    if (attribute != nullptr && !attribute->is_none()) {
      HEARTH_ASSIGN_OR_RETURN(x, lookup_path(item, attribute->str()));
    }
    HEARTH_ASSIGN_OR_RETURN(total, binary_op("+", total, x));
  }
  return total;
}

// select / reject / selectattr / rejectattr share jinja2's select_or_reject.
Result<Value> select_or_reject(const Value& v, const CallArgs& a, bool by_attr, bool keep_matching) {
  std::size_t next = 0;
  std::string attribute;
  if (by_attr) {
    if (a.args.empty()) return make_error(ErrorCode::kInvalidArgument, "selectattr/rejectattr need an attribute");
    attribute = a.args[next++].str();
  }
  std::string test;
  CallArgs test_args;
  if (next < a.args.size()) {
    test = a.args[next++].str();
    if (!is_known_test(test)) return make_error(ErrorCode::kUnsupported, "unsupported test '" + test + "'");
    test_args.args.assign(a.args.begin() + static_cast<std::ptrdiff_t>(next), a.args.end());
    test_args.kwargs = a.kwargs;
  }
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::vector<Value> out;
  for (auto& item : items) {
    Value x = item;
    if (by_attr) {
      HEARTH_ASSIGN_OR_RETURN(x, lookup_path(item, attribute));
    }
    bool ok = x.truthy();
    if (!test.empty()) {
      HEARTH_ASSIGN_OR_RETURN(ok, apply_test(test, x, test_args));
    }
    if (ok == keep_matching) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Result<Value> f_select(const Value& v, const CallArgs& a) {
  return select_or_reject(v, a, false, true);
}
Result<Value> f_reject(const Value& v, const CallArgs& a) {
  return select_or_reject(v, a, false, false);
}
Result<Value> f_selectattr(const Value& v, const CallArgs& a) {
  return select_or_reject(v, a, true, true);
}
Result<Value> f_rejectattr(const Value& v, const CallArgs& a) {
  return select_or_reject(v, a, true, false);
}

// map(attribute='x', default=...) or map('filter', args...).
Result<Value> f_map(const Value& v, const CallArgs& a) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  std::vector<Value> out;
  if (const Value* attribute = a.kwarg("attribute")) {
    const Value* def = a.kwarg("default");
    for (auto& item : items) {
      HEARTH_ASSIGN_OR_RETURN(Value x, lookup_path(item, attribute->str()));
      out.push_back(x.is_undefined() && def != nullptr ? *def : x);
    }
    return Value::list(std::move(out));
  }
  if (a.args.empty()) return make_error(ErrorCode::kInvalidArgument, "map needs a filter name or attribute=");
  const std::string filter = a.args[0].str();
  if (!is_known_filter(filter)) return make_error(ErrorCode::kUnsupported, "unsupported filter '" + filter + "'");
  CallArgs rest;
  rest.args.assign(a.args.begin() + 1, a.args.end());
  rest.kwargs = a.kwargs;
  for (auto& item : items) {
    HEARTH_ASSIGN_OR_RETURN(Value x, apply_filter(filter, item, rest));
    out.push_back(std::move(x));
  }
  return Value::list(std::move(out));
}

}  // namespace

const std::vector<FilterEntry>& sequence_filters() {
  static const std::vector<FilterEntry> table = {
      {"first", f_first},
      {"last", f_last},
      {"list", f_list},
      {"join", f_join},
      {"items", f_items},
      {"reverse", f_reverse},
      {"sort", f_sort},
      {"dictsort", f_dictsort},
      {"unique", f_unique},
      {"max", f_max},
      {"min", f_min},
      {"sum", f_sum},
      {"select", f_select},
      {"reject", f_reject},
      {"selectattr", f_selectattr},
      {"rejectattr", f_rejectattr},
      {"map", f_map},
  };
  return table;
}

}  // namespace hearth::jinja::filter_detail
