#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace hearth::kernels {
namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1;
  f.fma = (c >> 12) & 1;
  f.f16c = (c >> 29) & 1;
  unsigned long long xcr0 = 0;
  if (osxsave) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool ymm_ok = (xcr0 & 0x6) == 0x6;    // SSE and AVX state saved by the OS
  const bool zmm_ok = (xcr0 & 0xe6) == 0xe6;  // plus opmask and ZMM state
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = ymm_ok && ((b >> 5) & 1);
    f.avx512f = zmm_ok && ((b >> 16) & 1);
    f.avx512bw = zmm_ok && ((b >> 30) & 1);
    f.avx512vl = zmm_ok && ((b >> 31) & 1);
    f.avx512_vnni = zmm_ok && ((c >> 11) & 1);
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx_vnni = ymm_ok && ((a >> 4) & 1);
  f.fma = f.fma && ymm_ok;
  f.f16c = f.f16c && ymm_ok;
#endif
  const char* cap = std::getenv("HEARTH_CPU");
  if (cap && std::strcmp(cap, "scalar") == 0) f = CpuFeatures{};
  if (cap && std::strcmp(cap, "avx2") == 0) {
    f.avx512f = f.avx512bw = f.avx512vl = f.avx512_vnni = false;
  }
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

CpuLevel cpu_level() {
  const CpuFeatures& f = cpu_features();
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  if (avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512_vnni) return CpuLevel::kAvx512;
  if (avx2) return CpuLevel::kAvx2;
  return CpuLevel::kScalar;
}

const char* cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::kAvx512:
      return "avx512-vnni";
    case CpuLevel::kAvx2:
      return "avx2";
    case CpuLevel::kScalar:
      return "scalar";
  }
  return "scalar";
}

const char* cpu_path_name() {
  return cpu_level_name(cpu_level());
}

}  // namespace hearth::kernels
