#include "engine/gguf/mapping_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace hearth::gguf {
namespace {

// Read by the signal handler: lock-free atomics only. `generation` changes
// on every registration, so a stale watch never reads a newer range's state.
struct Slot {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<std::uint64_t> generation{0};
  std::atomic<bool> lost{false};
};

constexpr int kSlots = 64;
Slot g_slots[kSlots];
std::mutex g_register_mu;  // registration only; never taken by the handler
struct sigaction g_previous {};
std::uintptr_t g_page_size = 4096;

void pass_on(int sig, siginfo_t* info, void* context) {
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler != nullptr) {
    g_previous.sa_handler(sig);
    return;
  }
  // Not ours and nobody else's: restore the default so the faulting
  // instruction, re-run on return, ends the process with SIGBUS as before.
  ::signal(SIGBUS, SIG_DFL);
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const std::uintptr_t begin = s.begin.load(std::memory_order_acquire);
    const std::uintptr_t end = s.end.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr >= end) continue;
    const std::uintptr_t page = addr & ~(g_page_size - 1);
    // mmap is a plain system call here (no allocation, no locks): safe enough
    // in a handler, and the only way to make the faulting read succeed.
    void* m =
        ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (m != MAP_FAILED) {
      s.lost.store(true, std::memory_order_release);
      return;
    }
    break;
  }
  pass_on(sig, info, context);
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page_size = static_cast<std::uintptr_t>(page);
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
  });
}

}  // namespace

bool MappingWatch::lost() const {
  if (slot < 0 || slot >= kSlots) return false;
  const Slot& s = g_slots[slot];
  return s.generation.load(std::memory_order_acquire) == generation && s.lost.load(std::memory_order_acquire);
}

MappingWatch guard_mapping(const void* base, std::size_t size) {
  install_once();
  std::lock_guard<std::mutex> lock(g_register_mu);
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    if (s.begin.load() != 0) continue;
    const std::uint64_t generation = s.generation.load() + 1;
    s.lost.store(false);
    s.generation.store(generation);
    s.end.store(reinterpret_cast<std::uintptr_t>(base) + size);
    s.begin.store(reinterpret_cast<std::uintptr_t>(base), std::memory_order_release);
    return MappingWatch{i, generation};
  }
  return MappingWatch{};
}

void unguard_mapping(const MappingWatch& watch) {
  if (watch.slot < 0 || watch.slot >= kSlots) return;
  std::lock_guard<std::mutex> lock(g_register_mu);
  Slot& s = g_slots[watch.slot];
  if (s.generation.load() != watch.generation) return;
  s.begin.store(0, std::memory_order_release);
  s.end.store(0);
}

}  // namespace hearth::gguf
