#include "engine/backend/ops.h"

#include <cmath>

#include "engine/backend/ceilings.h"

namespace hearth::backend {

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kEmbedding:
      return "embedding";
    case OpKind::kRmsNorm:
      return "rms_norm";
    case OpKind::kLinear:
      return "linear";
    case OpKind::kLinearMany:
      return "linear_many";
    case OpKind::kRope:
      return "rope";
    case OpKind::kStoreKv:
      return "store_kv";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kGlu:
      return "glu";
    case OpKind::kAdd:
      return "add";
    case OpKind::kLogits:
      return "logits";
    case OpKind::kScale:
      return "scale";
  }
  return "?";
}

KernelKind kernel_kind(OpKind kind) {
  switch (kind) {
    case OpKind::kEmbedding:
      return KernelKind::kEmbedding;
    case OpKind::kRmsNorm:
      return KernelKind::kNorm;
    case OpKind::kLinear:
    case OpKind::kLinearMany:
    case OpKind::kLogits:
      return KernelKind::kMatmul;
    case OpKind::kRope:
      return KernelKind::kRope;
    case OpKind::kStoreKv:
      return KernelKind::kKvStore;
    case OpKind::kAttention:
      return KernelKind::kAttention;
    case OpKind::kGlu:
      return KernelKind::kActivation;
    case OpKind::kAdd:
    case OpKind::kScale:
      return KernelKind::kElementwise;
  }
  return KernelKind::kElementwise;
}

ActivationId Ops::add_activation(std::int64_t width, const char* what) {
  specs_.push_back(ActivationSpec{width, what});
  acts_.push_back(Activation{nullptr, width});
  return static_cast<ActivationId>(specs_.size() - 1);
}

}  // namespace hearth::backend

namespace hearth::backend {

using Clock = std::chrono::steady_clock;

void Ops::set_profiling(bool on) {
  profiling_ = on;
  profile_valid_ = false;
  update_instrumented();
}

DeviceCeilings Ops::ceilings() {
  return cached_ceilings(ceilings_key(), [this] { return measure_ceilings(); });
}

void Ops::set_overflow_check(bool on) {
  overflow_check_ = on;
  overflow_.reset();
  update_instrumented();
}

Result<void> Ops::begin_step(std::span<const SequenceStep> steps) {
  profile_valid_ = false;
  overflow_.reset();
  if (instrumented_) stage_instruments(steps);
  return do_begin_step(steps);
}

Result<void> Ops::finish_step() {
  Result<void> r = do_finish_step();
  if (profiling_ && r) {
    profile_step_done(profile_);
    profile_.forward_us = us_since_step_start(Clock::now());
    profile_valid_ = true;
  }
  return r;
}

// The step's sequences as the cost model and the overflow report need them.
void Ops::stage_instruments(std::span<const SequenceStep> steps) {
  prof_seqs_.clear();
  row_positions_.clear();
  prof_logit_rows_ = 0;
  for (const SequenceStep& s : steps) {
    const auto count = static_cast<std::int32_t>(s.tokens.size());
    prof_seqs_.push_back(SeqSpan{s.start_pos, count});
    for (std::int32_t i = 0; i < count; ++i) row_positions_.push_back(s.start_pos + i);
    if (s.want_logits) prof_logit_rows_ += s.all_logits ? count : 1;
  }
  if (!profiling_) return;
  profile_.ops.clear();
  profile_.tokens = static_cast<std::int64_t>(row_positions_.size());
  profile_.host_wait_us = profile_.gpu_idle_us = profile_.gpu_busy_us = profile_.sampling_us = 0;
  profile_t0_ = Clock::now();
}

std::uint64_t Ops::kv_token_bytes() const {
  return shape_.n_layer > 0 ? kv_block_bytes(1) / static_cast<std::uint64_t>(shape_.n_layer) : 0;
}

Ops::OpIo Ops::linear_many_io(std::span<const LinearOut> outs) const {
  OpIo io;
  for (const LinearOut& o : outs) {
    const OpCost c = linear_cost(o.w, n_tokens_, static_cast<bool>(o.bias), false);
    io.cost.input_bytes += c.input_bytes;
    io.cost.output_bytes += c.output_bytes;
    io.cost.flops += c.flops;
    if (io.n_outputs < io.outputs.size()) io.outputs[io.n_outputs++] = o.y;
  }
  // The input is read once for all of them.
  if (outs.size() > 1) {
    io.cost.input_bytes -=
        (outs.size() - 1) * static_cast<std::uint64_t>(n_tokens_ * outs.front().w.cols) * sizeof(float);
  }
  return io;
}

void Ops::instrument_begin(OpKind kind, const OpName& n, const OpIo& io) {
  if (observer_ != nullptr) observer_->op_begin(kind, n);
  if (!profiling_) return;
  OpProfileEntry e;
  e.name = n.what;
  e.layer = n.layer;
  e.kind = kernel_kind(kind);
  e.input_bytes = io.cost.input_bytes;
  e.output_bytes = io.cost.output_bytes;
  e.flops = io.cost.flops;
  e.is_fused = op_fused(kind);
  profile_.ops.push_back(std::move(e));
  profile_op_begin(profile_.ops.size() - 1);
}

void Ops::instrument_end(OpKind kind, const OpName& n, const OpIo& io) {
  if (profiling_) profile_op_end(profile_.ops.size() - 1);
  if (observer_ != nullptr) observer_->op_end(kind, n);
  if (!overflow_check_ || overflow_) return;
  for (std::size_t i = 0; i < io.n_outputs && !overflow_; ++i) scan_output(n, io.outputs[i]);
}

void Ops::profile_op_begin(std::size_t) {
  op_t0_ = Clock::now();
}

void Ops::profile_op_end(std::size_t index) {
  const Clock::time_point t1 = Clock::now();
  OpProfileEntry& e = profile_.ops[index];
  e.start_us = us_since_step_start(op_t0_);
  e.duration_us = std::chrono::duration<double, std::micro>(t1 - op_t0_).count();
}

// Reads the output back (a device backend synchronizes: this is a debug
// mode) and keeps the first value out of range, with the row's position.
void Ops::scan_output(const OpName& n, Activation a) {
  const auto count = static_cast<std::size_t>(n_tokens_ * a.width);
  if (count == 0 || a.data == nullptr) return;
  scan_buffer_.resize(count);
  if (!read(a, scan_buffer_)) return;  // a failed step reports its own error
  double max_abs = 0;
  std::optional<std::size_t> first_bad;
  const char* what = "";
  for (std::size_t i = 0; i < count; ++i) {
    const float v = scan_buffer_[i];
    const char* bad = std::isnan(v) ? "nan" : std::isinf(v) ? "inf" : nullptr;
    const double m = bad == nullptr ? std::fabs(static_cast<double>(v)) : 0.0;
    max_abs = std::max(max_abs, m);
    if (bad == nullptr && m > kFp16OverflowThreshold) bad = "fp16_range";
    if (bad != nullptr && !first_bad) {
      first_bad = i;
      what = bad;
    }
  }
  if (!first_bad) return;
  OverflowFinding f;
  f.layer = n.layer;
  f.op = n.what;
  f.what = what;
  f.max_abs = max_abs;
  const std::size_t row = *first_bad / static_cast<std::size_t>(a.width);
  f.position = row < row_positions_.size() ? row_positions_[row] : 0;
  overflow_ = std::move(f);
}

}  // namespace hearth::backend
