// Keeps a model file that shrinks while memory-mapped from killing the process.
//
// The engine maps GGUF files read-only and the CPU backend reads weights from
// the mapping on every step. If another program truncates the file or rewrites
// it in place, touching a page past the new end raises SIGBUS (a file replaced
// by rename is harmless: the old inode lives as long as it is mapped). Copying
// every weight into private memory would double load time and give up sharing
// the page cache; MAP_PRIVATE does not help (untouched pages still come from
// the file); Linux has no mandatory locks. So the design is a guarded mapping:
//
// - guard_mapping() registers the mapped range in a fixed table that a SIGBUS
//   handler (installed once, chaining to any previous handler) reads.
// - On a fault inside a registered range the handler maps anonymous zero pages
//   over the rest of the range (MAP_FIXED), marks the range lost and returns:
//   the faulting read completes with zeros instead of killing the process.
// - Whoever uses the mapping checks lost() at points where it can still refuse
//   the result: the loader after loading, the engine after every forward pass
//   (ModelBundle::weights_valid), and ends the work with a clear error.
// A fault outside every registered range behaves exactly as before (the
// previous handler, or the default action: the process dies with SIGBUS).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::gguf {

// Identifies one registration; a default one (slot -1) is never lost.
struct MappingWatch {
  int slot = -1;
  std::uint64_t generation = 0;

  // True once a read of the range faulted because the file shrank.
  bool lost() const;
};

// Registers [base, base + size); an unguarded watch when the table (64
// entries) is full. Thread-safe.
MappingWatch guard_mapping(const void* base, std::size_t size);
// Call before unmapping the range.
void unguard_mapping(const MappingWatch& watch);

}  // namespace hearth::gguf
