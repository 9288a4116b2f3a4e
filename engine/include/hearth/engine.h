// The engine's public API: one model, one engine thread, many requests.
//
//   auto engine = Engine::create(std::move(bundle), options);   // models/ loads the bundle
//   RequestId id = engine->submit(request, sink);                // any thread
//   engine->cancel(id);                                          // any thread; stops within one step
//   EngineStats s = engine->stats();                             // any thread; cheap (30 Hz is fine)
//
// The engine thread loops: schedule -> build step inputs -> model forward ->
// sample -> emit. A Sink's callbacks run on the engine thread and must return
// quickly (queue the work elsewhere). Each request ends with exactly one
// on_finish; a request's error (context exceeded, KV memory exhausted, bad
// input) ends that request alone. Destroying the engine cancels what is still
// running (each gets on_finish(kCancelled)) and joins the thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.h"
#include "hearth/metrics.h"
#include "hearth/profile.h"
#include "hearth/result.h"
#include "hearth/run_info.h"
#include "hearth/sampling.h"

namespace hearth {

namespace tokenizer {
class Vocabulary;
}

using RequestId = std::int64_t;
using Clock = std::chrono::steady_clock;

struct ChatTurn {
  std::string role;  // "system", "user", "assistant", "tool"
  std::string content;
};

struct Request {
  // Exactly one of the three prompt forms is used, in this order:
  std::vector<ChatTurn> messages;           // rendered through the model's chat template + generation prompt
  std::vector<std::int32_t> prompt_tokens;  // token ids, used as they are
  std::string prompt_text;                  // raw text: BOS/EOS as the model says, special-token text parsed
  // Chat form only: the start of the assistant's answer, written after the
  // generation prompt and continued from (the app's Continue). Tokenized with
  // the rendered chat, special-token text parsed.
  std::string continue_text;

  SamplingParams sampling;
  std::int32_t max_tokens = 256;          // generated tokens at most (finish reason kLength)
  std::vector<std::string> stop_strings;  // never emitted; may span token boundaries
  std::vector<std::int32_t> stop_tokens;  // in addition to the model's end-of-generation tokens
  bool ignore_eos = false;                // keep going past end-of-generation tokens (benchmarks)
  std::int32_t priority = 0;              // higher is admitted first; ties first come, first served
};

// Serialized in the CLI's JSON ("stop", "length", "cancelled", "error"): do not rename.
enum class FinishReason { kStop, kLength, kCancelled, kError };
const char* to_string(FinishReason reason);

struct Usage {
  std::int32_t prompt_tokens = 0;
  std::int32_t cached_tokens = 0;  // prompt tokens served by the prefix cache
  std::int32_t generated_tokens = 0;
  double ttft_ms = 0;      // submit -> first generated token
  double prefill_tps = 0;  // computed prompt tokens / prefill time
  double decode_tps = 0;   // generated tokens after the first / their time
  double total_ms = 0;     // submit -> finish
  // Gaps between consecutive generated tokens as the engine thread stamped
  // them (nearest-rank percentiles; 0 with fewer than two tokens). The one
  // place inter-token latency is measured: the app, CLI and bench read these.
  double itl_p50_ms = 0;
  double itl_p95_ms = 0;
  double itl_p99_ms = 0;
};

struct TextEvent {
  RequestId id = 0;
  std::string text;                     // complete UTF-8 (may be empty while a stop string is pending)
  std::vector<std::int32_t> token_ids;  // the tokens this event accounts for
  Clock::time_point time;
};

struct FinishEvent {
  RequestId id = 0;
  FinishReason reason = FinishReason::kStop;
  Usage usage;
  std::optional<Error> error;                     // set when reason == kError
  std::vector<std::int32_t> prompt_token_ids;     // what the model saw
  std::vector<std::int32_t> generated_token_ids;  // what it produced (a matched stop string's tokens included)
};

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void on_text(const TextEvent& event) = 0;
  virtual void on_finish(const FinishEvent& event) = 0;
};

// What models/ hands to the engine: the model and how to talk to it.
struct ModelBundle {
  std::unique_ptr<Model> model;
  std::shared_ptr<const tokenizer::Vocabulary> vocabulary;
  std::string chat_template;  // the GGUF's tokenizer.chat_template ("" = the documented fallback format)
  std::string model_id;       // identifies the weights (file checksum or path): keys the prefix cache
  ModelRunInfo run;           // device, KV precision, weight format, as models/ set them up
  // True once the weights' file shrank under its memory mapping (reads then see
  // zeros: engine/gguf/mapping_guard.h); the engine fails each later step with
  // an error. Empty: the weights cannot vanish (copied, or on the GPU).
  std::function<bool()> weights_lost;
};

struct EngineOptions {
  std::int32_t context_length = 0;      // tokens per sequence; 0: min(model's trained context, 8192)
  std::int32_t kv_block_size = 16;      // tokens per KV block
  std::size_t kv_budget_bytes = 0;      // KV pool; 0: room for two full contexts
  std::int32_t max_batch_tokens = 256;  // tokens per step (prefill chunks + decodes)
  std::int32_t max_sequences = 16;      // sequences per step
  bool prefix_cache = true;
  // One chat template render (templates come from model files: untrusted
  // programs). A render that exceeds either ends its request with an error
  // naming the limit. Renders run on the engine's preparation thread, never
  // on the loop that steps running requests.
  std::uint64_t template_max_steps = 20'000'000;
  std::chrono::milliseconds template_deadline{5000};
};

// The context and KV pool Engine::create sizes from `options`, for a model
// trained for `n_ctx_train` tokens (0: unknown) whose KV block of
// options.kv_block_size tokens takes `kv_block_bytes`. models::plan() calls it
// to say what a model will cost before anything is loaded. (Where the default
// pool does not fit, create() retries with one context: a plan cannot know that.)
struct EngineSizing {
  std::int32_t context_length = 0;  // tokens per sequence
  std::int32_t kv_blocks = 0;       // blocks of options.kv_block_size tokens
};
Result<EngineSizing> engine_sizing(std::uint32_t n_ctx_train, std::size_t kv_block_bytes, const EngineOptions& options);

class Engine {
 public:
  // Allocates the KV pool (kOutOfMemory when the budget cannot be met) and
  // starts the engine thread.
  static Result<std::unique_ptr<Engine>> create(ModelBundle bundle, const EngineOptions& options);
  virtual ~Engine() = default;

  // Thread-safe. The id is returned at once; problems with the request
  // arrive as on_finish(kError) on the sink.
  virtual RequestId submit(Request request, std::shared_ptr<Sink> sink) = 0;
  // Thread-safe: several requests at once, seen by the scheduler together
  // (the same step), in order. Ids in the same order.
  struct Submission {
    Request request;
    std::shared_ptr<Sink> sink;
  };
  virtual std::vector<RequestId> submit_all(std::vector<Submission> submissions) = 0;
  // Thread-safe; unknown or finished ids are ignored.
  virtual void cancel(RequestId id) = 0;
  // Thread-safe snapshot.
  virtual EngineStats stats() const = 0;

  // Instruments (hearth/profile.h), off by default, thread-safe; a change
  // takes effect from the next step. Turning profiling on starts a fresh
  // window; profile() is a copy of it (empty when profiling never ran).
  // set_profiling returns the number the fresh window's reports will carry
  // (ProfileReport::window) once it starts, 0 when turning profiling off or
  // where there is none: until the next step, reports are the old window's.
  // The overflow check keeps the first finding since it was turned on.
  virtual std::uint64_t set_profiling(const ProfileOptions& options) {
    static_cast<void>(options);
    return 0;
  }
  virtual ProfileReport profile() const { return {}; }
  // The same sums, with `recent` holding only the kept steps numbered
  // first_step or later (a front end polling a live window copies what is new).
  virtual ProfileReport profile_since(std::int64_t first_step) const {
    static_cast<void>(first_step);
    return profile();
  }
  virtual void set_overflow_check(bool on) { static_cast<void>(on); }
  virtual std::optional<OverflowFinding> first_overflow() const { return std::nullopt; }

  virtual const ModelHyperParams& model_info() const = 0;
  // Where and how the model runs (the bundle's ModelRunInfo): the real device,
  // KV precision and weight format, not what was asked for.
  virtual const ModelRunInfo& run_info() const = 0;
  virtual std::int32_t context_length() const = 0;
  // Front-end helpers (thread-safe): what a prompt becomes.
  virtual Result<std::vector<std::int32_t>> tokenize(std::string_view text, bool add_special,
                                                     bool parse_special) const = 0;
  virtual Result<std::string> render_chat(const std::vector<ChatTurn>& messages, bool add_generation_prompt) const = 0;
  virtual Result<std::string> detokenize(const std::vector<std::int32_t>& ids) const = 0;
};

}  // namespace hearth
