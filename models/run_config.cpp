#include "models/run_config.h"

#include "models/weight_convert.h"

namespace hearth::models {

Result<void> validate(const RunConfig& c) {
  HEARTH_TRY(parse_device(c.device));  // the build's devices are load_model's business: a plan may be for another
  if (c.context_length < 0 || c.context_length == 1) {
    return make_error(ErrorCode::kInvalidArgument, "context_length must be 0 (the default) or at least 2");
  }
  if (c.threads < 0) return make_error(ErrorCode::kInvalidArgument, "threads must be 0 (every core) or more");
  if (c.max_batch_tokens < 0) {
    return make_error(ErrorCode::kInvalidArgument, "max_batch_tokens must be 0 (the device's default) or more");
  }
  if (c.max_sequences < 1) return make_error(ErrorCode::kInvalidArgument, "max_sequences must be >= 1");
  if (c.kv_block_size < 1) return make_error(ErrorCode::kInvalidArgument, "kv_block_size must be >= 1");
  if (!c.quant.empty()) HEARTH_TRY(parse_weight_quant(c.quant));
  return {};
}

Result<RunConfig> apply_flags(RunConfig c, const EngineFlags& flags) {
  const std::optional<KvPrecision> precision = parse_kv_precision(flags.kv);
  if (!precision)
    return make_error(ErrorCode::kInvalidArgument, "--kv '" + flags.kv + "' is not one of f16, q8_0, fp8");
  c.kv_precision = flags.kv_fp8 ? KvPrecision::kFp8E4M3 : *precision;
  c.memory_budget_bytes = flags.vram_budget_mib << 20;
  c.refine_activations = !flags.q8_activations;
  return c;
}

LoadOptions load_options(const RunConfig& c, std::string_view device) {
  LoadOptions o;
  o.n_threads = c.threads;
  o.device = std::string(device);
  o.kv_precision = c.kv_precision;
  o.refine_activations = c.refine_activations;
  o.vram_budget_bytes = c.memory_budget_bytes;
  o.quant = c.quant;
  return o;
}

std::int32_t default_batch_tokens(std::string_view device) {
  return device == "cpu" ? 256 : 512;
}

RunConfig for_device(RunConfig c, std::string_view device) {
  if (c.max_batch_tokens == 0) c.max_batch_tokens = default_batch_tokens(device);
  return c;
}

EngineOptions engine_options(const RunConfig& config, std::string_view device) {
  const RunConfig c = for_device(config, device);
  EngineOptions o;
  o.context_length = c.context_length;
  o.kv_block_size = c.kv_block_size;
  o.kv_budget_bytes = c.kv_budget_bytes;
  o.max_batch_tokens = c.max_batch_tokens;
  o.max_sequences = c.max_sequences;
  o.prefix_cache = c.prefix_cache;
  return o;
}

}  // namespace hearth::models
