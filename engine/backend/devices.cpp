#include "hearth/devices.h"

#include <fstream>
#include <string_view>

#if defined(HEARTH_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace hearth {
namespace {

// "model name : ..." of /proc/cpuinfo; "" elsewhere.
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("model name")) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string name = line.substr(colon + 1);
    name.erase(0, name.find_first_not_of(' '));
    return name;
  }
  return {};
}

// MemAvailable and MemTotal of /proc/meminfo, in bytes (0 when unreadable).
void system_memory(std::size_t& free_bytes, std::size_t& total_bytes) {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") free_bytes = kib << 10;
    if (key == "MemTotal:") total_bytes = kib << 10;
  }
}

#if defined(HEARTH_HAVE_CUDA)
// Each device's name and memory. cudaMemGetInfo needs the device current on
// this thread, so the caller's current device is put back afterwards.
void append_cuda_devices(std::vector<DeviceInfo>& out) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // no driver or no GPU: the CPU alone
    return;
  }
  int previous = 0;
  const bool had_previous = cudaGetDevice(&previous) == cudaSuccess;
  for (int i = 0; i < n; ++i) {
    DeviceInfo d;
    d.id = "cuda:" + std::to_string(i);
    d.cuda = true;
    d.cuda_index = i;
    cudaDeviceProp prop{};
    d.name = cudaGetDeviceProperties(&prop, i) == cudaSuccess ? std::string(prop.name) : "CUDA device " + d.id;
    int clock_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, i) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, i) == cudaSuccess) {
      // Double data rate: two transfers per clock over the bus.
      d.peak_bandwidth_bytes_per_s = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0);
    } else {
      static_cast<void>(cudaGetLastError());
    }
    if (cudaSetDevice(i) != cudaSuccess || cudaMemGetInfo(&d.free_bytes, &d.total_bytes) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      d.free_bytes = d.total_bytes = 0;  // listed, but with no memory known (the menu says so)
    }
    out.push_back(std::move(d));
  }
  if (had_previous) static_cast<void>(cudaSetDevice(previous));
}
#endif

}  // namespace

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  DeviceInfo cpu;
  cpu.id = "cpu";
  const std::string model = cpu_model_name();
  cpu.name = model.empty() ? "CPU" : "CPU (" + model + ")";
  system_memory(cpu.free_bytes, cpu.total_bytes);
  out.push_back(std::move(cpu));
#if defined(HEARTH_HAVE_CUDA)
  append_cuda_devices(out);
#endif
  return out;
}

}  // namespace hearth
