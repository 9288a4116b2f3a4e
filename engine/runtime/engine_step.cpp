// One engine step: schedule, build the model inputs of every scheduled
// sequence, one forward for all of them, sample, emit.
#include <chrono>

#include "engine/backend/ops.h"
#include "engine/core/log.h"
#include "engine/runtime/engine_impl.h"

namespace hearth::runtime {
namespace {

double ms_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace

void EngineImpl::run_step() {
  metrics::StepRecord rec;
  rec.start = Clock::now();
  scheduler::StepPlan plan = scheduler_.schedule();
  for (scheduler::SequenceFailure& f : plan.failed) finish(f.id, FinishReason::kError, std::move(f.error));
  for (const scheduler::Admission& a : plan.admitted) {
    if (const auto it = active_.find(a.id); it != active_.end()) it->second->on_admitted(a.cached_tokens, rec.start);
  }
  const Clock::time_point scheduled = Clock::now();
  rec.schedule_ms = ms_since(rec.start, scheduled);
  if (plan.empty()) return;

  apply_instruments();
  const bool ok = forward(plan);
  const Clock::time_point forwarded = Clock::now();
  rec.forward_ms = ms_since(scheduled, forwarded);
  if (ok) rec.layer_ms = bundle_.model->last_layer_ms();  // read before sampling: valid until the next forward
  if (ok) rec.decode_tokens = sample_all(plan);
  rec.end = Clock::now();
  rec.sample_ms = ms_since(forwarded, rec.end);
  if (ok) collect_instruments(rec, forwarded);
  for (StepFinish& f : step_finishes_) finish(f.id, f.reason, std::move(f.error));
  step_finishes_.clear();
  for (const scheduler::ScheduledChunk& c : plan.chunks) rec.prefill_tokens += c.prefill ? c.num_tokens : 0;
  metrics_.record_step(rec);
}

// Runs the model over the plan and commits the computed tokens. On an error
// every sequence of the step ends with it (the engine keeps serving).
bool EngineImpl::forward(const scheduler::StepPlan& plan) {
  steps_.clear();
  std::size_t want = 0;
  for (const scheduler::ScheduledChunk& c : plan.chunks) {
    const std::span<const std::int32_t> tokens = scheduler_.tokens(c.id);
    const kv::BlockTable* table = kv_->table(c.id);
    SequenceStep s;
    s.tokens = tokens.subspan(static_cast<std::size_t>(c.start_pos), static_cast<std::size_t>(c.num_tokens));
    s.start_pos = c.start_pos;
    s.block_table = table->blocks();
    s.want_logits = c.want_logits;
    if (c.want_logits) {
      const auto it = active_.find(c.id);
      s.greedy = it != active_.end() && it->second->plain_argmax();
    }
    steps_.push_back(s);
    want += c.want_logits ? 1 : 0;
  }
  logits_.resize(want * bundle_.model->hparams().n_vocab);
  Result<void> r = bundle_.model->forward(steps_, logits_);
  // A forward pass that read the weights after the file shrank read zeros
  // (engine/gguf/mapping_guard.h): its logits are garbage, refuse them.
  if (r && bundle_.weights_lost && bundle_.weights_lost()) {
    r = make_error(
        ErrorCode::kIo,
        "the model file changed on disk while in use (it shrank under its memory mapping): reload the model");
  }
  if (r) r = scheduler_.complete(plan);
  if (r) return true;
  log::get("engine")->error("forward step failed: {}", r.error().describe());
  for (const scheduler::ScheduledChunk& c : plan.chunks) finish(c.id, FinishReason::kError, r.error());
  return false;
}

// Samples every sequence that wanted logits; returns the tokens sampled.
std::int32_t EngineImpl::sample_all(const scheduler::StepPlan& plan) {
  const std::size_t vocab = bundle_.model->hparams().n_vocab;
  // The device's arg-maxes when it took every row's (all of them greedy).
  const backend::Ops* ops = bundle_.model->backend_ops();
  const std::span<const std::int32_t> argmax = ops != nullptr ? ops->greedy_tokens() : std::span<const std::int32_t>{};
  std::size_t row = 0;
  std::int32_t sampled = 0;
  for (const scheduler::ScheduledChunk& c : plan.chunks) {
    if (!c.want_logits) continue;
    const std::size_t at = row++;
    const auto it = active_.find(c.id);
    if (it == active_.end()) continue;
    RequestState& r = *it->second;
    std::int32_t token = 0;
    if (at < argmax.size()) {
      token = argmax[at];
      r.accept_argmax(token);
    } else {
      token = r.sample(std::span<const float>(logits_.data() + at * vocab, vocab));
    }
    ++sampled;
    if (Result<void> ok = scheduler_.append_token(c.id, token); !ok) {
      finish(c.id, FinishReason::kError, std::move(ok).error());
      continue;
    }
    const auto seq_tokens = static_cast<std::int32_t>(scheduler_.tokens(c.id).size());
    TokenOutcome out = r.on_token(token, Clock::now(), seq_tokens, context_length_);
    if (out.ttft_ms) metrics_.record_ttft(*out.ttft_ms);
    if (out.inter_token_ms) metrics_.record_inter_token(*out.inter_token_ms);
    if (out.finished) step_finishes_.push_back(StepFinish{c.id, out.reason, std::move(out.error)});
  }
  return sampled;
}

}  // namespace hearth::runtime
