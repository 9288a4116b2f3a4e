#include "engine/backend/ceilings.h"

#include <map>
#include <mutex>

namespace hearth::backend {

DeviceCeilings cached_ceilings(const std::string& device_key, const std::function<DeviceCeilings()>& measure) {
  if (device_key.empty() || !measure) return {};
  static std::mutex mu;
  static std::map<std::string, DeviceCeilings> cache;
  // Held while measuring: two engines on one device must not probe it at the same time.
  std::lock_guard lock(mu);
  const auto it = cache.find(device_key);
  if (it != cache.end()) return it->second;
  return cache.emplace(device_key, measure()).first->second;
}

}  // namespace hearth::backend
