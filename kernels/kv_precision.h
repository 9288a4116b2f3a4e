// How the KV cache stores K and V: the one enum for it, from the kernels (which
// lay the cache out) up to the settings file and the command line (which name
// it through engine/include/hearth/run_types.h). It sits at the lowest layer
// that needs it so every layer above names the same type.
//
// Serialized by name ("f16", "q8_0", "fp8": hearth::to_string): do not rename
// those names; the numeric values are never written anywhere.
#pragma once

namespace hearth {

enum class KvPrecision {
  kF16,      // IEEE half: 2 bytes per element (every backend)
  kQ8_0,     // 8-bit blocks of 32 with an f16 scale: 34 bytes per 32 elements (the CPU backend)
  kFp8E4M3,  // FP8 E4M3, one scale per tensor (K or V of a layer): 1 byte per element (CUDA only)
};

}  // namespace hearth
