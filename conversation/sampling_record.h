// The engine's sampling parameters and the store's record of them, both ways:
// the record holds each float setting as the decimal the user wrote (0.05f is
// recorded as 0.05, not 0.0500000007), and reads back as the same floats.
#pragma once

#include "hearth/engine.h"
#include "store/records.h"

namespace hearth::conversation {

store::SamplingRecord to_record(const SamplingParams& p);
SamplingParams sampling_of(const store::SamplingRecord& r);

}  // namespace hearth::conversation
