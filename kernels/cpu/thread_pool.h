// A fixed pool of threads for data-parallel kernels (matmul rows, attention
// heads). The calling thread participates: a pool of size N runs N - 1 worker
// threads plus the caller, so `--threads N` means N busy cores.
//
// Idle workers spin briefly (a decode step issues hundreds of short
// parallel_for calls back to back), then sleep on a condition variable: an idle
// pool burns no CPU after ~200 microseconds.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace hearth::kernels {

class ThreadPool {
 public:
  // n_threads >= 1 counts the caller.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(chunk_begin, chunk_end) on disjoint contiguous chunks covering
  // [begin, end), each at least `grain` long (but the last), on the workers and
  // the calling thread; returns when all are done. fn must not throw.
  // Which thread runs a chunk varies; results must not depend on it.
  // Not reentrant (fn must not call parallel_for), one caller at a time.
  template <typename Fn>
  void parallel_for(int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    auto trampoline = [](const void* ctx, int64_t b, int64_t e) { (*static_cast<F*>(const_cast<void*>(ctx)))(b, e); };
    run(begin, end, grain, trampoline, &fn);
  }

 private:
  using ChunkFn = void (*)(const void* ctx, int64_t begin, int64_t end);

  void run(int64_t begin, int64_t end, int64_t grain, ChunkFn fn, const void* ctx);
  void work_on_chunks();
  void worker_loop();
  bool wait_for_job(uint64_t seen);  // false when stopping

  const int n_threads_;
  std::vector<std::thread> workers_;

  // The current job: written by the caller before `generation_` is bumped
  // (release), read by workers after they observe it (acquire).
  ChunkFn fn_ = nullptr;
  const void* ctx_ = nullptr;
  int64_t begin_ = 0;
  int64_t end_ = 0;
  int64_t chunk_ = 1;
  int64_t n_chunks_ = 0;
  std::atomic<int64_t> next_chunk_{0};
  std::atomic<int> workers_busy_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};

  std::mutex mutex_;
  std::condition_variable wake_cv_;  // workers wait for a new generation
  std::condition_variable done_cv_;  // the caller waits for workers_busy_ == 0
};

}  // namespace hearth::kernels
