// models::plan(): what a model will take, from its GGUF alone. The KV pool and
// context come from the engine's own sizing rule (engine_sizing), so the plan
// and Engine::create cannot disagree about them.
#include <algorithm>

#include "hearth/devices.h"
#include "models/architecture.h"
#include "models/run_config.h"
#include "models/weight_convert.h"
#include "models/weight_format.h"

namespace hearth::models {
namespace {

// K and V of one block over all layers: 2 x n_layer x block x n_kv_head x head_dim elements.
std::size_t kv_block_bytes(const ModelHyperParams& hp, std::int32_t block_size, KvPrecision kv) {
  const double elements =
      2.0 * hp.n_layer * static_cast<double>(block_size) * hp.n_head_kv * static_cast<double>(hp.head_dim);
  return static_cast<std::size_t>(elements * kv_bytes_per_element(kv));
}

// The activations of one step of `tokens` tokens: x, h ([n_embd]), q, attn
// ([n_head * head_dim]), k, v ([n_kv_head * head_dim]), gate, up ([n_ff]) per
// token, in f32. CUDA also keeps the logits of `rows` sequences on the device.
std::size_t workspace_bytes(const ModelHyperParams& hp, std::int32_t tokens, std::int32_t logit_rows, bool cuda) {
  const std::size_t q_dim = std::size_t{hp.n_head} * hp.head_dim;
  const std::size_t kv_dim = std::size_t{hp.n_head_kv} * hp.head_dim;
  const std::size_t per_token = 2 * std::size_t{hp.n_embd} + 2 * q_dim + 2 * kv_dim + 2 * std::size_t{hp.n_ff};
  std::size_t bytes = static_cast<std::size_t>(tokens) * per_token * sizeof(float);
  if (cuda) bytes += static_cast<std::size_t>(logit_rows) * hp.n_vocab * sizeof(float);
  return bytes;
}

}  // namespace

Result<RunPlan> plan(const gguf::GgufFile& file, const RunConfig& base, std::string_view device) {
  HEARTH_TRY(validate(base));
  const RunConfig config = for_device(base, device);
  const bool cuda = device != "cpu";
  const KvPrecision kv = config.kv_precision;
  HEARTH_ASSIGN_OR_RETURN(const ModelHyperParams hp, read_hparams(file));
  RunPlan p;
  p.architecture = hp.architecture;
  p.weight_format = weight_format_of(file);
  if (config.quant.empty()) {
    for (const gguf::TensorInfo& t : file.tensors()) p.weights_bytes += t.n_bytes;
  } else {
    HEARTH_ASSIGN_OR_RETURN(const gguf::GgmlType target, parse_weight_quant(config.quant));
    HEARTH_ASSIGN_OR_RETURN(const ConversionPlan converted, plan_conversion(file, target));
    p.weights_bytes = converted.weights_bytes;
    p.weight_format = config.quant;
  }
  p.kv_block_bytes = kv_block_bytes(hp, config.kv_block_size, kv);
  HEARTH_ASSIGN_OR_RETURN(const EngineSizing sizing,
                          engine_sizing(hp.n_ctx_train, p.kv_block_bytes, engine_options(config, device)));
  p.context_length = sizing.context_length;
  p.kv_blocks = sizing.kv_blocks;
  p.kv_bytes = static_cast<std::size_t>(p.kv_blocks) * p.kv_block_bytes;
  p.workspace_bytes = workspace_bytes(hp, config.max_batch_tokens, config.max_sequences, cuda);
  return p;
}

Result<RunPlan> plan(const std::filesystem::path& path, const RunConfig& config) {
  HEARTH_ASSIGN_OR_RETURN(const std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(path));
  std::string device = config.device;
  if (device == "auto") {
    const std::vector<DeviceInfo> devices = list_devices();
    device = devices.size() > 1 ? devices[1].id : "cpu";
  }
  return plan(*file, config, device);
}

}  // namespace hearth::models
