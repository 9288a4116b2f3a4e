// Recording one answer as it streams: the text not yet in the store, when it
// is due to be written (at most every kSaveIntervalMs), and at the end the
// message's final state with its generation record (what produced it, how
// fast). Owned by whoever receives the engine's text (the CLI's driver
// thread, the app's UI thread); its writes run on the store's thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "conversation/turn.h"
#include "hearth/engine.h"
#include "hearth/run_info.h"
#include "store/store.h"

namespace hearth::conversation {

// The model an answer came from, as recorded.
struct ModelIdentity {
  std::string path;
  std::string sha256;        // hex; "" when unknown
  std::string quantization;  // the weights' format ("Q4_1", "Q4_K_M")
  std::string kv_precision;  // "f16", "fp8"
  std::string device;        // "cpu", "cuda:0"
  std::string name;          // general.name; "" for the file's name
};

// The identity of a loaded model: its run info, and the file's checksum from
// the catalog, else computed (once per file, size and modification time, then
// remembered for the process).
ModelIdentity identify_model(const std::string& path, const ModelRunInfo& run, const std::string& name = {});
// Only the checksum part (thread-safe).
std::string model_sha256(const std::string& path);

// How an answer ended, as the engine said.
struct AnswerEnd {
  FinishReason reason = FinishReason::kStop;
  Usage usage{};
  std::string error;  // reason kError: the engine's message (recorded as the generation's error)
};

class AnswerRecorder {
 public:
  AnswerRecorder(PreparedTurn turn, ModelIdentity model, store::TimeMs started_ms);

  const PreparedTurn& turn() const { return turn_; }
  store::Id answer_id() const { return turn_.answer_id; }
  const std::string& text() const { return text_; }  // the whole answer so far

  void add(std::string_view text);
  // The text since the last take, for Store::append_streaming.
  std::string take_unsaved();
  bool has_unsaved() const { return !unsaved_.empty(); }

  // The final write: the rest of the text, the state, the generation record.
  store::FinishMessage finish(const AnswerEnd& end, store::TimeMs finished_ms, std::int64_t peak_memory_bytes);
  // Only the record (finish() puts it in the FinishMessage).
  store::GenerationRecord record(const AnswerEnd& end, store::TimeMs finished_ms, std::int64_t peak_memory_bytes) const;

 private:
  PreparedTurn turn_;
  ModelIdentity model_;
  store::TimeMs started_ms_ = 0;
  std::string text_;
  std::string unsaved_;
};

// Milliseconds since the epoch, from the system clock.
store::TimeMs now_ms();

}  // namespace hearth::conversation
