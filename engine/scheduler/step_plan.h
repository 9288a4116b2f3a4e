// The scheduler's answer for one engine step: which sequences run, how many of
// their tokens, from which position. Plain data: the runtime turns it into
// model inputs (SequenceStep) with the sequences' tokens and block tables.
#pragma once

#include <cstdint>
#include <vector>

#include "hearth/result.h"

namespace hearth::scheduler {

using SeqId = std::int64_t;

struct ScheduledChunk {
  SeqId id = 0;
  std::int32_t start_pos = 0;   // tokens of the sequence already in the KV cache
  std::int32_t num_tokens = 0;  // tokens computed this step: [start_pos, start_pos + num_tokens)
  bool want_logits = false;     // the chunk ends at the sequence's last token: sample after it
  bool prefill = false;         // more than the one newest token (prompt or recompute)
};

struct SequenceFailure {
  SeqId id = 0;
  Error error;  // kOutOfMemory: the sequence cannot fit the KV pool even alone
};

struct Admission {
  SeqId id = 0;
  std::int32_t cached_tokens = 0;  // tokens served by the prefix cache
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;   // decodes first (oldest first), then prefill chunks
  std::vector<Admission> admitted;      // moved from waiting to running this step
  std::vector<SeqId> preempted;         // moved back to waiting this step, blocks freed
  std::vector<SequenceFailure> failed;  // removed from the scheduler; the caller ends them

  bool empty() const { return chunks.empty(); }
  std::int32_t num_tokens() const {
    std::int32_t n = 0;
    for (const auto& c : chunks) n += c.num_tokens;
    return n;
  }
};

}  // namespace hearth::scheduler
