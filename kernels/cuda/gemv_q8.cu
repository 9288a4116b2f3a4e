// The one-token q8 GEMV's entry points: where it applies, the matrix set of
// a launch, and the choice between staged and direct loads
// (gemv_q8_common.cuh describes the kernels).
#include "kernels/cuda/gemv_q8_common.cuh"

namespace hearth::kernels::cuda {

using q8::kChunkElems;
using q8::kMaxChunks;
using q8::kNormPer;
using q8::kThreads;
using q8::launch_direct;
using q8::launch_staged;
using q8::Q8Input;
using q8::Q8Mat;
using q8::Q8Mats;
using q8::staged_plan_for;
using q8::StagedPlan;

bool gemv_q8_applies(const DeviceMatrix& w, int n_tokens) {
  switch (w.type) {
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
      break;
    default:
      return false;
  }
  return n_tokens == 1 && w.cols % kChunkElems == 0 && w.cols / kChunkElems <= kMaxChunks && w.row_stride % 16 == 0 &&
         reinterpret_cast<uintptr_t>(w.data) % 16 == 0;
}

namespace {

// The matrices of one launch; false where they do not fit the kernel.
bool make_mats(const GemvOutput* outs, int n, Q8Mats* mats) {
  if (outs == nullptr || n < 1 || n > kMaxFused) return false;
  *mats = Q8Mats{};
  mats->count = n;
  for (int i = 0; i < n; ++i) {
    if (outs[i].w == nullptr) return false;
    const DeviceMatrix& w = *outs[i].w;
    if (!gemv_q8_applies(w, 1) || w.type != outs[0].w->type || w.cols != outs[0].w->cols) return false;
    mats->m[i] = Q8Mat{static_cast<const uint8_t*>(w.data), w.row_stride, w.rows, outs[i].epilogue.bias,
                       outs[i].epilogue.residual,           outs[i].y};
    mats->rows += w.rows;
  }
  return true;
}

}  // namespace

int gemv_q8_stages(const GemvOutput* outs, int n, const GemvOptions& options) {
  Q8Mats mats{};
  if (!make_mats(outs, n, &mats)) return 0;
  return staged_plan_for(mats, outs[0].w->type, outs[0].w->cols, options).stages;
}

Status gemv_q8(const GemvOutput* outs, int n, const float* x_in, cudaStream_t stream, const GemvOptions& options,
               const GemvInputNorm* norm, const GemvInputGlu* glu) {
  HEARTH_CUDA_REQUIRE(n >= 1 && n <= kMaxFused);
  Q8Mats mats{};
  HEARTH_CUDA_REQUIRE(make_mats(outs, n, &mats));
  const int64_t cols = outs[0].w->cols;
  Q8Input x{x_in, nullptr, 0.0f, nullptr};
  if (norm != nullptr) {
    HEARTH_CUDA_REQUIRE(cols <= kNormPer * 4 * kThreads && norm->weight != nullptr);
    HEARTH_CUDA_REQUIRE(reinterpret_cast<uintptr_t>(norm->weight) % 16 == 0);
    HEARTH_CUDA_REQUIRE(reinterpret_cast<uintptr_t>(norm->out) % 16 == 0 && norm->out != x_in);
    x = Q8Input{x_in, norm->weight, norm->eps, norm->out};
  }
  if (glu != nullptr) {
    HEARTH_CUDA_REQUIRE(norm == nullptr && glu->up != nullptr && reinterpret_cast<uintptr_t>(glu->up) % 16 == 0);
    HEARTH_CUDA_REQUIRE(reinterpret_cast<uintptr_t>(x_in) % 16 == 0);
    x.glu_up = glu->up;
    x.glu_kind = static_cast<int>(glu->kind);
  }
  const StagedPlan plan = staged_plan_for(mats, outs[0].w->type, cols, options);
  if (plan.stages > 0) return launch_staged(mats, outs[0].w->type, cols, x, stream, options, plan);
  return launch_direct(mats, outs[0].w->type, cols, x, stream, options);
}

}  // namespace hearth::kernels::cuda
