// Embedding lookup (f32) and whole-matrix dequantisation to f16 against the
// CPU dequantization: bit-exact (same operations, no fused multiply-add).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "cuda_test_util.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cuda/dequantize_f16.h"
#include "kernels/cuda/embedding.h"
#include "quant_matrix.h"

namespace hearth::kernels::cuda::test {
namespace {

TEST(CudaEmbedding, RowsMatchCpuDequantBitExact) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(5);
  for (GgmlType type : all_cuda_types()) {
    SCOPED_TRACE(type_traits(type)->name);
    const int64_t rows = 50, cols = 256 * std::uniform_int_distribution<int64_t>(1, 6)(rng);
    const HostMatrix m = make_matrix(rng, type, rows, cols, 16);
    std::vector<int32_t> ids = {0, 49, 7, 7, 23, 1, 48};
    ids.push_back(static_cast<int32_t>(rows));  // out of range: a NaN row
    const auto n = static_cast<int>(ids.size());
    DeviceBuffer<uint8_t> dw(m.bytes);
    DeviceBuffer<int32_t> did(ids);
    DeviceBuffer<float> dout(static_cast<size_t>(n * cols));
    const DeviceMatrix dm{type, dw.get(), rows, cols, m.stride};
    ASSERT_CUDA_OK(embedding_lookup(dm, did.get(), n, dout.get(), nullptr));
    const std::vector<float> out = dout.download();
    for (int t = 0; t + 1 < n; ++t) {
      ASSERT_EQ(0, std::memcmp(out.data() + t * cols, m.values.data() + ids[static_cast<size_t>(t)] * cols,
                               static_cast<size_t>(cols) * sizeof(float)))
          << "token " << t;
    }
    for (int64_t c = 0; c < cols; ++c) ASSERT_TRUE(std::isnan(out[static_cast<size_t>((n - 1) * cols + c)]));
  }
}

TEST(CudaDequantF16, MatchesCpuDequantRounded) {
  HEARTH_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(6);
  for (GgmlType type : all_cuda_types()) {
    SCOPED_TRACE(type_traits(type)->name);
    const int64_t rows = std::uniform_int_distribution<int64_t>(1, 200)(rng);
    const int64_t cols = 256 * std::uniform_int_distribution<int64_t>(1, 8)(rng);
    const HostMatrix m = make_matrix(rng, type, rows, cols, type == GgmlType::kQ8_0 ? 32 : 0);
    DeviceBuffer<uint8_t> dw(m.bytes);
    DeviceBuffer<uint16_t> dout(static_cast<size_t>(rows * cols));
    const DeviceMatrix dm{type, dw.get(), rows, cols, m.stride};
    ASSERT_CUDA_OK(dequantize_to_f16(dm, dout.get(), nullptr));
    const std::vector<uint16_t> out = dout.download();
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i], f32_to_fp16(m.values[i])) << "element " << i << " value " << m.values[i];
    }
  }
}

}  // namespace
}  // namespace hearth::kernels::cuda::test
