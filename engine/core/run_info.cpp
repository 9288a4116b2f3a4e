#include "hearth/run_info.h"

namespace hearth {

const char* to_string(KvPrecision precision) {
  switch (precision) {
    case KvPrecision::kF16:
      return "f16";
    case KvPrecision::kQ8_0:
      return "q8_0";
    case KvPrecision::kFp8E4M3:
      return "fp8";
  }
  return "f16";
}

std::optional<KvPrecision> parse_kv_precision(std::string_view text) {
  for (const KvPrecision p : {KvPrecision::kF16, KvPrecision::kQ8_0, KvPrecision::kFp8E4M3}) {
    if (text == to_string(p)) return p;
  }
  return std::nullopt;
}

double kv_bytes_per_element(KvPrecision precision) {
  switch (precision) {
    case KvPrecision::kF16:
      return 2.0;
    case KvPrecision::kQ8_0:
      return 34.0 / 32.0;
    case KvPrecision::kFp8E4M3:
      return 1.0;
  }
  return 2.0;
}

}  // namespace hearth
