// The GGML type table: lookups, names, computability and byte sizes on tiny
// shapes worked out by hand (the ids and block sizes themselves are checked
// against the Python gguf package by the gguf_oracle_types test).
#include <gtest/gtest.h>

#include <limits>

#include "engine/gguf/ggml_types.h"

namespace hearth::gguf {
namespace {

TEST(GgmlTypes, LookupByIdAndUnknownIds) {
  const kernels::TypeTraits* q4k = kernels::type_traits_from_id(12);
  ASSERT_NE(q4k, nullptr);
  EXPECT_STREQ(q4k->name, "Q4_K");
  EXPECT_EQ(q4k->block_elems, 256u);
  EXPECT_EQ(q4k->block_bytes, 144u);
  for (std::uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 1000u, 0xFFFFFFFFu}) {
    EXPECT_EQ(kernels::type_traits_from_id(id), nullptr) << id;
  }
  EXPECT_EQ(ggml_type_name(4), "type#4");
  EXPECT_EQ(ggml_type_name(GgmlType::kIQ2_XXS), "IQ2_XXS");
  for (const kernels::TypeTraits& t : kernels::all_types()) EXPECT_EQ(kernels::type_traits(t.type), &t);
}

TEST(GgmlTypes, WeightTypesAreTheOnesWithKernels) {
  std::vector<std::string_view> computable;
  for (const kernels::TypeTraits& t : kernels::all_types()) {
    if (kernels::is_weight_type(t.type)) computable.push_back(t.name);
  }
  EXPECT_EQ(computable, (std::vector<std::string_view>{"F32", "F16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K",
                                                       "Q5_K", "Q6_K", "BF16"}));
}

TEST(GgmlTypes, RowAndTensorBytes) {
  EXPECT_EQ(ggml_row_bytes(GgmlType::kQ4_1, 576).value(), 18u * 20u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::kQ6_K, 512).value(), 2u * 210u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::kBF16, 3).value(), 6u);
  EXPECT_FALSE(ggml_row_bytes(GgmlType::kQ4_K, 576).ok());
  EXPECT_FALSE(ggml_row_bytes(static_cast<GgmlType>(4), 32).ok());
  const std::int64_t ne[] = {64, 3, 2};
  EXPECT_EQ(ggml_tensor_bytes(GgmlType::kQ8_0, ne).value(), 2u * 34u * 3u * 2u);
  const std::int64_t empty[] = {0, 5};
  EXPECT_EQ(ggml_tensor_bytes(GgmlType::kF32, empty).value(), 0u);
  EXPECT_EQ(ggml_tensor_bytes(GgmlType::kF32, {}).value(), 4u);  // n_dims 0: one element
  const std::int64_t big[] = {std::int64_t{1} << 40, std::int64_t{1} << 23};
  EXPECT_FALSE(ggml_tensor_bytes(GgmlType::kF32, big).ok());  // 2^63 elements
  const std::int64_t big2[] = {std::int64_t{1} << 40, std::int64_t{1} << 21};
  EXPECT_FALSE(ggml_tensor_bytes(GgmlType::kF32, big2).ok());  // 2^61 elements * 4 bytes
  const std::int64_t neg[] = {-32};
  EXPECT_FALSE(ggml_tensor_bytes(GgmlType::kF32, neg).ok());
}

}  // namespace
}  // namespace hearth::gguf
