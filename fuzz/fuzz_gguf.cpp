// libFuzzer harness for the GGUF reader: parses the input and, when it parses,
// touches every accessor (every key through every typed getter, every array
// element, every tensor's whole data range) and checks the reader's promises.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/gguf/gguf_file.h"

namespace {

using namespace hearth::gguf;

// Fails loudly (libFuzzer records a crash) when a promise of the reader breaks.
void require(bool ok) {
  if (!ok) __builtin_trap();
}

std::uint64_t sink = 0;  // keeps reads from being optimised away

void walk(const ArrayValue& a, int depth) {
  require(depth <= ArrayValue::kMaxArrayDepth);
  for (std::uint64_t i = 0; i < a.size(); ++i) {
    const Value v = a.element(i);
    require(v.type() == a.element_type());
    if (const ArrayValue* inner = v.as_array()) {
      walk(*inner, depth + 1);
    } else if (auto s = v.as<std::string_view>()) {
      sink += s->size();
    } else {
      sink += v.raw_bits();
    }
  }
  if (auto f = a.as_numeric<float>()) {
    for (std::size_t i = 0; i < f->size(); ++i) sink += static_cast<std::uint64_t>((*f)[i] != 0.0f);
  }
  if (auto b = a.as_numeric<bool>()) sink += b->to_vector().size();
  sink += a.raw_bytes().size() + a.strings().size() + a.arrays().size();
}

template <class T>
void try_get(const GgufFile& f, std::string_view key) {
  auto r = f.get<T>(key);
  require(r.ok() == (f.find(key)->type() == value_type_of<T>::value));
  if (!r.ok()) sink += r.error().message.size();
  auto arr = f.get_numeric_array<T>(key);
  if (arr.ok()) sink += arr->size();
}

void touch_metadata(const GgufFile& f) {
  for (const KeyValue& kv : f.metadata()) {
    require(!kv.key.empty() && f.find(kv.key) == &kv.value);
    require(kv.file_offset < f.file_size());
    try_get<std::uint8_t>(f, kv.key);
    try_get<std::int8_t>(f, kv.key);
    try_get<std::uint16_t>(f, kv.key);
    try_get<std::int16_t>(f, kv.key);
    try_get<std::uint32_t>(f, kv.key);
    try_get<std::int32_t>(f, kv.key);
    try_get<std::uint64_t>(f, kv.key);
    try_get<std::int64_t>(f, kv.key);
    try_get<float>(f, kv.key);
    try_get<double>(f, kv.key);
    try_get<bool>(f, kv.key);
    sink += f.get_string(kv.key).ok() + f.get_uint(kv.key).ok() + f.get_int(kv.key).ok() + f.get_float(kv.key).ok();
    if (auto s = f.get_string_array(kv.key); s.ok()) {
      for (std::string_view x : *s) sink += x.size();
    }
    if (auto a = f.get_array(kv.key); a.ok()) walk(**a, 1);
  }
}

void touch_tensors(const GgufFile& f) {
  std::uint64_t total = 0;
  for (const TensorInfo& t : f.tensors()) {
    require(f.tensor(t.name) == &t);
    require(t.n_dims <= kMaxDims && t.file_offset % f.alignment() == 0);
    require(t.file_offset == f.data_offset() + t.offset);
    require(t.file_offset <= f.file_size() && t.n_bytes <= f.file_size() - t.file_offset);
    require(hearth::kernels::type_traits(t.type) != nullptr);
    auto bytes = ggml_tensor_bytes(t.type, t.shape());
    require(bytes.ok() && *bytes == t.n_bytes);
    sink += t.row_bytes();
    for (std::byte b : t.bytes()) sink += std::to_integer<unsigned>(b);
    total += t.n_bytes;
  }
  require(total <= f.file_size());  // no overlaps: the ranges fit side by side
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto f = GgufFile::parse({reinterpret_cast<const std::byte*>(data), size});
  if (!f.ok()) {
    require(!f.error().message.empty());
    return 0;
  }
  const GgufFile& g = **f;
  require(g.version() == 2 || g.version() == 3);
  require(g.alignment() != 0 && (g.alignment() & (g.alignment() - 1)) == 0);
  touch_metadata(g);
  touch_tensors(g);
  sink += static_cast<std::uint64_t>(g.find("no such key") == nullptr) + (g.tensor("no such tensor") == nullptr);
  return 0;
}
