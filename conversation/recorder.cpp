#include "conversation/recorder.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "conversation/sampling_record.h"
#include "models/catalog.h"

namespace hearth::conversation {
namespace {

// File checksums already computed: a multi-gigabyte model is hashed once per process.
struct ChecksumCache {
  std::mutex mutex;
  std::map<std::tuple<std::string, std::uintmax_t, std::int64_t>, std::string> sums;
};

ChecksumCache& checksum_cache() {
  static ChecksumCache cache;
  return cache;
}

}  // namespace

store::TimeMs now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string model_sha256(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return {};
  if (const auto* entry = models::builtin_catalog().find_file(fs::path(path).filename().string())) {
    return entry->sha256;
  }
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return {};
  const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
  if (ec) return {};
  const auto key = std::make_tuple(path, size, static_cast<std::int64_t>(mtime));
  ChecksumCache& cache = checksum_cache();
  {
    std::lock_guard lock(cache.mutex);
    if (const auto it = cache.sums.find(key); it != cache.sums.end()) return it->second;
  }
  auto sum = models::sha256_file(path);
  if (!sum) return {};
  std::lock_guard lock(cache.mutex);
  cache.sums[key] = *sum;
  return *sum;
}

ModelIdentity identify_model(const std::string& path, const ModelRunInfo& run, const std::string& name) {
  return {path, model_sha256(path), run.weight_format, to_string(run.kv_precision), run.device, name};
}

AnswerRecorder::AnswerRecorder(PreparedTurn turn, ModelIdentity model, store::TimeMs started_ms)
    : turn_(std::move(turn)), model_(std::move(model)), started_ms_(started_ms) {}

void AnswerRecorder::add(std::string_view text) {
  text_ += text;
  unsaved_ += text;
}

std::string AnswerRecorder::take_unsaved() {
  return std::exchange(unsaved_, std::string());
}

store::GenerationRecord AnswerRecorder::record(const AnswerEnd& end, store::TimeMs finished_ms,
                                               std::int64_t peak_memory_bytes) const {
  store::GenerationRecord g;
  g.message_id = turn_.answer_id;
  g.system_text = turn_.system_text;
  if (turn_.prompt) {
    g.prompt_version_id = turn_.prompt->version_id;
    g.variables = turn_.prompt->variables;
    g.prompt_label = turn_.prompt->label;
  }
  g.max_tokens = turn_.max_tokens;
  g.stop = turn_.stop;
  g.model_name = model_.name;
  g.model_path = model_.path;
  g.model_sha256 = model_.sha256;
  g.quantization = model_.quantization;
  g.kv_precision = model_.kv_precision;
  g.device = model_.device;
  g.sampling = to_record(turn_.sampling);
  const Usage& u = end.usage;
  g.prompt_tokens = u.prompt_tokens;
  g.cached_tokens = u.cached_tokens;
  g.generated_tokens = u.generated_tokens;
  g.ttft_ms = u.ttft_ms;
  g.prefill_tok_s = u.prefill_tps;
  g.decode_tok_s = u.decode_tps;
  g.itl_p50_ms = u.itl_p50_ms;
  g.itl_p95_ms = u.itl_p95_ms;
  g.itl_p99_ms = u.itl_p99_ms;
  g.peak_memory_bytes = peak_memory_bytes;
  g.finish_reason = to_string(end.reason);
  if (end.reason == FinishReason::kError) g.error = end.error;
  g.started_ms = started_ms_;
  g.finished_ms = finished_ms;
  return g;
}

store::FinishMessage AnswerRecorder::finish(const AnswerEnd& end, store::TimeMs finished_ms,
                                            std::int64_t peak_memory_bytes) {
  store::FinishMessage f;
  f.tail = take_unsaved();
  // A stopped answer is complete (its text is what the user saw); a failed one
  // (an engine error, an endpoint that cut its stream) keeps its text marked interrupted.
  f.state = end.reason == FinishReason::kError ? store::MessageState::kInterrupted : store::MessageState::kComplete;
  f.generation = record(end, finished_ms, peak_memory_bytes);
  return f;
}

}  // namespace hearth::conversation
