#include "engine/backend/ops.h"

namespace hearth::backend {

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kEmbedding:
      return "embedding";
    case OpKind::kRmsNorm:
      return "rms_norm";
    case OpKind::kLinear:
      return "linear";
    case OpKind::kLinearMany:
      return "linear_many";
    case OpKind::kRope:
      return "rope";
    case OpKind::kStoreKv:
      return "store_kv";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kGlu:
      return "glu";
    case OpKind::kAdd:
      return "add";
    case OpKind::kLogits:
      return "logits";
    case OpKind::kScale:
      return "scale";
  }
  return "?";
}

ActivationId Ops::add_activation(std::int64_t width, const char* what) {
  specs_.push_back(ActivationSpec{width, what});
  acts_.push_back(Activation{nullptr, width});
  return static_cast<ActivationId>(specs_.size() - 1);
}

}  // namespace hearth::backend
