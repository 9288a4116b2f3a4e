// Values that cross the thread boundary between the UI and the EngineWorker.
// Registered as Qt metatypes so queued signals can carry them by value.
#pragma once

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <string>
#include <vector>

#include "hearth/engine.h"
#include "hearth/metrics.h"

namespace hearth::app {

// What the model bar shows about the loaded model.
struct LoadedModel {
  QString path;
  QString name;            // general.name, else the file name
  QString architecture;    // general.architecture
  QString quantization;    // the weights' format as the engine reports it: "Q4_1", "Q4_K_M" (the file's tensors)
  QString device;          // where it runs, as the engine reports it: "cpu" or "cuda:N"
  QString device_name;     // "CPU (...)" or the GPU's name
  QString chat_format;     // ModelRunInfo::chat_format: the model's template or the named fallback
  QString device_reason;   // why that device, for "auto" ("auto: no CUDA device found"); "" when it was asked for
  QString kv_precision;    // "f16", "fp8": the KV cache the engine really runs
  int context_length = 0;  // tokens per sequence (0 for a remote model: the server's own)
  std::int64_t file_bytes = 0;
  // A remote OpenAI-compatible endpoint's base URL ("http://host:port/v1")
  // when the model runs there (path is then empty, device the same URL); "" : local.
  QString endpoint;
  // Continue (an answer cut at the token limit) works: a local model, or a
  // remote endpoint that honours continue_final_message (hearth-server).
  bool continues = true;
};

// What the app chose for this machine at its first start (models/recommend.h):
// the settings it will keep, and why, one line per choice.
struct ChosenDefaults {
  QString device;  // "cpu" or "cuda:N"
  int context_length = 0;
  QString kv_precision;  // "f16", "q8_0", "fp8"
  QStringList reasons;
};

// One answer to produce. `tag` is the caller's handle (the assistant message id).
struct GenerationRequest {
  std::int64_t tag = 0;
  std::vector<ChatTurn> turns;
  SamplingParams sampling;
  int max_tokens = 256;
  std::vector<std::string> stop;  // stop strings (the prompt version's)
  // Continue an answer: the model goes on from this text, as if it had
  // written it after the generation prompt. Empty: a new answer.
  std::string continue_text;
};

// Text to count in the model's tokens: `turns` rendered as a request would
// send them (the chat template with its generation prompt), or, with no
// turns, `text` alone (no special tokens). `tag` is the caller's handle.
struct TokenCountRequest {
  std::int64_t tag = 0;
  std::vector<ChatTurn> turns;
  std::string text;
};

struct GenerationDone {
  std::int64_t tag = 0;
  FinishReason reason = FinishReason::kStop;
  Usage usage;
  QString error;  // set when reason == kError
};

// One point of the performance charts.
struct StatsSample {
  double time_s = 0;  // since the worker started
  EngineStats stats;
  std::int64_t rss_bytes = 0;  // resident memory of the whole process
};

}  // namespace hearth::app

Q_DECLARE_METATYPE(hearth::app::LoadedModel)
Q_DECLARE_METATYPE(hearth::app::ChosenDefaults)
Q_DECLARE_METATYPE(hearth::app::GenerationRequest)
Q_DECLARE_METATYPE(hearth::app::GenerationDone)
Q_DECLARE_METATYPE(hearth::app::TokenCountRequest)
Q_DECLARE_METATYPE(hearth::app::StatsSample)
