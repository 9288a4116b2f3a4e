#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <cassert>
#include <chrono>

namespace hearth::kernels {
namespace {

constexpr auto kSpinFor = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until pred() or kSpinFor elapsed; returns pred().
template <typename Pred>
bool spin_until(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinFor;
  for (int i = 0;; ++i) {
    if (pred()) return true;
    cpu_relax();
    if ((i & 255) == 255 && std::chrono::steady_clock::now() > deadline) return pred();
  }
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  wake_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::work_on_chunks() {
  for (;;) {
    const int64_t c = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (c >= n_chunks_) return;
    const int64_t b = begin_ + c * chunk_;
    fn_(ctx_, b, std::min(end_, b + chunk_));
  }
}

bool ThreadPool::wait_for_job(uint64_t seen) {
  auto ready = [&] {
    return generation_.load(std::memory_order_acquire) != seen || stop_.load(std::memory_order_acquire);
  };
  if (!spin_until(ready)) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_cv_.wait(lock, ready);
  }
  return !stop_.load(std::memory_order_acquire);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  while (wait_for_job(seen)) {
    seen = generation_.load(std::memory_order_acquire);
    work_on_chunks();
    if (workers_busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);  // pairs with the caller's predicate check
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t begin, int64_t end, int64_t grain, ChunkFn fn, const void* ctx) {
  if (end <= begin) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t range = end - begin;
  // About 4 chunks per thread balance uneven progress without much overhead.
  const int64_t chunk = std::max(grain, (range + 4 * n_threads_ - 1) / (4 * n_threads_));
  const int64_t n_chunks = (range + chunk - 1) / chunk;
  if (n_threads_ == 1 || n_chunks == 1) {
    for (int64_t b = begin; b < end; b += chunk) fn(ctx, b, std::min(end, b + chunk));
    return;
  }
  assert(workers_busy_.load() == 0 && "ThreadPool::parallel_for is not reentrant");
  fn_ = fn;
  ctx_ = ctx;
  begin_ = begin;
  end_ = end;
  chunk_ = chunk;
  n_chunks_ = n_chunks;
  next_chunk_.store(0, std::memory_order_relaxed);
  workers_busy_.store(n_threads_ - 1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_cv_.notify_all();
  work_on_chunks();
  auto done = [&] { return workers_busy_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(done)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, done);
  }
}

}  // namespace hearth::kernels
