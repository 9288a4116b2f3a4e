// The Engine implementation: one model, one engine thread.
//
// Threads: submit / cancel / stats / the front-end helpers may be called from
// any thread. submit and cancel put work in a mutex-protected inbox and wake
// the engine thread (condition variable); the engine thread sleeps while it
// has nothing to do. Everything else (KV cache, scheduler, requests) belongs
// to the engine thread alone.
//
// Chat requests are prepared first on a second thread (the preparation
// thread): their template rendered (a program from the model file, bounded by
// EngineOptions' template budget and stopped by cancel()) and tokenized, then
// handed to the engine thread's inbox. A slow or runaway template therefore
// never stalls the running requests; it delays only chat requests submitted
// after it (one render at a time, first come first served). A submit_all()
// batch holding a chat request is prepared and handed over whole, so its
// requests still reach the scheduler together and in order.
//
// Each loop iteration: drain the inbox (start new requests: tokenize what is
// not prepared yet, validate; apply cancels), then one step: schedule -> build
// the SequenceSteps of every scheduled sequence -> one model forward for all
// of them -> sample each -> emit -> publish metrics.
//
// Metrics are published once per loop iteration, after the step: stats()
// lags the sink events of the step in progress by at most that one step.
//
// Context rule: a prompt of context_length tokens or more is rejected up
// front (kContextExceeded, that request alone); a generation that reaches
// context_length tokens (prompt + generated) ends with kLength.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/kv/kv_cache_manager.h"
#include "engine/metrics/engine_metrics.h"
#include "engine/metrics/profile_window.h"
#include "engine/model/model.h"
#include "engine/runtime/prompt_builder.h"
#include "engine/runtime/request_state.h"
#include "engine/scheduler/scheduler.h"
#include "engine/tokenizer/encoder.h"
#include "hearth/engine.h"

namespace hearth::runtime {

// The prefix cache's extra key: the weights' identity and the KV precision, so
// blocks written in one precision are never served to a model that reads
// another (a process runs one engine per model, but the key says what the
// blocks hold). Stable across runs (FNV-1a).
std::uint64_t prefix_cache_key(const std::string& model_id, KvPrecision kv_precision);

// What the test hook reports, read on the engine thread between steps.
struct KvDebugInfo {
  kv::KvCacheStats stats;
  Result<void> invariants;
  std::int32_t active_requests = 0;
};

class EngineImpl final : public Engine {
 public:
  static Result<std::unique_ptr<EngineImpl>> create(ModelBundle bundle, const EngineOptions& options);
  ~EngineImpl() override;

  RequestId submit(Request request, std::shared_ptr<Sink> sink) override;
  std::vector<RequestId> submit_all(std::vector<Submission> submissions) override;
  void cancel(RequestId id) override;
  EngineStats stats() const override { return metrics_.snapshot(); }
  std::uint64_t set_profiling(const ProfileOptions& options) override;
  ProfileReport profile() const override { return profile_.report(); }
  ProfileReport profile_since(std::int64_t first_step) const override { return profile_.report_since(first_step); }
  void set_overflow_check(bool on) override;
  std::optional<OverflowFinding> first_overflow() const override;
  const ModelHyperParams& model_info() const override;
  const ModelRunInfo& run_info() const override { return bundle_.run; }
  std::int32_t context_length() const override { return context_length_; }
  Result<std::vector<std::int32_t>> tokenize(std::string_view text, bool add_special,
                                             bool parse_special) const override;
  Result<std::string> render_chat(const std::vector<ChatTurn>& messages, bool add_generation_prompt) const override;
  Result<std::string> detokenize(const std::vector<std::int32_t>& ids) const override;

  // Test hook: KV statistics and invariants, taken on the engine thread
  // between steps (blocks the caller until then).
  KvDebugInfo debug_kv();

 private:
  struct Incoming {
    RequestId id;
    Request request;
    std::shared_ptr<Sink> sink;
    Clock::time_point submitted;
    // Set by the preparation thread for chat requests: the prompt's tokens or
    // why there are none; `cancelled`: cancel() came before it was handed over.
    std::optional<Result<std::vector<std::int32_t>>> prompt;
    bool cancelled = false;
  };
  struct Inbox {
    std::vector<Incoming> requests;
    std::vector<RequestId> cancels;
    std::vector<std::function<void()>> tasks;
    bool stopping = false;
  };

  EngineImpl(ModelBundle bundle, const EngineOptions& options, std::int32_t context_length,
             std::unique_ptr<kv::KvCacheManager> kv);
  void loop();
  Inbox wait_for_work();
  // The preparation thread: renders and tokenizes the chat requests of each
  // queued batch, then hands the batch to the inbox.
  void prepare_loop();
  void prepare(Incoming& in);
  // Moves a request still queued for preparation to the inbox, cancelled (mu_ held).
  bool take_queued(RequestId id);
  void start_request(Incoming incoming);
  void finish(RequestId id, FinishReason reason, std::optional<Error> error);
  void finish_all(FinishReason reason);
  void publish_metrics();

  // engine_step.cpp
  void run_step();
  // Brings the backend's instruments to what was last asked for (engine thread, between steps).
  void apply_instruments();
  // After a forward: the profiled step (with its sampling time) into the window, the first overflow kept.
  void collect_instruments(const metrics::StepRecord& rec, Clock::time_point sampled_from);
  bool forward(const scheduler::StepPlan& plan);
  std::int32_t sample_all(const scheduler::StepPlan& plan);
  // Requests that finished on this step's token, ended once the step's
  // instruments are collected: a caller woken by the finish event finds the
  // step in profile().
  struct StepFinish {
    RequestId id = 0;
    FinishReason reason = FinishReason::kStop;
    std::optional<Error> error;
  };
  std::vector<StepFinish> step_finishes_;

  // Immutable after construction.
  ModelBundle bundle_;
  EngineOptions options_;
  std::int32_t context_length_;
  PromptBuilder prompts_;

  // Shared with the calling threads, guarded by mu_.
  mutable std::mutex mu_;
  std::condition_variable wake_;
  Inbox inbox_;
  std::atomic<RequestId> next_id_{1};
  // Batches waiting for the preparation thread, the ids in them or being
  // prepared (until handed to the inbox) and those of them cancelled.
  std::condition_variable prepare_wake_;
  std::deque<std::vector<Incoming>> to_prepare_;
  std::unordered_set<RequestId> preparing_;
  std::unordered_set<RequestId> cancelled_before_start_;
  bool prepare_stopping_ = false;
  // The request whose chat template is being rendered (0: none) and the flag
  // its render polls: a template from a model file may run for up to its
  // deadline, and cancel() or shutdown must reach it before that. Both are
  // written under mu_; the flag is read by the render without it.
  RequestId rendering_ = 0;
  std::atomic<bool> render_cancel_{false};

  // Preparation thread only.
  tokenizer::Encoder prepare_encoder_;

  // Engine thread only.
  std::unique_ptr<kv::KvCacheManager> kv_;
  scheduler::Scheduler scheduler_;
  tokenizer::Encoder encoder_;
  std::unordered_map<RequestId, std::unique_ptr<RequestState>> active_;
  std::vector<SequenceStep> steps_;
  std::vector<float> logits_;  // [sequences wanting logits][n_vocab]

  // Instruments: what callers asked for (any thread), what the backend runs (engine thread).
  std::atomic<bool> want_profiling_{false};
  std::atomic<std::size_t> want_keep_steps_{256};
  std::atomic<std::uint64_t> profiling_generation_{0};  // bumped by each set_profiling(enabled)
  std::atomic<bool> want_overflow_{false};
  std::uint64_t applied_generation_ = 0;
  bool applied_overflow_ = false;
  Clock::time_point profile_origin_;  // entries' times are from here
  std::int64_t profiled_steps_ = 0;
  std::int64_t checked_steps_ = 0;
  mutable std::mutex overflow_mu_;
  std::optional<OverflowFinding> overflow_;  // guarded by overflow_mu_
  metrics::ProfileWindow profile_;           // thread-safe report

  metrics::EngineMetrics metrics_;  // thread-safe snapshot
  std::thread thread_;              // starts after everything above exists
  std::thread prepare_thread_;      // last: stopped first
};

}  // namespace hearth::runtime
