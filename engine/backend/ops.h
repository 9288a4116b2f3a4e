// The backend op interface: the operations an architecture's forward pass is
// written in, once, for every backend (cpu/ and cuda/ implement it). A model
// (models/) holds weights as backend handles, declares its activation
// buffers, and runs a step as
//
//   begin_step(steps)  ->  embed, rms_norm, linear..., attention, ...  ->  logits  ->  finish_step()
//
// Every op works on all rows (tokens) of the step, in step order; the step's
// token ids, positions, KV slots and block tables are staged once by
// begin_step, so no op takes per-token host data and none synchronizes with a
// device: a CUDA backend can fuse neighbours and capture a decode step as a
// graph. Ops do not return errors: the first failure is kept (later ops of the
// step are skipped) and finish_step() returns it, after the step's work is done.
//
// Each op call carries an OpName (what it computes in the architecture and
// its layer) and the op's kind; an OpObserver, when set, is called around each
// op (a profiler, a NaN checker). Unset, that costs one null test per op.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend/handles.h"
#include "engine/backend/op_cost.h"
#include "engine/model/model.h"
#include "hearth/profile.h"
#include "hearth/result.h"

namespace hearth::backend {

enum class OpKind : std::uint8_t {
  kEmbedding,   // embed
  kRmsNorm,     // rms_norm
  kLinear,      // linear, linear_residual
  kLinearMany,  // linear_many: several matrices over one input (q/k/v, gate/up)
  kRope,        // rope
  kStoreKv,     // store_kv
  kAttention,   // attention
  kGlu,         // glu
  kAdd,         // add
  kLogits,      // logits
  kScale,       // scale
};
const char* op_kind_name(OpKind kind);
// The profile's column of an op kind (hearth/profile.h).
KernelKind kernel_kind(OpKind kind);

// What an op call computes in the architecture (static text, e.g. "attn_norm",
// "qkv", "ffn_down") and its layer (-1 outside the layers: embedding, logits).
struct OpName {
  const char* what = "";
  std::int32_t layer = -1;
};

class OpObserver {
 public:
  virtual ~OpObserver() = default;
  // Around each op, on the thread that runs the step. On CUDA the op has only
  // been enqueued when op_end is called (time it with events on the stream).
  virtual void op_begin(OpKind kind, const OpName& name) = 0;
  virtual void op_end(OpKind kind, const OpName& name) = 0;
};

// The sizes the backend needs beyond each op's arguments: the paged KV cache
// and the attention scratch.
struct ModelShape {
  std::int32_t n_layer = 0;
  std::int32_t n_head = 0;
  std::int32_t n_head_kv = 0;
  std::int32_t head_dim = 0;
};

// How a matrix will be used, so the backend can size its scratch (a lookup
// table is never multiplied).
enum class MatrixUse : std::uint8_t {
  kLinear,     // linear ops (and logits, through set_output)
  kEmbedding,  // embed only
};

struct RopeConfig {
  std::int32_t head_dim = 0;  // every dimension rotates (no partial rotary)
  float base = 10000.0f;
  float scale = 1.0f;  // positions are multiplied by 1 / scale
  bool neox = false;   // NeoX halves (qwen2, gemma) vs adjacent pairs (llama)
};

enum class GluKind : std::uint8_t {
  kSwiGlu,     // silu(gate) * up (llama, qwen2)
  kGeGluTanh,  // gelu_tanh(gate) * up, gelu_tanh(g) = g/2 (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) (gemma)
};

// One output of linear_many: y = w x (+ bias).
struct LinearOut {
  Matrix w;
  Activation y;
  Vector bias;  // [w.rows] or empty
};

class Ops {
 public:
  virtual ~Ops() = default;
  Ops(const Ops&) = delete;
  Ops& operator=(const Ops&) = delete;

  // ---- Load time.
  // First: the model's shape. kUnsupported when the backend cannot run it
  // (CUDA: head_dim a multiple of 32 up to 256).
  virtual Result<void> set_shape(const ModelShape& shape) {
    shape_ = shape;
    return {};
  }
  // Says how many weight bytes the uploads will bring, before the first one:
  // kOutOfMemory at once when they cannot fit (CUDA: the VRAM budget or the
  // device's free memory), so a load fails before most of an upload.
  virtual Result<void> reserve_weights(std::size_t bytes) = 0;
  // The tensor as the backend computes with it: the mapping itself on the
  // CPU (the file must outlive the model), a device copy on CUDA.
  // kUnsupported for a type or shape the backend's kernels do not take.
  virtual Result<Matrix> upload_matrix(const HostTensor& t, MatrixUse use) = 0;
  virtual Result<Vector> upload_vector(const HostTensor& t) = 0;  // f32 only
  // The matrix logits() multiplies by ([n_vocab][n_embd], uploaded; may be
  // the embedding table when tied): it sizes the step's logits scratch.
  void set_output(const Matrix& output) { output_ = output; }
  // Declares an activation buffer of `width` floats per token (before the first step).
  ActivationId add_activation(std::int64_t width, const char* what);

  // ---- KV cache: [layer][block][token][kv_head][head_dim] for K and V.
  virtual std::size_t kv_block_bytes(std::int32_t block_size) const = 0;
  // (Re)allocates the pool; kOutOfMemory when it does not fit.
  virtual Result<void> allocate_kv(const KvLayout& layout) = 0;
  virtual bool has_kv() const = 0;

  // ---- A step. begin_step stages the steps (checked by the caller with
  // hearth::check_steps) and sizes the activations; kOutOfMemory when they do
  // not fit (the backend stays usable for smaller steps). finish_step waits
  // for the step, returns the first op error, and makes layer_ms() valid.
  Result<void> begin_step(std::span<const SequenceStep> steps);
  Result<void> finish_step();
  // The buffer `id` for this step (valid until the next begin_step).
  Activation act(ActivationId id) const { return acts_[id]; }

  // ---- The ops, over every token of the step unless said otherwise.
  // out[t] = table[token t] (dequantized row).
  void embed(const OpName& n, const Matrix& table, Activation out) {
    run(
        OpKind::kEmbedding, n,
        [&] {
          return OpIo{embed_cost(table, n_tokens_), {out}, 1};
        },
        [&] { do_embed(table, out); });
  }
  // out[t] = x[t] / rms(x[t]) * weight, rows of x.width floats. out may alias x.
  void rms_norm(const OpName& n, Activation x, const Vector& weight, float eps, Activation out) {
    run(
        OpKind::kRmsNorm, n,
        [&] {
          return OpIo{rms_norm_cost(n_tokens_, x.width), {out}, 1};
        },
        [&] { do_rms_norm(x, weight, eps, out); });
  }
  // Per-head RMSNorm in place (gemma's Q/K norms): x [.][n_heads][weight.n],
  // each head's weight.n floats normed on their own, times the shared weight.
  void head_rms_norm(const OpName& n, Activation x, std::int32_t n_heads, const Vector& weight, float eps) {
    run(
        OpKind::kRmsNorm, n,
        [&] {
          return OpIo{rms_norm_cost(n_tokens_ * n_heads, weight.n), {x}, 1};
        },
        [&] { do_head_rms_norm(x, n_heads, weight, eps); });
  }
  // x *= s, rows of x.width floats (gemma's embedding scale).
  void scale(const OpName& n, Activation x, float s) {
    run(
        OpKind::kScale, n,
        [&] {
          return OpIo{elementwise_cost(n_tokens_ * x.width, 1, 1), {x}, 1};
        },
        [&] { do_scale(x, s); });
  }
  // y[t] = w x[t] (+ bias). x: [.][w.cols], y: [.][w.rows], not overlapping.
  void linear(const OpName& n, const Matrix& w, Activation x, Activation y, const Vector& bias = {}) {
    run(
        OpKind::kLinear, n,
        [&] {
          return OpIo{linear_cost(w, n_tokens_, static_cast<bool>(bias), false), {y}, 1};
        },
        [&] { do_linear(w, x, y, bias); });
  }
  // Each out.y = out.w x (+ out.bias), matrices of the same cols: one call so
  // a backend can quantize x once and run them in one pass (at most 4).
  void linear_many(const OpName& n, Activation x, std::span<const LinearOut> outs) {
    run(
        OpKind::kLinearMany, n, [&] { return linear_many_io(outs); }, [&] { do_linear_many(x, outs); });
  }
  // residual[t] += w x[t] (the residual stream). scratch: [.][w.rows], for
  // backends that cannot fuse the add into the product.
  void linear_residual(const OpName& n, const Matrix& w, Activation x, Activation residual, Activation scratch) {
    run(
        OpKind::kLinear, n,
        [&] {
          return OpIo{linear_cost(w, n_tokens_, false, true), {residual}, 1};
        },
        [&] { do_linear_residual(w, x, residual, scratch); });
  }
  // Rotates q [.][n_q_heads][head_dim] and k [.][n_k_heads][head_dim] in
  // place by each token's position.
  void rope(const OpName& n, Activation q, std::int32_t n_q_heads, Activation k, std::int32_t n_k_heads,
            const RopeConfig& c) {
    run(
        OpKind::kRope, n,
        [&] {
          return OpIo{rope_cost(n_tokens_, std::int64_t{n_q_heads} * c.head_dim, std::int64_t{n_k_heads} * c.head_dim),
                      {q, k},
                      2};
        },
        [&] { do_rope(q, n_q_heads, k, n_k_heads, c); });
  }
  // Writes k and v ([.][n_head_kv * head_dim]) of every token into its slot of layer `layer`.
  void store_kv(const OpName& n, std::int32_t layer, Activation k, Activation v) {
    run(
        OpKind::kStoreKv, n,
        [&] {
          return OpIo{store_kv_cost(n_tokens_, k.width, kv_token_bytes()), {}, 0};
        },
        [&] { do_store_kv(layer, k, v); });
  }
  // Causal grouped-query attention of each token over positions 0..(its own)
  // of its sequence in layer `layer`'s cache (the step's K/V stored first).
  // q, out: [.][n_head][head_dim]; scores scaled by `scale`. window > 0: a
  // sliding window, the token at position p sees only p - window + 1 .. p
  // (the blocks before stay allocated; they are simply not read).
  void attention(const OpName& n, std::int32_t layer, Activation q, Activation out, float scale,
                 std::int32_t window = 0) {
    run(
        OpKind::kAttention, n,
        [&] {
          return OpIo{attention_cost(prof_seqs_, shape_.n_head, shape_.head_dim, kv_token_bytes(), window), {out}, 1};
        },
        [&] { do_attention(layer, q, out, scale, window); });
  }
  // gate = act(gate) * up, rows of gate.width floats.
  void glu(const OpName& n, GluKind kind, Activation gate, Activation up) {
    run(
        OpKind::kGlu, n,
        [&] {
          return OpIo{elementwise_cost(n_tokens_ * gate.width, 2, kind == GluKind::kSwiGlu ? 5 : 10), {gate}, 1};
        },
        [&] { do_glu(kind, gate, up); });
  }
  // x += y, rows of x.width floats.
  void add(const OpName& n, Activation x, Activation y) {
    run(
        OpKind::kAdd, n,
        [&] {
          return OpIo{elementwise_cost(n_tokens_ * x.width, 2, 1), {x}, 1};
        },
        [&] { do_add(x, y); });
  }
  // The logits of the rows that want them (each sequence's last token, or
  // all its tokens), in step order: rms_norm(x) * norm into scratch, then
  // the output matrix (set_output) times them into `logits` (host memory, [rows][n_vocab]);
  // complete once finish_step() returns.
  void logits(const OpName& n, Activation x, const Vector& norm, float eps, Activation scratch,
              std::span<float> logits) {
    run(
        OpKind::kLogits, n,
        [&] {
          return OpIo{logits_cost(output_, prof_logit_rows_), {}, 0};
        },
        [&] { do_logits(x, norm, eps, scratch, logits); });
  }
  // Layer timing: boundary 0 before the first layer, i after layer i - 1.
  virtual void mark_layer(std::uint32_t boundary) = 0;
  // [n_layer] ms of each layer of the last finished step; empty when that
  // step failed or was not timed.
  std::span<const double> layer_ms() const { return layer_ms_; }

  // ---- Host copies (tests, debugging; they synchronize: not for the step loop).
  // dst rows [0, rows) from src ([rows][dst.width]).
  virtual Result<void> write(Activation dst, std::span<const float> src) = 0;
  virtual Result<void> read(Activation src, std::span<float> dst) = 0;

  // After finish_step: the arg-max of each logits row of the step (the lowest
  // index among equal maxima, NaNs passed over), in row order, when the
  // backend computed them on its device in place of returning the logits
  // (every row wanting logits was SequenceStep::greedy); empty otherwise, and
  // then the logits are valid.
  virtual std::span<const std::int32_t> greedy_tokens() const { return {}; }
  virtual ModelMemory memory() const = 0;
  void set_observer(OpObserver* observer) {
    observer_ = observer;
    update_instrumented();
  }
  std::int64_t step_tokens() const { return n_tokens_; }

  // ---- Instruments (between steps; off by default; off costs one test of a
  // flag per op). CUDA runs instrumented steps eagerly: no graph capture or
  // replay (per-op events and host reads do not work inside a replayed graph).
  // Profiling: every op of a step becomes an OpProfileEntry (duration, bytes,
  // FLOPs, fused); last_profile() is the last finished step's, null when it
  // failed or profiling was off. Entry start times are from the step's start
  // (last_profile_start()).
  void set_profiling(bool on);
  bool profiling() const { return profiling_; }
  const StepProfile* last_profile() const { return profile_valid_ ? &profile_ : nullptr; }
  std::chrono::steady_clock::time_point last_profile_start() const { return profile_t0_; }
  // Overflow check: after each op, its outputs are read back and scanned for
  // NaN, Inf and |x| > kFp16OverflowThreshold; the step's first finding (its
  // `step` field 0) until the next begin_step. The logits are not scanned.
  void set_overflow_check(bool on);
  const std::optional<OverflowFinding>& overflow() const { return overflow_; }
  // The device's measured ceilings for the profiler's roofline: probed the
  // first time this process asks for this device (backend/ceilings.h; a
  // fraction of a second), zeros where the backend has no probe.
  DeviceCeilings ceilings();

 protected:
  Ops() = default;

  struct ActivationSpec {
    std::int64_t width = 0;
    const char* what = "";
  };

  // The ceilings' cache key of this device ("cpu:2", "cuda:0"; "": no probe) and its probe.
  virtual std::string ceilings_key() const { return ""; }
  virtual DeviceCeilings measure_ceilings() { return {}; }

  virtual Result<void> do_begin_step(std::span<const SequenceStep> steps) = 0;
  virtual Result<void> do_finish_step() = 0;
  // Profiling hooks, called only while profiling. The defaults time with the
  // steady clock around the op, right for a backend whose ops have completed
  // when they return (CPU). A device backend records events instead and fills
  // durations (and the step's device figures) in profile_step_done, once the
  // step has synchronized.
  virtual void profile_op_begin(std::size_t index);
  virtual void profile_op_end(std::size_t index);
  virtual void profile_step_done(StepProfile&) {}
  // Whether the backend runs this op of the current step as one fused pass.
  virtual bool op_fused(OpKind) const { return false; }
  bool instrumented() const { return instrumented_; }

  virtual void do_embed(const Matrix& table, Activation out) = 0;
  virtual void do_rms_norm(Activation x, const Vector& weight, float eps, Activation out) = 0;
  virtual void do_head_rms_norm(Activation x, std::int32_t n_heads, const Vector& weight, float eps) = 0;
  virtual void do_scale(Activation x, float s) = 0;
  virtual void do_linear(const Matrix& w, Activation x, Activation y, const Vector& bias) = 0;
  virtual void do_linear_many(Activation x, std::span<const LinearOut> outs) = 0;
  virtual void do_linear_residual(const Matrix& w, Activation x, Activation residual, Activation scratch) = 0;
  virtual void do_rope(Activation q, std::int32_t n_q_heads, Activation k, std::int32_t n_k_heads,
                       const RopeConfig& c) = 0;
  virtual void do_store_kv(std::int32_t layer, Activation k, Activation v) = 0;
  virtual void do_attention(std::int32_t layer, Activation q, Activation out, float scale, std::int32_t window) = 0;
  virtual void do_glu(GluKind kind, Activation gate, Activation up) = 0;
  virtual void do_add(Activation x, Activation y) = 0;
  virtual void do_logits(Activation x, const Vector& norm, float eps, Activation scratch, std::span<float> logits) = 0;

  const ModelShape& shape() const { return shape_; }
  const std::vector<ActivationSpec>& activation_specs() const { return specs_; }

  ModelShape shape_;
  Matrix output_;
  std::vector<ActivationSpec> specs_;
  std::vector<Activation> acts_;  // [specs_.size()], set by begin_step
  std::int64_t n_tokens_ = 0;     // of the current step
  std::vector<double> layer_ms_;

 private:
  // What an instrumented op costs and which activations it writes (each
  // [n_tokens][width]; the overflow check scans them).
  struct OpIo {
    OpCost cost;
    std::array<Activation, 4> outputs{};
    std::size_t n_outputs = 0;
  };

  // Uninstrumented: one test, then the op. `io` is computed only when instrumented.
  template <typename Io, typename F>
  void run(OpKind kind, const OpName& n, Io&& io, F&& body) {
    if (!instrumented_) {
      body();
      return;
    }
    const OpIo call = io();
    instrument_begin(kind, n, call);
    body();
    instrument_end(kind, n, call);
  }
  void instrument_begin(OpKind kind, const OpName& n, const OpIo& io);
  void instrument_end(OpKind kind, const OpName& n, const OpIo& io);
  OpIo linear_many_io(std::span<const LinearOut> outs) const;
  void stage_instruments(std::span<const SequenceStep> steps);
  void scan_output(const OpName& n, Activation a);
  void update_instrumented() { instrumented_ = observer_ != nullptr || profiling_ || overflow_check_; }
  // K and V of one token of one layer, in the cache's precision.
  std::uint64_t kv_token_bytes() const;

  OpObserver* observer_ = nullptr;
  bool instrumented_ = false;
  bool profiling_ = false;
  bool overflow_check_ = false;
  // The instrumented step: its sequences, row positions and logit rows.
  std::vector<SeqSpan> prof_seqs_;
  std::vector<std::int32_t> row_positions_;  // [n_tokens]
  std::int64_t prof_logit_rows_ = 0;
  // Profiling: the step being recorded (or the last one), its start, the
  // start of the op in progress (default hooks).
  StepProfile profile_;
  bool profile_valid_ = false;
  std::chrono::steady_clock::time_point profile_t0_, op_t0_;
  // Overflow check: this step's first finding, and the host copy of an output.
  std::optional<OverflowFinding> overflow_;
  std::vector<float> scan_buffer_;

 protected:
  // The op entries of the step being recorded (a device backend's hooks fill their times).
  std::vector<OpProfileEntry>& profile_ops() { return profile_.ops; }
  double us_since_step_start(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t - profile_t0_).count();
  }
};

}  // namespace hearth::backend
