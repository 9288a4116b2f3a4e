#include "kernels/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <random>
#include <vector>

namespace hearth::kernels {
namespace {

TEST(ThreadPool, EveryIndexVisitedExactlyOnce) {
  std::mt19937 rng(21);
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int trial = 0; trial < 200; ++trial) {
      const int64_t begin = static_cast<int64_t>(rng() % 50);
      const int64_t end = begin + static_cast<int64_t>(rng() % 1000);
      const int64_t grain = 1 + static_cast<int64_t>(rng() % 64);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(end + 1));
      pool.parallel_for(begin, end, grain, [&](int64_t b, int64_t e) {
        EXPECT_LT(b, e);
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (int64_t i = 0; i <= end; ++i) {
        ASSERT_EQ(hits[static_cast<size_t>(i)].load(), (i >= begin && i < end) ? 1 : 0) << i;
      }
    }
  }
}

TEST(ThreadPool, ChunksRespectGrain) {
  ThreadPool pool(3);
  std::atomic<int> short_chunks{0};
  pool.parallel_for(0, 1000, 64, [&](int64_t b, int64_t e) {
    if (e - b < 64 && e != 1000) short_chunks.fetch_add(1);
  });
  EXPECT_EQ(short_chunks.load(), 0);
}

TEST(ThreadPool, ResultsIndependentOfThreadCount) {
  // A per-index computation with order-sensitive float math inside an index:
  // the output must be bit-identical for 1..4 threads.
  std::vector<float> expect;
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    std::vector<float> out(5000);
    pool.parallel_for(0, 5000, 7, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        float acc = 0.0f;
        for (int k = 1; k < 100; ++k) acc += 1.0f / static_cast<float>(i * k + 1);
        out[static_cast<size_t>(i)] = acc;
      }
    });
    if (threads == 1) expect = out;
    EXPECT_EQ(out, expect) << threads << " threads";
  }
}

TEST(ThreadPool, ManyBackToBackJobsAndIdleSleep) {
  ThreadPool pool(2);
  int64_t total = 0;
  for (int job = 0; job < 2000; ++job) {
    std::atomic<int64_t> sum{0};
    pool.parallel_for(0, 8, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
    total += sum.load();
  }
  EXPECT_EQ(total, 2000 * 8);
}

TEST(ThreadPool, EmptyRangeDoesNothing) {
  ThreadPool pool(2);
  bool called = false;
  pool.parallel_for(5, 5, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace hearth::kernels
