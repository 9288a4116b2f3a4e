// Greedy sampling on the device: the index of the largest logit of each row.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// out[r] = argmax_i logits[r][i], the lowest index among equal maxima; NaN
// entries are ignored (a row of only NaN gives 0). logits: [n_rows][n_vocab]
// f32; out: [n_rows] device int32.
Status argmax(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t* out, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
