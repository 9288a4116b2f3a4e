// Test helper for dequant_oracle.py: dequantizes a file of raw blocks with the
// kernels' table and writes the f32 values.
// Usage: kernels_cpu_dequant_tool TYPE_ID N_ELEMENTS IN_FILE OUT_FILE
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "kernels/cpu/ggml_type.h"
#include "kernels/cpu/quant_ops.h"

int main(int argc, char** argv) {
  using namespace hearth::kernels;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s TYPE_ID N_ELEMENTS IN_FILE OUT_FILE\n", argv[0]);
    return 2;
  }
  const auto type = static_cast<GgmlType>(std::strtoul(argv[1], nullptr, 10));
  const int64_t n = std::strtoll(argv[2], nullptr, 10);
  const QuantOps* ops = quant_ops(type);
  if (ops == nullptr || n <= 0 || n % ops->block_elems != 0) {
    std::fprintf(stderr, "unsupported type %s or bad element count %s\n", argv[1], argv[2]);
    return 2;
  }
  std::ifstream in(argv[3], std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() != row_bytes(type, n)) {
    std::fprintf(stderr, "%s holds %zu bytes, expected %zu\n", argv[3], bytes.size(), row_bytes(type, n));
    return 2;
  }
  std::vector<float> out(static_cast<size_t>(n));
  ops->dequant_row(bytes.data(), out.data(), n);
  std::ofstream(argv[4], std::ios::binary)
      .write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(float)));
  return 0;
}
