// The devices a model can run on, for the app's device menu and the "auto"
// choice: the CPU first, then each CUDA device the driver reports. Without
// CUDA (a build without it, no driver, no GPU) the list holds the CPU alone.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hearth {

struct DeviceInfo {
  std::string id;    // "cpu" or "cuda:N": the spelling of --device and the settings file
  std::string name;  // "CPU (AMD EPYC ...)" or the GPU's name
  bool cuda = false;
  int cuda_index = -1;         // N of "cuda:N"; -1 for the CPU
  std::size_t free_bytes = 0;  // CPU: MemAvailable; CUDA: cudaMemGetInfo's free (all processes)
  std::size_t total_bytes = 0;
  double peak_bandwidth_bytes_per_s = 0;  // CUDA: the memory's peak (clock x bus width); CPU: 0 (unknown)
};

// Asks the system (and the CUDA driver) now: call it when the menu opens, not per frame.
std::vector<DeviceInfo> list_devices();

}  // namespace hearth
