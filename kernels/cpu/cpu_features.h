// What the CPU we run on can do, read once with cpuid. Kernels are compiled
// for several instruction sets and dispatched through this at run time.
#pragma once

namespace hearth::kernels {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512_vnni = false;
  bool avx_vnni = false;
};

// Detected once (thread-safe); HEARTH_CPU=scalar|avx2 in the environment caps
// what is reported, so tests and benchmarks can force a code path.
const CpuFeatures& cpu_features();

// "avx512-vnni", "avx2", or "scalar": the widest path the kernels will use.
const char* cpu_path_name();

// The kernel builds, narrowest first. kAvx2 needs AVX2+FMA+F16C; kAvx512 needs
// those plus AVX-512 F/BW/VL and VNNI.
enum class CpuLevel { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

// The widest level this CPU (capped by HEARTH_CPU) supports.
CpuLevel cpu_level();
const char* cpu_level_name(CpuLevel level);

}  // namespace hearth::kernels
