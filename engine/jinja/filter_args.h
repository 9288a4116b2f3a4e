// Shared helpers of the filter implementations: argument lookup by position
// or keyword, and jinja2's attribute getter ("a.b.0" via item lookup).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/jinja/value.h"
#include "hearth/result.h"

namespace hearth::jinja::filter_detail {

// The argument at position `i`, or the keyword `name`; nullptr when absent.
inline const Value* arg(const CallArgs& a, std::size_t i, std::string_view name) {
  if (i < a.args.size()) return &a.args[i];
  return a.kwarg(name);
}

// jinja2's make_attrgetter: dotted path, integer parts index, item lookup first.
Result<Value> lookup_path(const Value& item, const std::string& path);

using FilterFn = Result<Value> (*)(const Value&, const CallArgs&);
struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

// Sequence filters (select, map, sort, join, ...), defined in filters_seq.cpp.
const std::vector<FilterEntry>& sequence_filters();

}  // namespace hearth::jinja::filter_detail
