// The GGUF parser: header, metadata, tensor infos, data placement. Every size
// read from the file is checked against the bytes left before it sizes an
// allocation, so a lying count fails fast instead of allocating.
#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>

#include "engine/gguf/gguf_cursor.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_parse.h"
#include "engine/gguf/utf8.h"

namespace hearth::gguf {
namespace {

// Smallest encodings, used to bound counts by the bytes left.
constexpr std::uint64_t kMinKvBytes = 8 + 1 + 4 + 1;              // key len, 1-byte key, type, u8 value
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 4 + 8;  // name len, name, n_dims, type, offset
constexpr std::uint64_t kMinArrayBytes = 4 + 8;                   // element type, count

std::string key_ctx(std::string_view key) {
  return "key " + quote_for_message(key);
}

std::string element_ctx(const std::string& ctx, std::uint64_t i) {
  return ctx + " element " + std::to_string(i);
}

}  // namespace

// Fills ArrayValue (a friend) from the cursor.
class ArrayBuilder {
 public:
  // `ctx` names the array ("key 'x'", "key 'x' element 3"); depth counts from 1.
  static Result<ArrayValue> parse(Cursor& c, const std::string& ctx, int depth) {
    const std::uint64_t start = c.pos();
    if (depth > ArrayValue::kMaxArrayDepth) {
      return corrupt_at(start, ctx + ": arrays nested deeper than " + std::to_string(ArrayValue::kMaxArrayDepth));
    }
    HEARTH_ASSIGN_OR_RETURN(const auto type_id, c.read<std::uint32_t>(ctx + " array element type"));
    HEARTH_ASSIGN_OR_RETURN(const auto count, c.read<std::uint64_t>(ctx + " array length"));
    if (type_id >= kValueTypeCount) {
      return corrupt_at(start, ctx + ": unknown array element type " + std::to_string(type_id));
    }
    ArrayValue a;
    a.element_type_ = static_cast<ValueType>(type_id);
    a.count_ = count;
    const std::size_t size = scalar_size(a.element_type_);
    const std::uint64_t min_elem = size != 0 ? size : a.element_type_ == ValueType::kString ? 8 : kMinArrayBytes;
    if (count > c.left() / min_elem) {
      return corrupt_at(start, ctx + ": array length " + std::to_string(count) + " of " + to_string(a.element_type_) +
                                   " cannot fit in the " + std::to_string(c.left()) + " bytes left in the file");
    }
    if (size != 0) {
      HEARTH_ASSIGN_OR_RETURN(a.raw_, c.take(count * size, ctx));
      if (a.element_type_ == ValueType::kBool) HEARTH_TRY(check_bools(a.raw_, count, ctx, start));
    } else if (a.element_type_ == ValueType::kString) {
      a.strings_.reserve(static_cast<std::size_t>(count));
      for (std::uint64_t i = 0; i < count; ++i) {
        auto s = c.string(ctx);  // the message gets the index only on error
        if (!s) return relabel(std::move(s).error(), ctx, i);
        a.strings_.push_back(*s);
      }
    } else {
      a.arrays_.reserve(static_cast<std::size_t>(count));
      for (std::uint64_t i = 0; i < count; ++i) {
        HEARTH_ASSIGN_OR_RETURN(auto inner, parse(c, element_ctx(ctx, i), depth + 1));
        a.arrays_.push_back(std::move(inner));
      }
    }
    return a;
  }

 private:
  static Result<void> check_bools(const std::byte* p, std::uint64_t count, const std::string& ctx,
                                  std::uint64_t start) {
    for (std::uint64_t i = 0; i < count; ++i) {
      if (std::to_integer<unsigned>(p[i]) > 1) {
        return corrupt_at(start,
                          element_ctx(ctx, i) + ": bool holds " + std::to_string(std::to_integer<unsigned>(p[i])));
      }
    }
    return {};
  }
  // Adds " element i" after the array's name in a string error.
  static Error relabel(Error e, const std::string& ctx, std::uint64_t i) {
    if (e.message.starts_with(ctx)) e.message = element_ctx(ctx, i) + e.message.substr(ctx.size());
    return e;
  }
};

// Runs the whole parse over a GgufFile whose bytes_ are set (a friend).
class GgufParser {
 public:
  explicit GgufParser(GgufFile& f) : f_(f), c_(f.bytes_) {}

  Result<void> run() {
    HEARTH_TRY(header());
    HEARTH_TRY(metadata());
    HEARTH_TRY(alignment());
    HEARTH_TRY(tensor_infos());
    return place_tensors();
  }

 private:
  Result<void> header() {
    HEARTH_ASSIGN_OR_RETURN(const std::byte* magic, c_.take(4, "magic"));
    if (std::memcmp(magic, "GGUF", 4) != 0) return corrupt_at(0, "not a GGUF file: the magic is not 'GGUF'");
    HEARTH_ASSIGN_OR_RETURN(f_.version_, c_.read<std::uint32_t>("version"));
    if (f_.version_ != 2 && f_.version_ != 3) {
      std::string why = f_.version_ == 1       ? " (GGUF v1 predates 64-bit counts; convert the file to v3)"
                        : f_.version_ > 0xFFFF ? " (a big-endian GGUF? only little-endian files are supported)"
                                               : "";
      return make_error(ErrorCode::kUnsupported, "GGUF version " + std::to_string(f_.version_) +
                                                     " is not supported, only 2 and 3" + why + at_byte(4));
    }
    HEARTH_ASSIGN_OR_RETURN(tensor_count_, c_.read<std::uint64_t>("tensor count"));
    HEARTH_ASSIGN_OR_RETURN(kv_count_, c_.read<std::uint64_t>("metadata count"));
    if (kv_count_ > c_.left() / kMinKvBytes) {
      return corrupt_at(16, "metadata count " + std::to_string(kv_count_) + " cannot fit in the " +
                                std::to_string(c_.left()) + " bytes left in the file");
    }
    if (tensor_count_ > c_.left() / kMinTensorInfoBytes) {
      return corrupt_at(8, "tensor count " + std::to_string(tensor_count_) + " cannot fit in the " +
                               std::to_string(c_.left()) + " bytes left in the file");
    }
    return {};
  }

  Result<void> metadata() {
    f_.kvs_.reserve(static_cast<std::size_t>(kv_count_));
    f_.kv_index_.reserve(static_cast<std::size_t>(kv_count_));
    for (std::uint64_t i = 0; i < kv_count_; ++i) {
      const std::uint64_t start = c_.pos();
      const std::string ctx = "metadata entry " + std::to_string(i);
      HEARTH_ASSIGN_OR_RETURN(const std::string_view key, c_.string(ctx + " key"));
      if (key.empty()) return corrupt_at(start, ctx + ": empty key");
      if (f_.kv_index_.contains(key)) return corrupt_at(start, "duplicate " + key_ctx(key));
      HEARTH_ASSIGN_OR_RETURN(const Value v, value(key_ctx(key)));
      f_.kv_index_.emplace(key, f_.kvs_.size());
      f_.kvs_.push_back(KeyValue{key, v, start});
    }
    return {};
  }

  Result<Value> value(const std::string& ctx) {
    const std::uint64_t start = c_.pos();
    HEARTH_ASSIGN_OR_RETURN(const auto type_id, c_.read<std::uint32_t>(ctx + " value type"));
    if (type_id >= kValueTypeCount) return corrupt_at(start, ctx + ": unknown value type " + std::to_string(type_id));
    const auto type = static_cast<ValueType>(type_id);
    if (type == ValueType::kString) {
      HEARTH_ASSIGN_OR_RETURN(const std::string_view s, c_.string(ctx));
      return Value::string(s);
    }
    if (type == ValueType::kArray) {
      HEARTH_ASSIGN_OR_RETURN(auto a, ArrayBuilder::parse(c_, ctx, 1));
      f_.arrays_.push_back(std::make_unique<ArrayValue>(std::move(a)));
      return Value::array(f_.arrays_.back().get());
    }
    const std::size_t size = scalar_size(type);
    HEARTH_ASSIGN_OR_RETURN(const std::byte* p, c_.take(size, ctx));
    std::uint64_t bits = 0;
    std::memcpy(&bits, p, size);
    if (type == ValueType::kBool && bits > 1) return corrupt_at(start, ctx + ": bool holds " + std::to_string(bits));
    return Value::scalar(type, bits);
  }

  Result<void> alignment() {
    auto it = f_.kv_index_.find("general.alignment");
    if (it == f_.kv_index_.end()) return {};
    const KeyValue& kv = f_.kvs_[it->second];
    auto a = kv.value.as<std::uint32_t>();
    if (!a) {
      return corrupt_at(kv.file_offset, "key 'general.alignment' has type " + std::string(to_string(kv.value.type())) +
                                            ", expected u32");
    }
    if (*a == 0 || !std::has_single_bit(*a)) {
      return corrupt_at(kv.file_offset, "key 'general.alignment' is " + std::to_string(*a) + ", not a power of two");
    }
    f_.alignment_ = *a;
    return {};
  }

  Result<void> tensor_infos() {
    f_.tensors_.reserve(static_cast<std::size_t>(tensor_count_));
    f_.tensor_index_.reserve(static_cast<std::size_t>(tensor_count_));
    for (std::uint64_t i = 0; i < tensor_count_; ++i) {
      HEARTH_ASSIGN_OR_RETURN(TensorInfo t, tensor_info(i));
      f_.tensor_index_.emplace(t.name, f_.tensors_.size());
      f_.tensors_.push_back(t);
    }
    return {};
  }

  Result<TensorInfo> tensor_info(std::uint64_t i) {
    TensorInfo t;
    t.info_offset = c_.pos();
    HEARTH_ASSIGN_OR_RETURN(t.name, c_.string("tensor " + std::to_string(i) + " name"));
    const std::string ctx = "tensor " + quote_for_message(t.name);
    if (t.name.empty()) return corrupt_at(t.info_offset, "tensor " + std::to_string(i) + ": empty name");
    if (f_.tensor_index_.contains(t.name)) return corrupt_at(t.info_offset, "duplicate " + ctx);
    const std::uint64_t dims_at = c_.pos();
    HEARTH_ASSIGN_OR_RETURN(t.n_dims, c_.read<std::uint32_t>(ctx + " n_dims"));
    if (t.n_dims > kMaxDims) {
      return corrupt_at(dims_at, ctx + ": n_dims " + std::to_string(t.n_dims) + " exceeds " + std::to_string(kMaxDims));
    }
    for (std::uint32_t d = 0; d < t.n_dims; ++d) {
      const std::uint64_t at = c_.pos();
      HEARTH_ASSIGN_OR_RETURN(t.ne[d], c_.read<std::int64_t>(ctx + " ne[" + std::to_string(d) + "]"));
      if (t.ne[d] < 0) {
        return corrupt_at(at, ctx + ": ne[" + std::to_string(d) + "] is negative (" + std::to_string(t.ne[d]) + ")");
      }
    }
    const std::uint64_t type_at = c_.pos();
    HEARTH_ASSIGN_OR_RETURN(const auto type_id, c_.read<std::uint32_t>(ctx + " type"));
    if (kernels::type_traits_from_id(type_id) == nullptr) {
      return make_error(ErrorCode::kUnsupported,
                        ctx + ": unknown ggml type " + std::to_string(type_id) + at_byte(type_at));
    }
    t.type = static_cast<GgmlType>(type_id);
    const std::uint64_t offset_at = c_.pos();
    HEARTH_ASSIGN_OR_RETURN(t.offset, c_.read<std::uint64_t>(ctx + " offset"));
    if (t.offset % f_.alignment_ != 0) {
      return corrupt_at(offset_at, ctx + ": offset " + std::to_string(t.offset) + " is not a multiple of alignment " +
                                       std::to_string(f_.alignment_));
    }
    auto bytes = ggml_tensor_bytes(t.type, t.shape());
    if (!bytes) return make_error(bytes.error().code, ctx + ": " + bytes.error().message + at_byte(dims_at));
    t.n_bytes = *bytes;
    t.n_elements = 1;
    for (std::uint32_t d = 0; d < t.n_dims; ++d) t.n_elements *= static_cast<std::uint64_t>(t.ne[d]);  // checked above
    return t;
  }

  // Where the tensor data ends: data_offset + offset + bytes of the furthest
  // tensor, when no sum wraps (a wrapping one is left to place_tensors' check).
  void find_data_end() {
    f_.data_end_ = 0;  // no tensors: nothing to cut short
    for (const TensorInfo& t : f_.tensors_) {
      if (t.offset > UINT64_MAX - f_.data_offset_ || t.n_bytes > UINT64_MAX - f_.data_offset_ - t.offset) continue;
      f_.data_end_ = std::max(f_.data_end_, f_.data_offset_ + t.offset + t.n_bytes);
    }
  }

  // Data section start, and every tensor's range inside the file, without overlaps.
  Result<void> place_tensors() {
    const std::uint64_t end = c_.pos();
    const std::uint64_t pad = (f_.alignment_ - end % f_.alignment_) % f_.alignment_;
    f_.data_offset_ = end + pad;  // end <= file size < 2^63: no wrap
    const std::uint64_t size = f_.bytes_.size();
    find_data_end();
    // A plausible layout whose data the file cuts short is an interrupted
    // download, not garbage: say so, with the size the file must have.
    const bool incomplete = f_.data_end_ > size;
    if (incomplete && !f_.allow_incomplete_) {
      return make_error(ErrorCode::kCorruptFile,
                        "incomplete file: " + std::to_string(size) + " of " + std::to_string(f_.data_end_) +
                            " bytes present (the tensor data ends at byte " + std::to_string(f_.data_end_) + ")");
    }
    for (TensorInfo& t : f_.tensors_) {
      const std::string ctx = "tensor " + quote_for_message(t.name);
      const bool wraps = t.offset > UINT64_MAX - f_.data_offset_ || t.n_bytes > UINT64_MAX - f_.data_offset_ - t.offset;
      if (incomplete && !wraps) {  // allow_incomplete: placed where the whole file has it, data if present
        t.file_offset = f_.data_offset_ + t.offset;
        t.data = t.file_offset + t.n_bytes <= size ? f_.bytes_.data() + t.file_offset : nullptr;
        continue;
      }
      if (t.offset > size || f_.data_offset_ > size - t.offset || t.n_bytes > size - f_.data_offset_ - t.offset) {
        return corrupt_at(t.info_offset, ctx + ": data [" + std::to_string(t.offset) + ", +" +
                                             std::to_string(t.n_bytes) + ") from data offset " +
                                             std::to_string(f_.data_offset_) + " ends past the end of the file (" +
                                             std::to_string(size) + " bytes)");
      }
      t.file_offset = f_.data_offset_ + t.offset;
      t.data = f_.bytes_.data() + t.file_offset;
    }
    return check_overlaps();
  }

  Result<void> check_overlaps() {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < f_.tensors_.size(); ++i) {
      if (f_.tensors_[i].n_bytes != 0) order.push_back(i);
    }
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return f_.tensors_[a].offset < f_.tensors_[b].offset; });
    for (std::size_t k = 1; k < order.size(); ++k) {
      const TensorInfo& prev = f_.tensors_[order[k - 1]];
      const TensorInfo& cur = f_.tensors_[order[k]];
      if (prev.offset + prev.n_bytes > cur.offset) {
        return corrupt_at(cur.info_offset, "tensor " + quote_for_message(cur.name) + ": data at offset " +
                                               std::to_string(cur.offset) + " overlaps tensor " +
                                               quote_for_message(prev.name) + " [" + std::to_string(prev.offset) +
                                               ", " + std::to_string(prev.offset + prev.n_bytes) + ")");
      }
    }
    return {};
  }

  GgufFile& f_;
  Cursor c_;
  std::uint64_t tensor_count_ = 0;
  std::uint64_t kv_count_ = 0;
};

Result<void> run_parser(GgufFile& f) {
  return GgufParser(f).run();
}

}  // namespace hearth::gguf
