#include "models/llama/llama_cuda_model.h"

namespace hearth::models {

Result<std::unique_ptr<LlamaCudaModel>> LlamaCudaModel::load(std::unique_ptr<gguf::GgufFile> file,
                                                             const LlamaCudaOptions& options) {
  cuda::CudaBackendOptions backend_options;
  backend_options.device = options.device;
  backend_options.kv_precision = options.kv_precision;
  backend_options.vram_budget_bytes = options.vram_budget_bytes;
  backend_options.layer_timing_interval = options.layer_timing_interval;
  backend_options.cuda_graphs = options.cuda_graphs;
  HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaBackend> ops, cuda::CudaBackend::create(backend_options));
  const cuda::CudaBackend* raw = ops.get();
  std::unique_ptr<LlamaCudaModel> model(new LlamaCudaModel(std::move(ops), raw));
  HEARTH_TRY(model->init(std::move(file), false));
  return model;  // the file (and its mapping) goes here: the weights live on the device
}

LlamaCudaModel::LlamaCudaModel(std::unique_ptr<cuda::CudaBackend> ops, const cuda::CudaBackend* cuda)
    : LlamaModel(std::move(ops)), cuda_(cuda) {}

}  // namespace hearth::models
