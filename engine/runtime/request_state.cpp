#include "engine/runtime/request_state.h"

#include <algorithm>
#include <cassert>

#include "engine/metrics/rolling_window.h"

namespace hearth::runtime {
namespace {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

RequestState::RequestState(RequestId id, Request request, std::shared_ptr<Sink> sink,
                           std::shared_ptr<const tokenizer::Vocabulary> vocab, Clock::time_point submitted)
    : id_(id),
      request_(std::move(request)),
      sink_(std::move(sink)),
      vocab_(vocab),
      detok_(std::move(vocab), tokenizer::DecodeOptions{.render_special = false, .strip_space_prefix = false}),
      stop_(request_.stop_strings),
      submitted_(submitted) {}

Result<void> RequestState::start(std::vector<std::int32_t> prompt) {
  if (request_.max_tokens < 1) {
    return make_error(ErrorCode::kInvalidArgument, "request: max_tokens must be at least 1");
  }
  HEARTH_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(request_.sampling));
  sampler_ = std::move(sampler);
  prompt_ = std::move(prompt);
  if (penalties_active(request_.sampling)) {
    const auto n = std::min<std::size_t>(prompt_.size(), static_cast<std::size_t>(request_.sampling.penalty_last_n));
    for (std::size_t i = prompt_.size() - n; i < prompt_.size(); ++i) sampler_->accept(prompt_[i]);
  }
  return {};
}

void RequestState::on_admitted(std::int32_t cached_tokens, Clock::time_point step_start) {
  if (first_scheduled_) return;
  first_scheduled_ = step_start;
  cached_tokens_ = cached_tokens;
}

std::int32_t RequestState::sample(std::span<const float> logits) {
  assert(sampler_);
  const std::int32_t token = sampler_->sample(logits);
  sampler_->accept(token);
  return token;
}

bool RequestState::plain_argmax() const {
  return sampler_ && sampler_->plain_argmax();
}

void RequestState::accept_argmax(std::int32_t token) {
  assert(sampler_);
  sampler_->accept(token);
}

void RequestState::emit(std::string text, std::vector<std::int32_t> ids, Clock::time_point now) {
  sink_->on_text(TextEvent{id_, std::move(text), std::move(ids), now});
}

void RequestState::drain_tail(std::string& text) {
  StopMatcher::Output last = stop_.push(detok_.flush());
  text += last.text;
  if (!last.stopped) text += stop_.flush();
}

TokenOutcome RequestState::on_token(std::int32_t token, Clock::time_point now, std::int32_t sequence_tokens,
                                    std::int32_t context_length) {
  TokenOutcome out;
  if (last_token_) {
    out.inter_token_ms = ms_between(*last_token_, now);
    gaps_ms_.push_back(*out.inter_token_ms);
  } else {
    first_token_ = now;
    out.ttft_ms = ms_between(submitted_, now);
  }
  last_token_ = now;
  generated_.push_back(token);

  const auto& stops = request_.stop_tokens;
  const bool eog = (!request_.ignore_eos && vocab_->is_end_of_generation(token)) ||
                   std::find(stops.begin(), stops.end(), token) != stops.end();
  std::string text;
  if (eog) {  // the end token's own text is not emitted
    drain_tail(text);
    emit(std::move(text), {token}, now);
    out.finished = true;
    out.reason = FinishReason::kStop;
    return out;
  }
  Result<std::string> piece = detok_.push(token);
  if (!piece) {
    out.finished = true;
    out.reason = FinishReason::kError;
    out.error = std::move(piece).error();
    return out;
  }
  StopMatcher::Output o = stop_.push(*piece);
  text = std::move(o.text);
  if (o.stopped) {
    out.finished = true;
    out.reason = FinishReason::kStop;
  } else if (static_cast<std::int32_t>(generated_.size()) >= request_.max_tokens || sequence_tokens >= context_length) {
    drain_tail(text);
    out.finished = true;
    out.reason = FinishReason::kLength;
  }
  emit(std::move(text), {token}, now);
  return out;
}

Usage RequestState::usage(Clock::time_point now) const {
  Usage u;
  u.prompt_tokens = static_cast<std::int32_t>(prompt_.size());
  u.cached_tokens = cached_tokens_;
  u.generated_tokens = static_cast<std::int32_t>(generated_.size());
  u.total_ms = ms_between(submitted_, now);
  if (first_token_) {
    u.ttft_ms = ms_between(submitted_, *first_token_);
    if (first_scheduled_) {
      const double prefill_s = ms_between(*first_scheduled_, *first_token_) / 1000.0;
      const double computed = static_cast<double>(u.prompt_tokens - u.cached_tokens);
      u.prefill_tps = prefill_s > 0 ? computed / prefill_s : 0.0;
    }
    const double decode_s = ms_between(*first_token_, *last_token_) / 1000.0;
    if (generated_.size() > 1 && decode_s > 0) u.decode_tps = static_cast<double>(generated_.size() - 1) / decode_s;
  }
  if (!gaps_ms_.empty()) {
    std::vector<double> sorted = gaps_ms_;
    std::sort(sorted.begin(), sorted.end());
    u.itl_p50_ms = metrics::nearest_rank(sorted, 0.50);
    u.itl_p95_ms = metrics::nearest_rank(sorted, 0.95);
    u.itl_p99_ms = metrics::nearest_rank(sorted, 0.99);
  }
  return u;
}

void RequestState::finish(FinishReason reason, std::optional<Error> error, Clock::time_point now) {
  if (finished_) return;
  finished_ = true;
  FinishEvent ev;
  ev.id = id_;
  ev.reason = reason;
  ev.usage = usage(now);
  ev.error = std::move(error);
  ev.prompt_token_ids = prompt_;
  ev.generated_token_ids = generated_;
  sink_->on_finish(ev);
}

}  // namespace hearth::runtime
