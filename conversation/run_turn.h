// A whole turn on the caller's thread, for front ends that own their engine
// (hearth-cli, a server): submit the prepared request, write the answer into
// the store as it streams (at most every save_interval_ms, and at the end),
// record the generation. The engine's sink only queues text; every store
// write happens on the calling thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "conversation/recorder.h"
#include "conversation/turn.h"
#include "hearth/engine.h"
#include "store/store.h"

namespace hearth::conversation {

struct RunOptions {
  int save_interval_ms = kSaveIntervalMs;
  std::function<void(std::string_view)> on_text;        // each piece as it arrives (calling thread)
  std::function<void(const AnswerRecorder&)> on_saved;  // after each write of streamed text (tests)
};

struct TurnResult {
  PreparedTurn turn;
  std::string text;  // the whole answer
  store::GenerationRecord generation;
  FinishReason reason = FinishReason::kStop;
  std::string error;  // reason kError: the engine's message (the partial answer is stored all the same)
};

// A store write that fails mid-answer cancels the request and returns the
// error (what was written before stays, and a later open marks it interrupted
// if even the final write failed).
store::StoreResult<TurnResult> run_turn(store::Store& store, Engine& engine, PreparedTurn turn,
                                        const ModelIdentity& model, const RunOptions& options = {});

// The process's resident memory in bytes (/proc/self/statm; 0 elsewhere).
std::int64_t resident_bytes();

}  // namespace hearth::conversation
