// Multi-token products of quantized weights on the tensor cores ("mmq"):
// y[t][r] = sum_c W[r][c] x[t][c] for batches of 2 and more tokens, each
// weight block read once per tile of up to 64 tokens and never dequantized to
// memory (the f16 path writes and reads back the whole matrix). Two kinds of
// activations (MmqActivations):
//
// kF16 (mmq_f16_supported(): sm_80 and later): x is scaled per token by a
// power of two (its largest magnitude into [128, 256): exact, and no f16
// overflow whatever the model's activations) and rounded to f16; the weight
// rows stream into shared memory as stored (cp.async, 2-4 stages in flight),
// each unit of 32 is decoded there to f16 (d q + m, one rounding: fused
// multiply-add of the exact integer code) and multiplied on the f16 tensor
// cores (mma.m16n8k16, f32 accumulation), the token's scale applied once at
// the end (mmq_f16.cu).
//
// kF16Wg (mmq_f16_wg_supported(): sm_90, from the sm_90a image): kF16's
// arithmetic with each k16 step a Hopper warpgroup mma (wgmma) reading the
// activations from shared memory itself; the activations in its own order
// within each unit (mmq_wg.cu). The same values up to the f32 accumulation's order.
//
// kQ8: the one-token q8 GEMV's arithmetic (gemv.h, kQ8). x is first quantized per
// token and 32 values (mmq_quantize: d = amax / 127, codes rint(x 127 / amax),
// s = d sum(codes), the same f32 operations as the GEMV's prologue); a unit's
// weights are d_w q_w + m_w with integer codes q_w (Q4_0 q - 8, Q5_0 q - 16,
// Q8_0 q, all with m_w = 0; Q4_1 / Q5_1 q and m; Q4_K / Q5_K q, d sc_j and
// -dmin m_j), its contribution d_w d_x sum(q_w q_x) + m_w s_x with the integer
// dot exact (mma.m16n8k32 s8, int32). So a token's row is the GEMV's up to
// f32 rounding whichever batch it is in.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/device_matrix.h"
#include "kernels/cuda/gemv.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// True where mmq runs: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K or Q5_K; cols a
// multiple of 256; data and row_stride 16-byte aligned.
bool mmq_applies(const DeviceMatrix& w);

// kAuto: mmq_activations(n_tokens), the backends' choice.
enum class MmqActivations { kAuto, kQ8, kF16, kF16Wg };

// kF16 from mmq_f16_min_tokens() rows (9 by default; HEARTH_CUDA_MMQ_F16=k
// sets k >= 2, =0 never) on devices that run it, kQ8 otherwise. Measured
// (docs/perf-notes.md v20, H100, with v19's split-K model): from 9 rows the
// 8B decodes 16 streams at 2,496 tok/s against int8's 1,988 and 64 streams
// at 5,672 against 4,442; perplexity within 0.05% of int8 and of the CPU.
// Below 9 rows a sequence's batched steps see the activations of its
// single-token ones (the q8 GEMV).
// kF16Wg in place of kF16 where HEARTH_CUDA_MMQ_WGMMA=1 (off by default:
// 0.71-0.85x of the mma.sync kernel, v20) and the device runs it.
int64_t mmq_f16_min_tokens();
bool mmq_f16_supported();
bool mmq_f16_wg_supported();
MmqActivations mmq_activations(int64_t n_tokens);

// Bytes of the prepared activations of n_tokens rows of cols values (cols a
// multiple of 256), either kind: kQ8 codes then per-unit (d, s); kF16 halves
// (in the kernel's order within each unit) then per-token scales; 256-byte
// aligned parts.
size_t mmq_act_bytes(int64_t n_tokens, int64_t cols);

// x: [n_tokens][cols] f32 to the prepared form in act (mmq_act_bytes).
Status mmq_quantize(const float* x, int64_t n_tokens, int64_t cols, void* act, cudaStream_t stream,
                    MmqActivations kind = MmqActivations::kAuto);

// y = W x (+ bias) (+ residual) for the n_tokens rows prepared in act
// (mmq_quantize with cols = w.cols and the same kind). y: [n_tokens][w.rows] f32; residual may
// alias y. scratch (may be null): split-K partial sums when the matrix has
// too few row tiles to fill the GPU; splits are limited to what fits in
// scratch_bytes. Deterministic for a given split count (each split sums its
// units in order, the splits are added in order); another split count changes
// only the f32 rounding.
Status mmq(const DeviceMatrix& w, const void* act, int64_t n_tokens, float* y, const GemvEpilogue& epilogue,
           void* scratch, size_t scratch_bytes, cudaStream_t stream, MmqActivations kind = MmqActivations::kAuto);

// Split-K: the split count (and stages per split) with the least cost in
// stage times: rounds of resident blocks x stages per block, plus, when
// split, each round's partial-sum writes (block_write stages a block), the
// reduction's read of every split (reduce_read stages a split) and its
// launch; the fewest splits among equals. tiles: row x token tiles; stages:
// a row's stages; resident: blocks resident on the whole device; max_splits:
// what the scratch holds. (Without the partial sums' bytes, 16 one-stage
// splits of a 14336 x 4096 product at 64 tokens won: 59 MB of partial sums
// for 33 MB of weights, perf-notes v19.)
struct MmqSplit {
  int splits = 1;
  int stages_per_split = 1;
};
MmqSplit mmq_choose_split(int64_t tiles, int stages, int64_t resident, int max_splits, double block_write,
                          double reduce_read);

// Scratch for mmq's largest useful split count at this shape.
size_t mmq_scratch_bytes(const DeviceMatrix& w, int64_t n_tokens, MmqActivations kind = MmqActivations::kAuto);

// Process-wide switch for the backends (HEARTH_CUDA_MMQ=0 turns it off, for
// A/B runs): mmq for multi-token products of at least 2 and at most
// mmq_max_tokens() rows (HEARTH_CUDA_MMQ_MAX_TOKENS, default 64: above it the
// f16 path's cuBLAS GEMM is faster, see docs/perf-notes.md).
bool mmq_enabled();
int64_t mmq_max_tokens();

}  // namespace hearth::kernels::cuda
