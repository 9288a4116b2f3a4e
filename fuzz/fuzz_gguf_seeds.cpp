// Writes the fuzz_gguf seed corpus into a folder: small writer-made files (every
// value type, nested arrays, v2/v3, several alignments and tensor types), the
// default model's first 64 KiB, and a miniature of the default model (all its
// keys with arrays cut short, all its tensor names and types with one-block
// shapes). Model bytes are never committed: seeds are generated at run time.
//   fuzz_gguf_seeds OUTDIR
#include <filesystem>
#include <fstream>
#include <iostream>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "models/catalog.h"

namespace {

using namespace hearth::gguf;
namespace fs = std::filesystem;

constexpr std::uint64_t kArrayCut = 24;  // elements kept per array in the miniature
constexpr std::size_t kPrefixBytes = 64 * 1024;

void write(const fs::path& p, std::span<const std::byte> bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void fill_pattern(std::span<std::byte> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>((i * 37 + 11) & 0xFF);
}

bool save(const GgufWriter& w, const fs::path& p) {
  auto bytes = w.to_bytes();
  if (!bytes) {
    std::cerr << p << ": " << bytes.error().describe() << "\n";
    return false;
  }
  write(p, *bytes);
  return true;
}

bool writer_seeds(const fs::path& dir) {
  bool ok = true;
  for (std::uint32_t version : {2u, 3u}) {
    for (std::uint32_t alignment : {32u, 1u, 64u}) {
      GgufWriter w(WriterOptions{version, alignment});
      w.add_scalar<std::uint8_t>("u8", 1);
      w.add_scalar<std::int8_t>("i8", -1);
      w.add_scalar<std::uint16_t>("u16", 2);
      w.add_scalar<std::int16_t>("i16", -2);
      w.add_scalar<std::uint32_t>("u32", 3);
      w.add_scalar<std::int32_t>("i32", -3);
      w.add_scalar<float>("f32", 0.5f);
      w.add_scalar<bool>("bool", true);
      w.add_string("string", "s\xC3\xA9");
      w.add_scalar<std::uint64_t>("u64", 4);
      w.add_scalar<std::int64_t>("i64", -4);
      w.add_scalar<double>("f64", 0.25);
      const std::vector<std::string> strs = {"a", "bc"};
      w.add_string_array("strings", strs);
      const std::vector<float> fs_ = {1.0f, 2.0f};
      w.add_array<float>("floats", fs_);
      w.add("nested", WriterValue::array(ValueType::kArray,
                                         {WriterValue::array(ValueType::kI32, {WriterValue::of<std::int32_t>(5)}),
                                          WriterValue::array(ValueType::kI32, {})}));
      w.add_tensor("t.f32", GgmlType::kF32, {4, 2}, fill_pattern);
      w.add_tensor("t.q4_0", GgmlType::kQ4_0, {32}, fill_pattern);
      w.add_tensor("t.q6_k", GgmlType::kQ6_K, {256}, fill_pattern);
      w.add_tensor("t.empty", GgmlType::kF16, {0}, fill_pattern);
      ok &= save(w, dir / ("writer_v" + std::to_string(version) + "_a" + std::to_string(alignment) + ".gguf"));
    }
  }
  ok &= save(GgufWriter(), dir / "writer_empty.gguf");
  return ok;
}

WriterValue to_writer(const Value& v) {
  if (const ArrayValue* a = v.as_array()) {
    std::vector<WriterValue> items;
    for (std::uint64_t i = 0; i < a->size() && i < kArrayCut; ++i) items.push_back(to_writer(a->element(i)));
    return WriterValue::array(a->element_type(), std::move(items));
  }
  if (auto s = v.as<std::string_view>()) return WriterValue::of(*s);
  WriterValue w;
  w.type = v.type();
  w.bits = v.raw_bits();
  return w;
}

bool model_seeds(const fs::path& dir) {
  auto path = hearth::models::resolve_model(hearth::models::builtin_catalog().default_entry().name);
  if (!path) {
    std::cerr << "warning: no model seeds: " << path.error().describe() << "\n";
    return true;
  }
  auto f = GgufFile::open(*path);
  if (!f) {
    std::cerr << f.error().describe() << "\n";
    return false;
  }
  const auto bytes = (*f)->bytes();
  write(dir / "model_prefix_64k.gguf", bytes.first(std::min(bytes.size(), kPrefixBytes)));
  GgufWriter w(WriterOptions{(*f)->version(), (*f)->alignment()});
  for (const KeyValue& kv : (*f)->metadata()) {
    if (kv.key != "general.alignment") w.add(kv.key, to_writer(kv.value));
  }
  for (const TensorInfo& t : (*f)->tensors()) {
    const auto* traits = hearth::kernels::type_traits(t.type);
    w.add_tensor(t.name, t.type, {static_cast<std::int64_t>(traits->block_elems), 1}, fill_pattern);
  }
  return save(w, dir / "model_miniature.gguf");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_gguf_seeds OUTDIR\n";
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  const bool ok = writer_seeds(dir) && model_seeds(dir);
  return ok ? 0 : 1;
}
