// Latency-driven advice (issue 19): given a latency target (inter-token
// latency p99, or TTFT p99) and a window of measurements, says whether the
// target is missed for good (not a passing spike) and which lighter
// configuration would meet it, with the expected gain. It only advises: the
// front end shows the suggestion and, if the user accepts, switches through
// the model switching flow. Pure logic over numbers (no engine, no Qt).
//
// The gain model, per change (new latency = measured x factor):
//   coarser weights  ITL: 1 - w (1 - bits_new / bits_old), decode reads every
//                    weight byte per token (memory bound); TTFT: the same with
//                    w x prefill_weight_sensitivity (prefill is compute bound).
//   KV f16 -> fp8 (CUDA) / q8_0 (CPU): half the KV bytes: ITL 1 - a / 2;
//                    TTFT 1 - a / 4 (attention is a smaller share of prefill).
//   half the context: ITL 1 - a / 2 (sequences that fill it read half the
//                    cache); TTFT 1 / 2 (prompts that fill it are cut to it).
//   half the streams: ITL 1 - (1 - w) / 2 (the weights are read once per step
//                    whatever the batch; each stream adds its own attention
//                    and activations); TTFT 1 - (1 - w) / 2 likewise.
// w: the share of a decode step spent reading weights (the profile's matmul
// share), a: the share spent on attention and the KV cache. The defaults are
// those of a small model's decode on the CPU profile (docs/profiling.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hearth::advice {

enum class LatencyMetric { kInterTokenP99, kTtftP99 };

struct LatencyTarget {
  LatencyMetric metric = LatencyMetric::kInterTokenP99;
  double target_ms = 0;
};

struct CurrentSetup {
  std::string weight_format = "Q8_0";  // models::weight_format_of's names: F16, Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0...
  std::string kv_precision = "f16";    // f16, q8_0, fp8
  bool cuda = false;
  std::int32_t context_length = 8192;  // tokens
  std::int32_t streams = 1;            // concurrent sequences
  double weight_share = 0.75;          // w above
  double attention_share = 0.15;       // a above
};

struct AdviceOptions {
  std::size_t min_samples = 32;     // fewer: no verdict
  std::int32_t min_context = 2048;  // never suggest a context below this
  double prefill_weight_sensitivity = 0.3;
};

struct Suggestion {
  std::string change;  // "weight_format", "kv_precision", "context_length", "streams"
  std::string from, to;
  double factor = 1;        // predicted / measured
  double predicted_ms = 0;  // measured x factor
  double gain_ms = 0;       // measured - predicted
  bool meets_target = false;
  bool available = true;  // false: Hearth cannot run it on this setup
  std::string reason;     // one sentence for the user
};

struct Advice {
  enum class Verdict { kNotEnoughData, kMeetsTarget, kTransient, kOverTarget };
  Verdict verdict = Verdict::kNotEnoughData;
  double measured_ms = 0;  // p99 of the whole window (nearest rank)
  double recent_ms = 0;    // p99 of its newer half
  std::size_t samples = 0;
  std::vector<Suggestion> suggestions;    // kOverTarget only: lightest change first
  std::optional<Suggestion> recommended;  // the lightest available one that meets the target, else the best available
};

// Bits per weight of a weight format name (0: unknown).
double bits_per_weight(const std::string& format);
// The next coarser format on the ladder F32 > F16 > Q8_0 > Q6_K > Q5_K_M > Q4_K_M ("" at the end or unknown).
std::string coarser_format(const std::string& format);
// Nearest-rank percentile p in (0, 1] of `v` (0 when empty).
double percentile(std::span<const double> v, double p);

// `window`: the measurements, oldest first (ms). Missed for good: the p99 of
// the whole window and of its newer half both above the target.
Advice advise(const LatencyTarget& target, std::span<const double> window, const CurrentSetup& setup,
              const AdviceOptions& options = {});

}  // namespace hearth::advice
