// The scheduler: continuous batching with chunked prefill and preemption by
// recompute. Policy only: it decides which sequences run and how many tokens
// each gets, and reserves their KV slots through the KvCacheManager; the
// runtime runs the model and reports back (complete, append_token).
//
// Each step (schedule()):
//   1. decodes: running sequences with exactly one pending token, oldest
//      first, one token each. When a decode needs a block and none is left,
//      the newest running sequence is preempted (blocks freed, put back in
//      waiting, its generated tokens kept as part of its prompt so it is
//      recomputed later, through the prefix cache where blocks survive);
//   2. prefill chunks of running sequences still prefilling, oldest first,
//      within the remaining token budget and the blocks available;
//   3. admission from waiting (priority, then arrival; a preempted sequence
//      keeps its arrival stamp, so it goes back ahead of later arrivals), while
//      budget, max_sequences and blocks allow; none in a step that preempted.
//      The head of the queue blocks those behind it (no overtaking).
// If nothing can run while sequences are running, the newest is preempted
// and scheduling retried; a sequence that cannot fit even alone fails with
// kOutOfMemory (StepPlan::failed).
//
// Not thread-safe: owned by the engine thread.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/kv/kv_cache_manager.h"
#include "engine/scheduler/step_plan.h"
#include "hearth/result.h"

namespace hearth::scheduler {

struct SchedulerConfig {
  std::int32_t max_batch_tokens = 256;  // tokens per step, decodes and prefill chunks together
  std::int32_t max_sequences = 16;      // running sequences (and so sequences per step)
};

class Scheduler {
 public:
  // Preconditions: both limits >= 1; `kv` outlives the scheduler.
  Scheduler(const SchedulerConfig& config, kv::KvCacheManager& kv);

  // Queues a sequence. kInvalidArgument for an empty prompt or a known id.
  Result<void> add(SeqId id, std::vector<std::int32_t> prompt, std::int32_t priority);
  // Forgets a sequence (finished, cancelled, failed) and frees its blocks.
  // Unknown ids are ignored.
  void remove(SeqId id);

  StepPlan schedule();
  // After a successful forward of `plan`: advances the computed tokens and
  // commits newly full blocks to the prefix cache.
  Result<void> complete(const StepPlan& plan);
  // Appends a sampled token (pending until the next step computes it).
  Result<void> append_token(SeqId id, std::int32_t token);

  bool contains(SeqId id) const { return seqs_.count(id) != 0; }
  // The sequence's tokens (prompt, then generated); empty for an unknown id.
  std::span<const std::int32_t> tokens(SeqId id) const;
  std::int32_t num_computed(SeqId id) const;

  std::int32_t num_waiting() const { return static_cast<std::int32_t>(waiting_.size()); }
  std::int32_t num_running() const { return static_cast<std::int32_t>(running_.size()); }
  bool has_work() const { return !waiting_.empty() || !running_.empty(); }
  std::int64_t preemptions() const { return preemptions_; }
  const std::vector<SeqId>& running() const { return running_; }  // admission order
  const std::vector<SeqId>& waiting() const { return waiting_; }  // queue order

 private:
  struct Sequence {
    std::vector<std::int32_t> tokens;  // prompt + generated
    std::int32_t num_computed = 0;     // tokens whose K/V are in the cache
    std::int32_t priority = 0;
    std::int64_t arrival = 0;  // FCFS stamp, kept across preemption
    bool running = false;
    std::int32_t pending() const { return static_cast<std::int32_t>(tokens.size()) - num_computed; }
  };

  StepPlan try_schedule(bool may_admit);
  void schedule_decodes(StepPlan& plan, std::int32_t& budget);
  void schedule_prefills(StepPlan& plan, std::int32_t& budget);
  void admit(StepPlan& plan, std::int32_t& budget);
  // Tokens beyond num_computed that fit the slots reserved plus the blocks available.
  std::int32_t fit_tokens(SeqId id, const Sequence& s) const;
  Result<void> reserve(SeqId id, const Sequence& s, std::int32_t n);
  void preempt(SeqId id, StepPlan& plan);
  void enqueue(SeqId id);
  void fail(SeqId id, StepPlan& plan, const std::string& why);

  SchedulerConfig config_;
  kv::KvCacheManager& kv_;
  std::unordered_map<SeqId, Sequence> seqs_;
  std::vector<SeqId> running_;  // admission order: newest last (the preemption victim)
  std::vector<SeqId> waiting_;  // priority descending, then arrival ascending
  std::int64_t next_arrival_ = 0;
  std::int64_t preemptions_ = 0;
};

}  // namespace hearth::scheduler
