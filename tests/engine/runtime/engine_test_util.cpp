#include "engine_test_util.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>

#include "models/catalog.h"
#include "models/loader.h"
#include "models/synthetic.h"

namespace hearth::testing {

void RecordingSink::on_text(const TextEvent& event) {
  int index = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(event);
    index = static_cast<int>(events_.size()) - 1;
  }
  if (on_text_hook) on_text_hook(event, index);
}

void RecordingSink::on_finish(const FinishEvent& event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    finish_ = event;
    ++finishes_;
  }
  cv_.notify_all();
}

FinishEvent RecordingSink::wait(std::chrono::seconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const bool done = cv_.wait_for(lock, timeout, [&] { return finish_.has_value(); });
  EXPECT_TRUE(done) << "no on_finish within " << timeout.count() << " s";
  if (!done) return FinishEvent{0, FinishReason::kError, {}, make_error(ErrorCode::kInternal, "timeout"), {}, {}};
  return *finish_;
}

std::string RecordingSink::text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& e : events_) out += e.text;
  return out;
}

std::vector<TextEvent> RecordingSink::events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

int RecordingSink::finish_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finishes_;
}

std::unique_ptr<Engine> make_engine(const std::filesystem::path& model, const EngineOptions& options, int threads,
                                    const std::string& device) {
  models::LoadOptions load;
  load.n_threads = threads;
  load.device = device;
  Result<ModelBundle> bundle = models::load_model(model, load);
  EXPECT_TRUE(bundle.ok()) << (bundle.ok() ? "" : bundle.error().describe());
  if (!bundle) return nullptr;
  Result<std::unique_ptr<Engine>> engine = Engine::create(std::move(bundle).value(), options);
  EXPECT_TRUE(engine.ok()) << (engine.ok() ? "" : engine.error().describe());
  if (!engine) return nullptr;
  return std::move(engine).value();
}

std::vector<Outcome> run_together(Engine& engine, const std::vector<Request>& requests) {
  // Submitted at once, so the scheduler sees them in the same step whatever
  // the machine's speed (preemption tests depend on it).
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  std::vector<Engine::Submission> batch;
  for (const Request& r : requests) {
    sinks.push_back(std::make_shared<RecordingSink>());
    batch.push_back({r, sinks.back()});
  }
  engine.submit_all(std::move(batch));
  std::vector<Outcome> out;
  for (const auto& s : sinks) {
    FinishEvent f = s->wait();
    out.push_back({std::move(f), s->text()});
  }
  return out;
}

std::vector<Outcome> run_alone(Engine& engine, const std::vector<Request>& requests) {
  std::vector<Outcome> out;
  for (const Request& r : requests) out.push_back(run_together(engine, {r})[0]);
  return out;
}

Request greedy_tokens(std::vector<std::int32_t> prompt, std::int32_t max_tokens) {
  Request r;
  r.prompt_tokens = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  return r;
}

void expect_idle_kv(Engine& engine) {
  auto* impl = dynamic_cast<runtime::EngineImpl*>(&engine);
  ASSERT_NE(impl, nullptr);
  const runtime::KvDebugInfo info = impl->debug_kv();
  EXPECT_TRUE(info.invariants.ok()) << (info.invariants.ok() ? "" : info.invariants.error().describe());
  EXPECT_EQ(info.active_requests, 0);
  EXPECT_EQ(info.stats.sequences, 0);
  EXPECT_EQ(info.stats.blocks.used, 0);
  EXPECT_EQ(info.stats.blocks.free + info.stats.blocks.cached, info.stats.blocks.total);
}

std::filesystem::path default_model_path() {
  Result<std::filesystem::path> p = models::resolve_model(models::builtin_catalog().default_entry().name);
  EXPECT_TRUE(p.ok()) << "the default model must be installed: " << (p.ok() ? "" : p.error().describe());
  return p.ok() ? *p : std::filesystem::path();
}

namespace {
std::filesystem::path g_tiny_dir;  // removed at exit
void remove_tiny_dir() {
  std::error_code ec;
  std::filesystem::remove_all(g_tiny_dir, ec);
}
}  // namespace

namespace {

// Writes a synthetic Q4_0 model of `shape` into this process's temp folder.
std::filesystem::path write_test_model(const char* file_name, const models::SyntheticShape& shape) {
  static const std::filesystem::path dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("hearth-runtime-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    g_tiny_dir = d;
    std::atexit(remove_tiny_dir);
    return d;
  }();
  models::SyntheticSpec spec;
  spec.shape = shape;
  spec.quant = models::parse_synthetic_quant("Q4_0").value();
  spec.seed = 7;
  const auto file = dir / file_name;
  Result<void> ok = models::write_synthetic_model(spec, file);
  EXPECT_TRUE(ok.ok()) << (ok.ok() ? "" : ok.error().describe());
  return file;
}

}  // namespace

std::filesystem::path tiny_model_path() {
  static const std::filesystem::path path = write_test_model(
      "tiny.gguf", models::SyntheticShape{"custom", 128, 2, 4, 2, 256, 384, 512, 10000.0f, 1e-5f, false, "llama"});
  return path;
}

std::filesystem::path kv_heavy_model_path() {
  static const std::filesystem::path path = write_test_model(
      "kv_heavy.gguf", models::SyntheticShape{"custom", 512, 16, 8, 8, 512, 384, 512, 10000.0f, 1e-5f, false, "llama"});
  return path;
}

}  // namespace hearth::testing
