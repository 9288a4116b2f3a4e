// models::open_engine(): the one way a front end starts an engine. It resolves
// the model, decides the device (for "auto" with a plan against the GPU's free
// memory, saying why), loads the model and creates the engine; "auto" falls
// back to the CPU when the GPU runs out of memory after all.
#include <cstdio>

#include "engine/core/log.h"
#include "hearth/devices.h"
#include "models/catalog.h"
#include "models/run_config.h"

namespace hearth::models {
namespace {

struct DeviceDecision {
  std::string device;  // "cpu" or "cuda:N"
  std::string name;    // for display
  std::string reason;  // why (empty when the configuration named the device)
  RunPlan plan;
};

const DeviceInfo* find_device(const std::vector<DeviceInfo>& devices, std::string_view id) {
  for (const DeviceInfo& d : devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

Result<DeviceDecision> on_cpu(const gguf::GgufFile& file, const RunConfig& config, const DeviceInfo& cpu,
                              std::string reason) {
  HEARTH_ASSIGN_OR_RETURN(RunPlan p, plan(file, config, "cpu"));
  return DeviceDecision{"cpu", cpu.name, std::move(reason), std::move(p)};
}

// "auto": the first CUDA device when the planned bytes (and the runtime's
// headroom) fit its free memory and the budget, else the CPU.
Result<DeviceDecision> decide_auto(const gguf::GgufFile& file, const RunConfig& config,
                                   const std::vector<DeviceInfo>& devices) {
  const DeviceInfo* gpu = devices.size() > 1 ? &devices[1] : nullptr;
  if (gpu == nullptr) {
#if defined(HEARTH_HAVE_CUDA)
    return on_cpu(file, config, devices[0], "auto: no CUDA device found");
#else
    return on_cpu(file, config, devices[0], "auto: built without CUDA");
#endif
  }
  HEARTH_ASSIGN_OR_RETURN(RunPlan p, plan(file, config, gpu->id));
  const std::size_t need = p.total_bytes();
  const bool over_budget = config.memory_budget_bytes > 0 && need > config.memory_budget_bytes;
  // Short: the model bar shows it.
  const std::string needs = "auto: needs " + bytes_text(need);
  if (over_budget) {
    return on_cpu(file, config, devices[0], needs + ", over the " + bytes_text(config.memory_budget_bytes) + " budget");
  }
  if (need + kCudaHeadroomBytes > gpu->free_bytes) {
    return on_cpu(file, config, devices[0],
                  needs + ", " + gpu->name + " has only " + bytes_text(gpu->free_bytes) + " free");
  }
  std::string why = needs + " of " + gpu->name + "'s " + bytes_text(gpu->free_bytes) + " free";
  return DeviceDecision{gpu->id, gpu->name, std::move(why), std::move(p)};
}

Result<DeviceDecision> decide_device(const gguf::GgufFile& file, const RunConfig& config) {
  const std::vector<DeviceInfo> devices = list_devices();  // the CPU first, always
  if (config.device == "auto") return decide_auto(file, config, devices);
  HEARTH_ASSIGN_OR_RETURN(const DeviceChoice choice, choose_device(config.device));
  const std::string id = choice.cuda ? "cuda:" + std::to_string(choice.cuda_device) : "cpu";
  const DeviceInfo* info = find_device(devices, id);
  if (info == nullptr) {
    return make_error(ErrorCode::kNotFound, "device " + config.device + ": no such CUDA device (" +
                                                std::to_string(devices.size() - 1) + " found)");
  }
  HEARTH_ASSIGN_OR_RETURN(RunPlan p, plan(file, config, id));
  return DeviceDecision{id, info->name, "", std::move(p)};
}

Result<std::unique_ptr<Engine>> load_and_create(const std::filesystem::path& path, const RunConfig& config,
                                                const DeviceDecision& d) {
  HEARTH_ASSIGN_OR_RETURN(ModelBundle bundle, load_model(path, load_options(config, d.device)));
  bundle.run.device_name = d.name;
  bundle.run.device_reason = d.reason;
  return Engine::create(std::move(bundle), engine_options(config, d.device));
}

}  // namespace

std::string bytes_text(std::size_t bytes) {
  char text[32];
  if (bytes >= (std::size_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  } else {
    std::snprintf(text, sizeof text, "%zu MiB", bytes >> 20);
  }
  return text;
}

Result<DevicePlan> plan_device(std::string_view path_or_name, const RunConfig& config) {
  HEARTH_TRY(validate(config));
  DevicePlan out;
  HEARTH_ASSIGN_OR_RETURN(out.path, resolve_model(path_or_name));
  HEARTH_ASSIGN_OR_RETURN(const std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(out.path));
  HEARTH_ASSIGN_OR_RETURN(DeviceDecision d, decide_device(*file, config));
  const std::vector<DeviceInfo> devices = list_devices();
  if (const DeviceInfo* info = find_device(devices, d.device); info != nullptr) {
    out.free_bytes = info->free_bytes;
    out.total_bytes = info->total_bytes;
  }
  out.device = std::move(d.device);
  out.device_name = std::move(d.name);
  out.reason = std::move(d.reason);
  out.plan = std::move(d.plan);
  return out;
}

Result<OpenedEngine> open_engine(std::string_view path_or_name, const RunConfig& config) {
  HEARTH_TRY(validate(config));
  OpenedEngine out;
  HEARTH_ASSIGN_OR_RETURN(out.path, resolve_model(path_or_name));
  DeviceDecision decision;
  {
    HEARTH_ASSIGN_OR_RETURN(const std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(out.path));
    HEARTH_ASSIGN_OR_RETURN(decision, decide_device(*file, config));
    if (config.device == "auto") log::get("models")->info("{}: {}", decision.device, decision.reason);
    Result<std::unique_ptr<Engine>> engine = load_and_create(out.path, config, decision);
    if (!engine && decision.device != "cpu" && config.device == "auto" &&
        engine.error().code == ErrorCode::kOutOfMemory) {
      // The plan fitted but the GPU did not (another process took memory meanwhile).
      log::get("models")->warn("{}; running the model on the CPU", engine.error().message);
      HEARTH_ASSIGN_OR_RETURN(decision,
                              on_cpu(*file, config, list_devices().front(),
                                     "auto: the GPU ran out of memory while loading (" + engine.error().message + ")"));
      engine = load_and_create(out.path, config, decision);
    }
    if (!engine) return std::move(engine).error();
    out.engine = std::move(engine).value();
  }
  out.plan = std::move(decision.plan);
  return out;
}

}  // namespace hearth::models
