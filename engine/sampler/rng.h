// The sampler's random source: xoshiro256** (Blackman & Vigna, 2018), its
// 256-bit state seeded by four outputs of splitmix64 from the 64-bit seed.
// Fully specified here, so a seed gives the same draws on every platform and
// standard library.
#pragma once

#include <array>
#include <cstdint>

namespace hearth {

// splitmix64: advances `state` by the golden-ratio increment and returns its mix.
uint64_t splitmix64_next(uint64_t& state);

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) { reseed(seed); }
  void reseed(uint64_t seed);
  uint64_t next();
  // Uniform in [0, 1): the top 53 bits of next() times 2^-53.
  double next_double();

 private:
  std::array<uint64_t, 4> s_{};
};

}  // namespace hearth
