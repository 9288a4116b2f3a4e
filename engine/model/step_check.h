// The checks every Model implementation runs on a forward step before touching
// memory: token ids inside the vocabulary, block tables covering the positions
// with block ids inside the pool, and a logits buffer large enough.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/model/model.h"
#include "hearth/result.h"

namespace hearth {

// kInvalidArgument naming the first problem.
Result<void> check_steps(std::span<const SequenceStep> steps, std::uint32_t n_vocab, const KvLayout& kv,
                         std::size_t logits_size);

}  // namespace hearth
