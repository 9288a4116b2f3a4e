#include "models/tensor_bind.h"

#include "kernels/cpu/ggml_type.h"

namespace hearth::models {
namespace {

Error tensor_error(const std::string& name, const std::string& what) {
  return make_error(ErrorCode::kCorruptFile, "tensor '" + name + "': " + what);
}

std::string shape_text(std::int64_t a, std::int64_t b) {
  return "[" + std::to_string(a) + (b ? ", " + std::to_string(b) : "") + "]";
}

backend::HostTensor host_tensor(const WeightRef& w) {
  return backend::HostTensor{w.info->name, w.type, w.rows, w.cols, w.data, w.info->n_bytes};
}

}  // namespace

Result<WeightRef> bind_tensor(const gguf::GgufFile& f, const std::string& name, std::int64_t cols, std::int64_t rows,
                              bool optional, bool f32_only) {
  const gguf::TensorInfo* t = f.tensor(name);
  if (!t) {
    if (optional) return WeightRef{};
    return make_error(ErrorCode::kCorruptFile, "missing tensor '" + name + "'");
  }
  const std::uint32_t want_dims = rows ? 2 : 1;
  if (t->n_dims != want_dims || t->ne[0] != cols || (rows && t->ne[1] != rows)) {
    std::string got = "[";
    for (std::uint32_t d = 0; d < t->n_dims; ++d) got += (d ? ", " : "") + std::to_string(t->ne[d]);
    return tensor_error(name, "shape " + got + "], expected " + shape_text(cols, rows));
  }
  const auto id = static_cast<std::uint32_t>(t->type);
  if (f32_only && t->type != gguf::GgmlType::kF32) {
    return make_error(ErrorCode::kUnsupported,
                      "tensor '" + name + "' has type " + gguf::ggml_type_name(id) + ", expected F32");
  }
  if (!kernels::is_weight_type(t->type)) {
    return make_error(ErrorCode::kUnsupported, "tensor '" + name + "' has type " + gguf::ggml_type_name(id) +
                                                   ", which Hearth cannot compute with");
  }
  WeightRef w;
  w.info = t;
  w.type = id;
  w.cols = cols;
  w.rows = rows ? rows : 1;
  w.data = t->data;
  return w;
}

Result<std::uint32_t> positive_key(const gguf::GgufFile& f, const std::string& key, std::uint64_t max) {
  HEARTH_ASSIGN_OR_RETURN(std::uint64_t v, f.get_uint(key));
  if (v == 0 || v > max) {
    return make_error(ErrorCode::kCorruptFile,
                      "key '" + key + "' = " + std::to_string(v) + " is outside 1.." + std::to_string(max));
  }
  return static_cast<std::uint32_t>(v);
}

Result<backend::Matrix> upload_matrix(backend::Ops& ops, const WeightRef& w, backend::MatrixUse use) {
  return ops.upload_matrix(host_tensor(w), use);
}

Result<backend::Vector> upload_vector(backend::Ops& ops, const WeightRef& w) {
  if (!w) return backend::Vector{};
  return ops.upload_vector(host_tensor(w));
}

}  // namespace hearth::models
