// Test helper for gguf_oracle.py: prints what GgufFile reads as JSON, the
// GGML type table, or writes a sample file with every value type.
//   gguf_dump MODEL            MODEL: a path or a catalog name ("default" = the default model)
//   gguf_dump --types
//   gguf_dump --write-sample PATH
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "models/catalog.h"

namespace {

using namespace hearth::gguf;
using nlohmann::json;

json float_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json value_json(const Value& v) {
  switch (v.type()) {
    case ValueType::kString:
      return std::string(*v.as<std::string_view>());
    case ValueType::kBool:
      return *v.as<bool>();
    case ValueType::kF32:
      return float_json(*v.as_float());
    case ValueType::kF64:
      return float_json(*v.as_float());
    case ValueType::kArray: {
      const ArrayValue* a = v.as_array();
      json items = json::array();
      for (std::uint64_t i = 0; i < a->size(); ++i) items.push_back(value_json(a->element(i)));
      return json{{"element_type", to_string(a->element_type())}, {"items", std::move(items)}};
    }
    default:
      if (auto u = v.as_uint()) return *u;
      return *v.as_int();
  }
}

int dump(const std::string& model) {
  auto path = hearth::models::resolve_model(model == "default" ? hearth::models::builtin_catalog().default_entry().name
                                                               : model);
  if (!path) {
    std::cerr << path.error().describe() << "\n";
    return 1;
  }
  auto f = GgufFile::open(*path);
  if (!f) {
    std::cerr << f.error().describe() << "\n";
    return 1;
  }
  const GgufFile& g = **f;
  json kvs = json::array();
  for (const KeyValue& kv : g.metadata()) {
    kvs.push_back(
        {{"key", std::string(kv.key)}, {"type", to_string(kv.value.type())}, {"value", value_json(kv.value)}});
  }
  json tensors = json::array();
  for (const TensorInfo& t : g.tensors()) {
    tensors.push_back({{"name", std::string(t.name)},
                       {"type", ggml_type_name(t.type)},
                       {"shape", std::vector<std::int64_t>(t.shape().begin(), t.shape().end())},
                       {"offset", t.file_offset},
                       {"n_bytes", t.n_bytes}});
  }
  json out = {{"path", path->string()},         {"version", g.version()}, {"alignment", g.alignment()},
              {"data_offset", g.data_offset()}, {"kvs", std::move(kvs)},  {"tensors", std::move(tensors)}};
  std::cout << out.dump() << "\n";
  return 0;
}

int types() {
  json out = json::array();
  for (const hearth::kernels::TypeTraits& t : hearth::kernels::all_types()) {
    out.push_back({{"id", static_cast<std::uint32_t>(t.type)},
                   {"name", std::string(t.name)},
                   {"block_elems", t.block_elems},
                   {"block_bytes", t.block_bytes}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}

// Every value type, nested arrays, awkward floats, a non-default alignment and
// tensors of several types.
int write_sample(const std::string& path) {
  GgufWriter w(WriterOptions{3, 64});
  w.add_scalar<std::uint8_t>("s.u8", 255);
  w.add_scalar<std::int8_t>("s.i8", -128);
  w.add_scalar<std::uint16_t>("s.u16", 65535);
  w.add_scalar<std::int16_t>("s.i16", -32768);
  w.add_scalar<std::uint32_t>("s.u32", 4294967295u);
  w.add_scalar<std::int32_t>("s.i32", -2147483647 - 1);
  w.add_scalar<float>("s.f32", 0.1f);
  w.add_scalar<float>("s.f32_inf", -std::numeric_limits<float>::infinity());
  w.add_scalar<bool>("s.bool", false);
  w.add_string("s.string", "unicode \xE2\x9C\x93 \xF0\x9F\x94\xA5 and \"quotes\"\n");
  w.add_string("s.empty", "");
  w.add_scalar<std::uint64_t>("s.u64", std::numeric_limits<std::uint64_t>::max());
  w.add_scalar<std::int64_t>("s.i64", std::numeric_limits<std::int64_t>::min());
  w.add_scalar<double>("s.f64", 1e300);
  const std::vector<std::string> strs = {"a", "", "\xC4\xA0hello"};
  w.add_string_array("a.strings", strs);
  const std::vector<float> f32s = {1.0f, -2.5f, 3e-38f};
  w.add_array<float>("a.f32", f32s);
  const std::vector<std::int32_t> i32s = {-1, 0, 1, 2147483647};
  w.add_array<std::int32_t>("a.i32", i32s);
  const bool bools[] = {true, false};
  w.add_array<bool>("a.bool", bools);
  const std::vector<std::uint64_t> u64s = {0, std::numeric_limits<std::uint64_t>::max()};
  w.add_array<std::uint64_t>("a.u64", u64s);
  w.add("a.nested",
        WriterValue::array(ValueType::kArray,
                           {WriterValue::array(ValueType::kString, {WriterValue::of("x"), WriterValue::of("y")}),
                            WriterValue::array(ValueType::kString, {})}));
  auto fill = [](std::span<std::byte> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>((i * 31 + 7) & 0xFF);
  };
  w.add_tensor("f32", GgmlType::kF32, {5, 3}, fill);
  w.add_tensor("q4_1", GgmlType::kQ4_1, {64, 2}, fill);
  w.add_tensor("q6_k", GgmlType::kQ6_K, {256, 1, 2}, fill);
  w.add_tensor("bf16", GgmlType::kBF16, {7}, fill);
  auto r = w.write_file(path);
  if (!r) {
    std::cerr << r.error().describe() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--types") return types();
  if (args.size() == 2 && args[0] == "--write-sample") return write_sample(args[1]);
  if (args.size() == 1) return dump(args[0]);
  std::cerr << "usage: gguf_dump MODEL | --types | --write-sample PATH\n";
  return 2;
}
