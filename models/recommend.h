// Hardware-aware defaults: how to run a model on this machine when nothing has
// been chosen yet (the app's first start, `hearth-cli estimate --explain`),
// and why. The choice comes from each device's free memory, its memory
// bandwidth and the model's plan (models::plan), never from a table of GPUs:
//
//   device   the first GPU where the model, a KV cache of at least
//            kMinContext tokens and the workspace fit (with the CUDA
//            runtime's headroom), else the CPU (within 3/4 of its free RAM);
//   context  the longest power of two that fits, from the model's trained
//            context capped at 32768 on a GPU and 8192 on the CPU (prefill
//            there costs seconds per thousand tokens), down to kMinContext;
//   KV       f16 where it fits at that context; the compact precision of the
//            device (CPU q8_0, CUDA fp8) where only it does;
//   batch    16 sequences and 512-token steps on a GPU; on the CPU 4
//            sequences and 256-token steps (its decode is bandwidth-bound, a
//            few sequences share each pass over the weights).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "hearth/devices.h"
#include "hearth/result.h"
#include "models/run_config.h"

namespace hearth::models {

// What is known of the machine: its devices (the CPU first, as
// list_devices() gives them) and, where measured or known, their memory
// bandwidth in bytes per second (0: unknown; the reasons then leave speed out).
struct MachineView {
  std::vector<DeviceInfo> devices;
  std::vector<double> bandwidth_bytes_per_s;  // parallel to `devices`
};

// list_devices(); the CPU's read bandwidth measured when `measure_cpu` (about
// 0.05 s and 128 MiB for that long), each GPU's from its memory clock and bus width.
MachineView this_machine(bool measure_cpu);

inline constexpr std::int32_t kMinContext = 2048;

struct Recommendation {
  RunConfig config;  // device (never "auto"), context_length, kv_precision, batch limits
  RunPlan plan;      // what that configuration takes there
  std::string device_name;
  std::size_t free_bytes = 0;        // the chosen device's free memory
  bool fits = false;                 // false: nothing fits anywhere; `config` is the smallest CPU plan
  double decode_tokens_per_s = 0;    // bandwidth / weight bytes read per token (an upper bound); 0: unknown
  std::vector<std::string> reasons;  // one line per choice, in words
};

// `base` supplies what is not chosen here (quant, threads, block size...).
Result<Recommendation> recommend(const gguf::GgufFile& file, const MachineView& machine, const RunConfig& base = {});

// A change that makes a plan that does not fit its device fit.
struct FitSuggestion {
  std::string option;  // its command-line spelling: "--ctx 2048", "--kv q8_0", "--quant Q4_0", "--device cpu"
  std::string why;
  RunConfig config;  // the configuration with the change made
  std::size_t total_bytes = 0;
  std::size_t free_bytes = 0;  // of the device it would run on
};
// The first change of each kind that makes `dp` (planned from `config`) fit:
// halving the context (down to 512 tokens), the device's 8-bit KV cache (fp8
// on CUDA, q8_0 on the CPU), the finest coarser weight format that fits (Q8_0,
// Q5_0, Q4_0, converted at load), the CPU instead of a GPU. Empty when it fits.
std::vector<FitSuggestion> suggest_fits(const gguf::GgufFile& file, const RunConfig& config, const DevicePlan& dp);

}  // namespace hearth::models
