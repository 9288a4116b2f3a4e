// What the instruments of issue 19 cost (Google Benchmark; speed is shown
// here, never by timed unit tests):
//   OpDispatch/off       one op call through the backend interface with every
//                        instrument off: the virtual call and the one flag test
//   OpDispatch/profiling the same op with profiling on (entry, two clock reads)
//   DecodeStep/0..2      a real decode step of a small synthetic model on the
//                        CPU backend: off, profiling, overflow check
// Run: bench_profile_overhead [--benchmark_filter=...]; HEARTH_BENCH_THREADS=N
// sets the CPU threads (default 2).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include <unistd.h>

#include "engine/backend/ops.h"
#include "models/loader.h"
#include "models/synthetic.h"

namespace {

using namespace hearth;

// Every op a no-op: what is left is the interface's own dispatch.
class NullOps final : public backend::Ops {
 public:
  Result<void> reserve_weights(std::size_t) override { return {}; }
  Result<backend::Matrix> upload_matrix(const backend::HostTensor&, backend::MatrixUse) override {
    return backend::Matrix{};
  }
  Result<backend::Vector> upload_vector(const backend::HostTensor&) override { return backend::Vector{}; }
  std::size_t kv_block_bytes(std::int32_t) const override { return 0; }
  Result<void> allocate_kv(const KvLayout&) override { return {}; }
  bool has_kv() const override { return true; }
  void mark_layer(std::uint32_t) override {}
  Result<void> write(backend::Activation, std::span<const float>) override { return {}; }
  Result<void> read(backend::Activation, std::span<float>) override { return {}; }
  ModelMemory memory() const override { return {}; }

 private:
  Result<void> do_begin_step(std::span<const SequenceStep>) override { return {}; }
  Result<void> do_finish_step() override { return {}; }
  void do_embed(const backend::Matrix&, backend::Activation) override {}
  void do_rms_norm(backend::Activation, const backend::Vector&, float, backend::Activation) override {}
  void do_head_rms_norm(backend::Activation, std::int32_t, const backend::Vector&, float) override {}
  void do_scale(backend::Activation, float) override {}
  void do_linear(const backend::Matrix&, backend::Activation, backend::Activation, const backend::Vector&) override {}
  void do_linear_many(backend::Activation, std::span<const backend::LinearOut>) override {}
  void do_linear_residual(const backend::Matrix&, backend::Activation, backend::Activation,
                          backend::Activation) override {}
  void do_rope(backend::Activation, std::int32_t, backend::Activation, std::int32_t,
               const backend::RopeConfig&) override {}
  void do_store_kv(std::int32_t, backend::Activation, backend::Activation) override {}
  void do_attention(std::int32_t, backend::Activation, backend::Activation, float, std::int32_t) override {}
  void do_glu(backend::GluKind, backend::Activation, backend::Activation) override {}
  void do_add(backend::Activation, backend::Activation) override {}
  void do_logits(backend::Activation, const backend::Vector&, float, backend::Activation, std::span<float>) override {}
};

void OpDispatch(benchmark::State& state, bool profiling) {
  NullOps ops;
  ops.set_profiling(profiling);
  const std::vector<std::int32_t> tokens{1}, table{0};
  const SequenceStep step{tokens, 0, table, true, false};
  float a = 1, b = 2;
  const backend::Activation x{&a, 1}, y{&b, 1};
  std::int64_t n = 0;
  for (auto _ : state) {
    // A step of 256 ops, as a 28-layer model runs about that many.
    if (n++ % 256 == 0) {
      static_cast<void>(ops.finish_step());
      static_cast<void>(ops.begin_step(std::span<const SequenceStep>(&step, 1)));
    }
    ops.add(backend::OpName{"add", 0}, x, y);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(OpDispatch, off, false);
BENCHMARK_CAPTURE(OpDispatch, profiling, true);

int threads() {
  const char* v = std::getenv("HEARTH_BENCH_THREADS");
  return v != nullptr ? std::atoi(v) : 2;
}

// Decode steps (one token, growing position) of a 576-wide, 8-layer Q8_0 model.
void DecodeStep(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));  // 0 off, 1 profiling, 2 overflow check
  models::SyntheticSpec spec;
  spec.shape = {"custom", 576, 8, 9, 3, 1536, 4096, 2048, 10000.0f, 1e-5f, false};
  spec.quant = models::parse_synthetic_quant("Q8_0").value();
  const auto path =
      std::filesystem::temp_directory_path() / ("hearth-bench-prof-" + std::to_string(::getpid()) + ".gguf");
  if (!models::write_synthetic_model(spec, path)) {
    state.SkipWithError("cannot write the synthetic model");
    return;
  }
  models::LoadOptions lo;
  lo.n_threads = threads();
  auto bundle = models::load_model(path, lo);
  std::filesystem::remove(path);
  if (!bundle) {
    state.SkipWithError("cannot load the synthetic model");
    return;
  }
  Model& model = *bundle->model;
  static_cast<void>(model.allocate_kv(KvLayout{40, 16}));
  backend::Ops* ops = model.backend_ops();
  ops->set_profiling(mode == 1);
  ops->set_overflow_check(mode == 2);
  std::vector<std::int32_t> table(40);
  for (int i = 0; i < 40; ++i) table[static_cast<std::size_t>(i)] = i;
  std::vector<float> logits(spec.shape.n_vocab);
  const std::vector<std::int32_t> token{7};
  std::int32_t pos = 0;
  for (auto _ : state) {
    const SequenceStep s{token, pos, table, true, false};
    if (!model.forward(std::span<const SequenceStep>(&s, 1), logits)) {
      state.SkipWithError("forward failed");
      return;
    }
    pos = (pos + 1) % 600;
  }
  state.SetLabel(mode == 0 ? "off" : mode == 1 ? "profiling" : "overflow check");
}
BENCHMARK(DecodeStep)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
