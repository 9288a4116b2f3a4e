#include "models/recommend.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "engine/backend/cpu/cpu_ceilings.h"
#include "engine/backend/cpu/cpu_ops.h"
#include "models/architecture.h"

namespace hearth::models {
namespace {

constexpr std::int32_t kGpuContextCap = 32768, kCpuContextCap = 8192;

std::string rate_text(double bytes_per_s) {
  char text[32];
  if (bytes_per_s >= 1e12) {
    std::snprintf(text, sizeof text, "%.1f TB/s", bytes_per_s / 1e12);
  } else {
    std::snprintf(text, sizeof text, "%.0f GB/s", bytes_per_s / 1e9);
  }
  return text;
}

// The memory a plan may take on a device: a GPU's free memory less the
// runtime's headroom; 3/4 of the CPU's available RAM (the desktop, the
// browser and the page cache of the mapped weights live there too).
std::size_t usable_bytes(const DeviceInfo& d) {
  if (d.cuda) return d.free_bytes > kCudaHeadroomBytes ? d.free_bytes - kCudaHeadroomBytes : 0;
  return d.free_bytes / 4 * 3;
}

// The largest power of two not above `n` (n >= 1).
std::int32_t floor_pow2(std::int32_t n) {
  std::int32_t p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

// The model's trained context (8192 when the file does not say).
std::int32_t trained_context(const ModelHyperParams& hp) {
  return hp.n_ctx_train > 0 ? static_cast<std::int32_t>(std::min<std::uint32_t>(hp.n_ctx_train, 1u << 30))
                            : kCpuContextCap;
}

struct Fit {
  RunConfig config;
  RunPlan plan;
};

// The longest context (and, at it, f16 before the device's compact KV
// precision) whose plan fits `d`; nothing when even kMinContext does not.
Result<std::optional<Fit>> best_fit(const gguf::GgufFile& file, const ModelHyperParams& hp, const DeviceInfo& d,
                                    RunConfig c) {
  const std::int32_t trained = trained_context(hp);
  const std::int32_t cap = std::min(trained, d.cuda ? kGpuContextCap : kCpuContextCap);
  const std::int32_t floor_ctx = std::min(trained, kMinContext);
  const KvPrecision compact = d.cuda ? KvPrecision::kFp8E4M3 : KvPrecision::kQ8_0;
  c.device = d.id;
  c.max_sequences = d.cuda ? 16 : 4;
  c.max_batch_tokens = default_batch_tokens(d.cuda ? "cuda" : "cpu");
  for (std::int32_t ctx = cap == trained ? cap : floor_pow2(cap); ctx >= floor_ctx;
       ctx = ctx == floor_ctx ? 0 : std::max(floor_ctx, ctx / 2)) {
    for (const KvPrecision kv : {KvPrecision::kF16, compact}) {
      c.context_length = ctx;
      c.kv_precision = kv;
      HEARTH_ASSIGN_OR_RETURN(RunPlan p, plan(file, c, d.id));
      if (p.total_bytes() <= usable_bytes(d)) return std::optional<Fit>(Fit{c, std::move(p)});
    }
  }
  return std::optional<Fit>();
}

}  // namespace

MachineView this_machine(bool measure_cpu) {
  MachineView m;
  m.devices = list_devices();
  for (const DeviceInfo& d : m.devices) {
    double bw = d.peak_bandwidth_bytes_per_s;
    if (!d.cuda && measure_cpu) {
      cpu::CpuOps ops(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
      bw = cpu::measure_cpu_read_bandwidth(ops);
    }
    m.bandwidth_bytes_per_s.push_back(bw);
  }
  return m;
}

Result<Recommendation> recommend(const gguf::GgufFile& file, const MachineView& machine, const RunConfig& base) {
  if (machine.devices.empty() || machine.devices.front().cuda) {
    return make_error(ErrorCode::kInvalidArgument, "recommend: the machine's device list must start with the CPU");
  }
  HEARTH_ASSIGN_OR_RETURN(const ModelHyperParams hp, read_hparams(file));
  const auto bandwidth = [&](std::size_t i) {
    return i < machine.bandwidth_bytes_per_s.size() ? machine.bandwidth_bytes_per_s[i] : 0.0;
  };
  Recommendation r;
  std::size_t chosen = 0;
  std::optional<Fit> fit;
  std::vector<std::string> passed_over;
  for (std::size_t i = 1; i < machine.devices.size() && !fit; ++i) {
    const DeviceInfo& gpu = machine.devices[i];
    HEARTH_ASSIGN_OR_RETURN(fit, best_fit(file, hp, gpu, base));
    if (fit) {
      chosen = i;
    } else {
      passed_over.push_back(gpu.id + " (" + gpu.name + ") has " + bytes_text(gpu.free_bytes) +
                            " free: too little for the weights and a " + std::to_string(kMinContext) + "-token cache");
    }
  }
  if (!fit) {
    HEARTH_ASSIGN_OR_RETURN(fit, best_fit(file, hp, machine.devices[0], base));
    chosen = 0;
  }
  const DeviceInfo& d = machine.devices[chosen];
  r.device_name = d.name;
  r.free_bytes = d.free_bytes;
  if (!fit) {
    // Nothing fits: the smallest CPU plan, marked, so the caller can say what it needs.
    RunConfig c = base;
    c.device = "cpu";
    c.context_length = std::min(kMinContext, trained_context(hp));
    c.kv_precision = KvPrecision::kQ8_0;
    c.max_sequences = 4;
    c.max_batch_tokens = default_batch_tokens("cpu");
    HEARTH_ASSIGN_OR_RETURN(RunPlan p, plan(file, c, "cpu"));
    r.reasons.push_back("does not fit this machine: even " + std::to_string(c.context_length) +
                        " tokens of q8_0 cache on the CPU need " + bytes_text(p.total_bytes()) + ", " +
                        bytes_text(usable_bytes(d)) + " of its " + bytes_text(d.free_bytes) +
                        " free RAM is usable; a coarser --quant or a smaller model would");
    r.config = c;
    r.plan = std::move(p);
    return r;
  }
  r.fits = true;
  r.config = fit->config;
  r.plan = std::move(fit->plan);
  const RunPlan& p = r.plan;
  const double bw = bandwidth(chosen);
  if (bw > 0 && p.weights_bytes > 0) r.decode_tokens_per_s = bw / static_cast<double>(p.weights_bytes);

  std::string device_line = "device " + d.id + " (" + d.name + "): " + bytes_text(p.total_bytes()) + " (weights " +
                            bytes_text(p.weights_bytes) + ", KV " + bytes_text(p.kv_bytes) + ", workspace " +
                            bytes_text(p.workspace_bytes) + ") of " + bytes_text(d.free_bytes) + " free";
  if (d.cuda) {
    device_line += ", the first GPU it fits";
  } else {
    device_line += machine.devices.size() > 1 ? ", no GPU has room" : ", no CUDA device";
  }
  if (r.decode_tokens_per_s > 0) {
    char speed[96];
    std::snprintf(speed, sizeof speed, "; decode at most ~%.0f tok/s (%s read per token at %s)", r.decode_tokens_per_s,
                  bytes_text(p.weights_bytes).c_str(), rate_text(bw).c_str());
    device_line += speed;
    if (d.cuda && bandwidth(0) > 0) {
      std::snprintf(speed, sizeof speed, ", ~%.0f tok/s on the CPU",
                    bandwidth(0) / static_cast<double>(p.weights_bytes));
      device_line += speed;
    }
  }
  r.reasons.push_back(device_line);
  for (const std::string& s : passed_over) r.reasons.push_back("passed over " + s);

  const std::int32_t trained = trained_context(hp);
  const std::int32_t cap = d.cuda ? kGpuContextCap : kCpuContextCap;
  std::string ctx_line = "context " + std::to_string(p.context_length) + " tokens: ";
  if (p.context_length >= std::min(trained, cap)) {
    ctx_line += trained <= cap
                    ? "the model's trained context"
                    : "the trained " + std::to_string(trained) + " capped at " + std::to_string(cap) +
                          (d.cuda ? " on a GPU" : " on the CPU (prefill there takes seconds per thousand tokens)");
  } else {
    ctx_line += "the longest power of two whose cache fits (" + std::to_string(std::min(trained, cap)) + " does not)";
  }
  r.reasons.push_back(ctx_line);

  std::string kv_line = std::string("KV cache ") + to_string(r.config.kv_precision) + ": " + bytes_text(p.kv_bytes) +
                        " for two full contexts";
  if (r.config.kv_precision == KvPrecision::kF16) {
    kv_line += ", f16 fits";
  } else {
    kv_line += r.config.kv_precision == KvPrecision::kQ8_0
                   ? ", half of f16's bytes: f16 would not fit this context (q8_0 measured within 0.01% of f16's "
                     "perplexity on the default model)"
                   : ", half of f16's bytes: f16 would not fit this context";
  }
  r.reasons.push_back(kv_line);
  r.reasons.push_back("batch: " + std::to_string(r.config.max_sequences) + " sequences and " +
                      std::to_string(r.config.max_batch_tokens) + " tokens per step" +
                      (d.cuda ? " (a GPU decodes 16 sequences for little more than one)"
                              : " (the CPU's decode is bandwidth-bound: a few sequences share each pass over the "
                                "weights)"));
  return r;
}

std::vector<FitSuggestion> suggest_fits(const gguf::GgufFile& file, const RunConfig& config, const DevicePlan& dp) {
  std::vector<FitSuggestion> out;
  if (dp.plan.total_bytes() <= dp.free_bytes) return out;
  const bool cuda = dp.device != "cpu";
  RunConfig on_device = config;
  on_device.device = dp.device;
  // `c` planned on `device` against `free`: kept when it fits.
  const auto offer = [&](RunConfig c, const std::string& device, std::size_t free, std::string option,
                         std::string why) {
    const Result<RunPlan> p = plan(file, c, device);
    if (!p || p->total_bytes() > free) return false;
    c.device = device;
    out.push_back({std::move(option), std::move(why), std::move(c), p->total_bytes(), free});
    return true;
  };
  for (std::int32_t ctx = dp.plan.context_length / 2; ctx >= 512; ctx /= 2) {
    RunConfig c = on_device;
    c.context_length = ctx;
    if (offer(c, dp.device, dp.free_bytes, "--ctx " + std::to_string(ctx), "a shorter context: a smaller KV cache")) {
      break;
    }
  }
  if (cuda && config.kv_precision != KvPrecision::kFp8E4M3) {
    RunConfig c = on_device;
    c.kv_precision = KvPrecision::kFp8E4M3;
    offer(c, dp.device, dp.free_bytes, "--kv fp8", "an 8-bit KV cache: half the bytes per token");
  }
  if (!cuda && config.kv_precision == KvPrecision::kF16) {
    RunConfig c = on_device;
    c.kv_precision = KvPrecision::kQ8_0;
    offer(c, dp.device, dp.free_bytes, "--kv q8_0", "an 8-bit KV cache: 34 bytes per 32 values");
  }
  for (const char* quant : {"Q8_0", "Q5_0", "Q4_0"}) {  // the finest coarser format that fits
    RunConfig c = on_device;
    c.quant = quant;
    if (offer(c, dp.device, dp.free_bytes, std::string("--quant ") + quant,
              "a coarser weight format, converted at load")) {
      break;
    }
  }
  if (cuda) {
    const std::vector<DeviceInfo> devices = list_devices();
    if (!devices.empty()) {
      offer(on_device, "cpu", devices.front().free_bytes, "--device cpu",
            "the CPU: system memory instead of the GPU's");
    }
  }
  return out;
}

}  // namespace hearth::models
