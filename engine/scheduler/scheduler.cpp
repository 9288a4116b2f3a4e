#include "engine/scheduler/scheduler.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace hearth::scheduler {

Scheduler::Scheduler(const SchedulerConfig& config, kv::KvCacheManager& kv) : config_(config), kv_(kv) {
  assert(config.max_batch_tokens >= 1 && config.max_sequences >= 1);
}

Result<void> Scheduler::add(SeqId id, std::vector<std::int32_t> prompt, std::int32_t priority) {
  if (prompt.empty()) return make_error(ErrorCode::kInvalidArgument, "scheduler: empty prompt");
  if (contains(id))
    return make_error(ErrorCode::kInvalidArgument, "scheduler: sequence " + std::to_string(id) + " exists");
  Sequence s;
  s.tokens = std::move(prompt);
  s.priority = priority;
  s.arrival = next_arrival_++;
  seqs_.emplace(id, std::move(s));
  enqueue(id);
  return {};
}

void Scheduler::enqueue(SeqId id) {
  const Sequence& s = seqs_.at(id);
  const auto before = [&](SeqId other) {
    const Sequence& o = seqs_.at(other);
    return s.priority > o.priority || (s.priority == o.priority && s.arrival < o.arrival);
  };
  waiting_.insert(std::find_if(waiting_.begin(), waiting_.end(), before), id);
}

void Scheduler::remove(SeqId id) {
  const auto it = seqs_.find(id);
  if (it == seqs_.end()) return;
  if (it->second.running) {
    (void)kv_.free_sequence(id);
    running_.erase(std::find(running_.begin(), running_.end(), id));
  } else {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), id));
  }
  seqs_.erase(it);
}

void Scheduler::fail(SeqId id, StepPlan& plan, const std::string& why) {
  plan.failed.push_back({id, make_error(ErrorCode::kOutOfMemory, why)});
  remove(id);
}

std::span<const std::int32_t> Scheduler::tokens(SeqId id) const {
  const auto it = seqs_.find(id);
  if (it == seqs_.end()) return {};
  return it->second.tokens;
}

std::int32_t Scheduler::num_computed(SeqId id) const {
  const auto it = seqs_.find(id);
  return it == seqs_.end() ? 0 : it->second.num_computed;
}

std::int32_t Scheduler::fit_tokens(SeqId id, const Sequence& s) const {
  const kv::BlockTable* table = kv_.table(id);
  assert(table != nullptr);
  const std::int64_t bs = kv_.block_size();
  const std::int64_t reserved = table->num_tokens();
  const std::int64_t slack = table->num_blocks() * bs - reserved;  // free slots of the last block
  const std::int64_t n = reserved - s.num_computed + slack + kv_.num_available_blocks() * bs;
  return static_cast<std::int32_t>(std::min<std::int64_t>(n, std::numeric_limits<std::int32_t>::max()));
}

Result<void> Scheduler::reserve(SeqId id, const Sequence& s, std::int32_t n) {
  const kv::BlockTable* table = kv_.table(id);
  const std::int32_t missing = s.num_computed + n - table->num_tokens();
  if (missing <= 0) return {};
  return kv_.append_slots(id, missing);
}

void Scheduler::preempt(SeqId id, StepPlan& plan) {
  Sequence& s = seqs_.at(id);
  (void)kv_.free_sequence(id);
  s.num_computed = 0;
  s.running = false;
  running_.erase(std::find(running_.begin(), running_.end(), id));
  enqueue(id);
  ++preemptions_;
  plan.preempted.push_back(id);
}

void Scheduler::schedule_decodes(StepPlan& plan, std::int32_t& budget) {
  const auto max_seqs = static_cast<std::size_t>(config_.max_sequences);
  for (std::size_t i = 0; i < running_.size();) {
    if (budget == 0 || plan.chunks.size() >= max_seqs) return;
    const SeqId id = running_[i];
    Sequence& s = seqs_.at(id);
    if (s.pending() != 1) {
      ++i;
      continue;
    }
    while (s.running && fit_tokens(id, s) < 1) preempt(running_.back(), plan);
    if (!s.running) return;               // it was the newest left: everything after it went too
    if (!reserve(id, s, 1).ok()) return;  // cannot happen: fit_tokens checked
    plan.chunks.push_back({id, s.num_computed, 1, true, false});
    --budget;
    ++i;
  }
}

void Scheduler::schedule_prefills(StepPlan& plan, std::int32_t& budget) {
  const auto max_seqs = static_cast<std::size_t>(config_.max_sequences);
  for (const SeqId id : running_) {
    if (budget == 0 || plan.chunks.size() >= max_seqs) return;
    Sequence& s = seqs_.at(id);
    if (s.pending() <= 1) continue;
    const std::int32_t n = std::min({s.pending(), budget, fit_tokens(id, s)});
    if (n <= 0 || !reserve(id, s, n).ok()) continue;
    plan.chunks.push_back({id, s.num_computed, n, n == s.pending(), true});
    budget -= n;
  }
}

void Scheduler::admit(StepPlan& plan, std::int32_t& budget) {
  const auto max_seqs = static_cast<std::size_t>(config_.max_sequences);
  while (!waiting_.empty() && budget > 0 && running_.size() < max_seqs && plan.chunks.size() < max_seqs) {
    const SeqId id = waiting_.front();
    Sequence& s = seqs_.at(id);
    std::int32_t chunk = budget;
    kv::PromptAdmission a = kv_.estimate_prompt(s.tokens, chunk);
    if (!kv_.can_allocate(a.blocks_needed)) {
      // Shrink the chunk to the blocks left after reviving the cached prefix.
      const std::int32_t revived = a.blocks_needed - kv_.blocks_for_tokens(a.new_tokens);
      const std::int32_t spare = kv_.num_available_blocks() - revived;
      if (spare <= 0) return;
      chunk = static_cast<std::int32_t>(std::min<std::int64_t>(budget, std::int64_t{spare} * kv_.block_size()));
    }
    Result<kv::PromptAdmission> got = kv_.allocate_prompt(id, s.tokens, chunk);
    if (!got) return;
    s.num_computed = got->cached_tokens;
    s.running = true;
    running_.push_back(id);
    waiting_.erase(waiting_.begin());
    const std::int32_t n = got->new_tokens;
    plan.chunks.push_back({id, s.num_computed, n, n == s.pending(), true});
    plan.admitted.push_back({id, got->cached_tokens});
    budget -= n;
  }
}

StepPlan Scheduler::try_schedule(bool may_admit) {
  StepPlan plan;
  std::int32_t budget = config_.max_batch_tokens;
  schedule_decodes(plan, budget);
  schedule_prefills(plan, budget);
  if (may_admit && plan.preempted.empty()) admit(plan, budget);
  return plan;
}

StepPlan Scheduler::schedule() {
  StepPlan plan = try_schedule(true);
  while (plan.chunks.empty() && has_work()) {
    if (running_.size() > 1) {
      preempt(running_.back(), plan);  // the others could not grow: give them the newest one's blocks
    } else if (running_.size() == 1) {
      fail(running_.front(), plan, "KV cache: the sequence does not fit the KV pool even alone");
    } else {
      std::int32_t budget = config_.max_batch_tokens;
      admit(plan, budget);
      if (plan.chunks.empty()) {
        fail(waiting_.front(), plan, "KV cache: the prompt does not fit the KV pool");
      }
      continue;
    }
    StepPlan retry = try_schedule(false);  // not the sequence just preempted
    plan.chunks = std::move(retry.chunks);
    plan.admitted.insert(plan.admitted.end(), retry.admitted.begin(), retry.admitted.end());
    plan.preempted.insert(plan.preempted.end(), retry.preempted.begin(), retry.preempted.end());
  }
  return plan;
}

Result<void> Scheduler::complete(const StepPlan& plan) {
  for (const ScheduledChunk& c : plan.chunks) {
    const auto it = seqs_.find(c.id);
    if (it == seqs_.end() || !it->second.running) continue;  // removed since the plan was made
    Sequence& s = it->second;
    if (c.start_pos != s.num_computed) {
      return make_error(ErrorCode::kInternal, "scheduler: chunk of sequence " + std::to_string(c.id) +
                                                  " does not start at its computed tokens");
    }
    s.num_computed += c.num_tokens;
    HEARTH_TRY(
        kv_.commit(c.id, std::span<const std::int32_t>(s.tokens).first(static_cast<std::size_t>(s.num_computed))));
  }
  return {};
}

Result<void> Scheduler::append_token(SeqId id, std::int32_t token) {
  const auto it = seqs_.find(id);
  if (it == seqs_.end()) return make_error(ErrorCode::kNotFound, "scheduler: no sequence " + std::to_string(id));
  it->second.tokens.push_back(token);
  return {};
}

}  // namespace hearth::scheduler
