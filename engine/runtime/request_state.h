// One request in flight on the engine thread: its sampler, its streaming
// detokenizer and stop-string matcher, its timings, and the events it sends
// to its Sink. Engine thread only.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "engine/runtime/stop_matcher.h"
#include "engine/sampler/sampler.h"
#include "engine/tokenizer/decoder.h"
#include "hearth/engine.h"

namespace hearth::runtime {

struct TokenOutcome {
  bool finished = false;
  FinishReason reason = FinishReason::kStop;
  std::optional<Error> error;
  std::optional<double> inter_token_ms;  // since the previous token (none for the first)
  std::optional<double> ttft_ms;         // set for the first token
};

class RequestState {
 public:
  RequestState(RequestId id, Request request, std::shared_ptr<Sink> sink,
               std::shared_ptr<const tokenizer::Vocabulary> vocab, Clock::time_point submitted);

  // After the prompt is known: creates the sampler (penalties see the prompt's
  // last penalty_last_n tokens). kInvalidArgument for bad sampling parameters
  // or max_tokens < 1.
  Result<void> start(std::vector<std::int32_t> prompt);

  // First admission to the running set (later ones are recomputes after preemption).
  void on_admitted(std::int32_t cached_tokens, Clock::time_point step_start);

  std::int32_t sample(std::span<const float> logits);
  // Whether sample() is a plain arg-max (greedy, no penalty applies now), and
  // the sampler's record of a token a device took as that arg-max.
  bool plain_argmax() const;
  void accept_argmax(std::int32_t token);
  // Records a sampled token, emits its text, decides whether the request ends.
  // `sequence_tokens`: prompt + generated tokens now; reaching `context_length`
  // ends the request with kLength.
  TokenOutcome on_token(std::int32_t token, Clock::time_point now, std::int32_t sequence_tokens,
                        std::int32_t context_length);

  // Sends the one on_finish of this request.
  void finish(FinishReason reason, std::optional<Error> error, Clock::time_point now);

  RequestId id() const { return id_; }
  const Request& request() const { return request_; }
  const std::vector<std::int32_t>& prompt() const { return prompt_; }

 private:
  void emit(std::string text, std::vector<std::int32_t> ids, Clock::time_point now);
  // Held-back text at the end of the stream (no stop string matched before).
  void drain_tail(std::string& text);
  Usage usage(Clock::time_point now) const;

  RequestId id_;
  Request request_;
  std::shared_ptr<Sink> sink_;
  std::shared_ptr<const tokenizer::Vocabulary> vocab_;
  std::optional<Sampler> sampler_;
  tokenizer::StreamingDetokenizer detok_;
  StopMatcher stop_;
  std::vector<std::int32_t> prompt_;
  std::vector<std::int32_t> generated_;
  std::vector<double> gaps_ms_;  // one per generated token after the first

  Clock::time_point submitted_;
  std::optional<Clock::time_point> first_scheduled_, first_token_, last_token_;
  std::int32_t cached_tokens_ = 0;
  bool finished_ = false;
};

}  // namespace hearth::runtime
