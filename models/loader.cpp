#include "models/loader.h"

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/chat/chat_format.h"
#include "engine/core/log.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "engine/tokenizer/vocab_from_gguf.h"
#include "models/architecture.h"
#include "models/gemma3/gemma3_model.h"
#include "models/llama/llama_model.h"
#include "models/weight_convert.h"
#include "models/weight_format.h"
#if defined(HEARTH_HAVE_CUDA)
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_context.h"
#include "models/llama/llama_cuda_model.h"
#endif

namespace hearth::models {
namespace {

bool have_cuda_device() {
#if defined(HEARTH_HAVE_CUDA)
  return cuda::device_count() > 0;
#else
  return false;
#endif
}

Result<std::unique_ptr<Model>> load_llama(std::unique_ptr<gguf::GgufFile> file, const LoadOptions& options,
                                          const DeviceChoice& device) {
  if (!device.cuda) {
    HEARTH_ASSIGN_OR_RETURN(
        auto model, LlamaModel::load(std::move(file), LlamaOptions{options.n_threads, options.refine_activations,
                                                                   options.kv_precision}));
    return std::unique_ptr<Model>(std::move(model));
  }
#if defined(HEARTH_HAVE_CUDA)
  LlamaCudaOptions cuda_options;
  cuda_options.device = device.cuda_device;
  cuda_options.kv_precision = options.kv_precision;
  cuda_options.vram_budget_bytes = options.vram_budget_bytes;
  HEARTH_ASSIGN_OR_RETURN(auto model, LlamaCudaModel::load(std::move(file), cuda_options));
  return std::unique_ptr<Model>(std::move(model));
#else
  return make_error(ErrorCode::kUnsupported, "device cuda: Hearth was built without CUDA");
#endif
}

// Architectures other than the llama family: one model class over a backend
// made here (the llama family keeps LlamaCudaModel for its GPU accessors).
Result<std::unique_ptr<Model>> load_gemma3(std::unique_ptr<gguf::GgufFile> file, const LoadOptions& options,
                                           const DeviceChoice& device) {
  if (!device.cuda) {
    auto ops = std::make_unique<cpu::CpuBackend>(
        cpu::CpuBackendOptions{options.n_threads, options.refine_activations, options.kv_precision});
    HEARTH_ASSIGN_OR_RETURN(auto model, Gemma3Model::load_on(std::move(ops), std::move(file), true));
    return std::unique_ptr<Model>(std::move(model));
  }
#if defined(HEARTH_HAVE_CUDA)
  cuda::CudaBackendOptions cuda_options;
  cuda_options.device = device.cuda_device;
  cuda_options.kv_precision = options.kv_precision;
  cuda_options.vram_budget_bytes = options.vram_budget_bytes;
  HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaBackend> ops, cuda::CudaBackend::create(cuda_options));
  HEARTH_ASSIGN_OR_RETURN(auto model, Gemma3Model::load_on(std::move(ops), std::move(file), false));
  return std::unique_ptr<Model>(std::move(model));
#else
  return make_error(ErrorCode::kUnsupported, "device cuda: Hearth was built without CUDA");
#endif
}

Result<std::unique_ptr<Model>> load_architecture(std::unique_ptr<gguf::GgufFile> file, const LoadOptions& options,
                                                 const DeviceChoice& device) {
  HEARTH_ASSIGN_OR_RETURN(std::string_view arch, file->get_string("general.architecture"));
  if (arch == "gemma3") return load_gemma3(std::move(file), options, device);
  return load_llama(std::move(file), options, device);
}

// options.quant's conversion of the file's matrices (nothing when it is empty).
Result<std::optional<ConversionReport>> convert_as_asked(gguf::GgufFile& file, const LoadOptions& options) {
  if (options.quant.empty()) return std::optional<ConversionReport>{};
  HEARTH_ASSIGN_OR_RETURN(const gguf::GgmlType target, parse_weight_quant(options.quant));
  HEARTH_ASSIGN_OR_RETURN(ConversionReport report, convert_weights(file, target, options.n_threads));
  log::get("models")->info("weights converted {} -> {}: {} matrices in {:.0f} ms", report.from, report.to,
                           report.matrices, report.ms);
  return std::optional<ConversionReport>(std::move(report));
}

ModelRunInfo run_info(const gguf::GgufFile& file, const DeviceChoice& device, KvPrecision kv,
                      const std::optional<ConversionReport>& converted) {
  ModelRunInfo info;
  info.device = device.cuda ? "cuda:" + std::to_string(device.cuda_device) : "cpu";
  info.device_name = device.cuda ? "CUDA device " + std::to_string(device.cuda_device) : "CPU";
  info.kv_precision = kv;
  info.weight_format = weight_format_of(file);
  if (converted) {
    info.weights_converted_from = converted->from;
    info.conversion_ms = converted->ms;
  }
  return info;
}

}  // namespace

Result<DeviceChoice> parse_device(std::string_view device) {
  if (device == "cpu" || device == "auto") return DeviceChoice{};
  int index = 0;
  if (device.starts_with("cuda:")) {
    const std::string_view digits = device.substr(5);
    if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string_view::npos) {
      return make_error(ErrorCode::kInvalidArgument, "device '" + std::string(device) + "': expected cuda:N");
    }
    index = std::stoi(std::string(digits));
  } else if (device != "cuda") {
    return make_error(ErrorCode::kInvalidArgument,
                      "device '" + std::string(device) + "' is not one of cpu, cuda, cuda:N, auto");
  }
  return DeviceChoice{true, index};
}

Result<DeviceChoice> choose_device(std::string_view device) {
  if (device == "auto") return DeviceChoice{have_cuda_device(), 0};
  HEARTH_ASSIGN_OR_RETURN(const DeviceChoice choice, parse_device(device));
#if !defined(HEARTH_HAVE_CUDA)
  if (choice.cuda) {
    return make_error(ErrorCode::kUnsupported, "device " + std::string(device) + ": Hearth was built without CUDA");
  }
#endif
  return choice;
}

Result<ModelBundle> load_model(const std::filesystem::path& path, const LoadOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(const DeviceChoice device, choose_device(options.device));
  const KvPrecision kv = options.kv_precision;  // every backend runs f16, q8_0 and fp8
  HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(path));
  // The architecture, and every tensor's presence, shape and type, before
  // the vocabulary, the weights or the KV cache take any memory.
  HEARTH_TRY(check_weights(*file));
  ModelBundle bundle;
  HEARTH_ASSIGN_OR_RETURN(const std::optional<ConversionReport> converted, convert_as_asked(*file, options));
  HEARTH_ASSIGN_OR_RETURN(bundle.vocabulary, tokenizer::vocabulary_from_gguf(*file));
  std::string_view file_template;
  if (auto t = file->get_string("tokenizer.chat_template")) file_template = *t;
  const tokenizer::Vocabulary& vocab = *bundle.vocabulary;
  const chat::ChatFormat format =
      chat::choose_chat_format(file_template, vocab.find("<start_of_turn>") && vocab.find("<end_of_turn>"));
  bundle.chat_template = format.source;  // "" for chatml: the engine's own fallback renders it
  if (format.fallback) log::get("models")->info("chat format: {}", format.describe());
  // The path and size identify the weights for the prefix cache of one process;
  // callers that need a content identity hash the file (models/catalog.h).
  bundle.model_id = std::filesystem::absolute(path).string() + ":" + std::to_string(file->file_size()) +
                    (options.quant.empty() ? "" : ":" + options.quant);
  bundle.run = run_info(*file, device, kv, converted);
  bundle.weights_lost = [watch = file->mapping_watch()] { return watch.lost(); };
  bundle.run.chat_format = format.describe();
  auto model = load_architecture(std::move(file), options, device);
  if (!model && device.cuda && options.device == "auto" && model.error().code == ErrorCode::kOutOfMemory) {
    // "auto" prefers the GPU but must not fail where the CPU can run the model.
    log::get("models")->warn("the model does not fit the GPU ({}); running it on the CPU", model.error().message);
    HEARTH_ASSIGN_OR_RETURN(file, gguf::GgufFile::open(path));
    HEARTH_ASSIGN_OR_RETURN(const std::optional<ConversionReport> again, convert_as_asked(*file, options));
    bundle.run = run_info(*file, DeviceChoice{}, KvPrecision::kF16, again);
    bundle.run.chat_format = format.describe();
    bundle.run.device_reason = "auto: the model does not fit the GPU (" + model.error().message + ")";
    bundle.weights_lost = [watch = file->mapping_watch()] { return watch.lost(); };
    model = load_architecture(std::move(file), options, DeviceChoice{});
  }
  if (!model) return std::move(model).error();
  if (bundle.weights_lost()) {
    return make_error(ErrorCode::kIo, path.string() + ": the file shrank while it was being loaded");
  }
  bundle.model = std::move(model).value();
  return bundle;
}

}  // namespace hearth::models
