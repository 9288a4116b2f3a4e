// How a loaded model runs, as the engine reports it: the device it runs on,
// the KV cache's precision and the weights' format. models/ fills it in when
// it loads a model (it knows what it set up); the engine passes it through to
// its users (the app's model bar, the CLI's JSON, the generation records) and
// keys the prefix cache with the KV precision.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernels/kv_precision.h"

namespace hearth {

// "f16", "q8_0", "fp8": the spelling of the settings file, the CLI's --kv and
// the generation records. Do not rename.
const char* to_string(KvPrecision precision);
// The inverse of to_string; nullopt for anything else.
std::optional<KvPrecision> parse_kv_precision(std::string_view text);
// Bytes one K or V element takes on average (q8_0: 34 bytes per 32 elements).
double kv_bytes_per_element(KvPrecision precision);

struct ModelRunInfo {
  std::string device = "cpu";  // where the forward pass runs: "cpu" or "cuda:N"
  std::string device_name;     // for display: the GPU's name, or "CPU"
  std::string device_reason;   // why that device ("auto: no CUDA device"); empty when it was asked for
  KvPrecision kv_precision = KvPrecision::kF16;
  std::string weight_format;  // "Q4_1", "Q4_K_M", ...: from general.file_type checked against the tensors
  // Load-time conversion (--quant): the file's own format ("" when the weights
  // run as stored; weight_format is then what they became) and its wall time.
  std::string weights_converted_from;
  double conversion_ms = 0;
  // The chat format --chat and the app render with (engine/chat/chat_format.h):
  // "the model's template", or "fallback gemma-turns (the model has no chat template)".
  std::string chat_format;
};

}  // namespace hearth
