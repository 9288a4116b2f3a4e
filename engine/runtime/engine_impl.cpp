#include "engine/runtime/engine_impl.h"

#include <algorithm>
#include <future>
#include <limits>

#include "engine/core/log.h"
#include "engine/tokenizer/decoder.h"

namespace hearth {

Result<std::unique_ptr<Engine>> Engine::create(ModelBundle bundle, const EngineOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<runtime::EngineImpl> engine,
                          runtime::EngineImpl::create(std::move(bundle), options));
  return std::unique_ptr<Engine>(std::move(engine));
}

Result<EngineSizing> engine_sizing(std::uint32_t n_ctx_train, std::size_t kv_block_bytes, const EngineOptions& o) {
  if (o.kv_block_size < 1) return make_error(ErrorCode::kInvalidArgument, "engine: kv_block_size must be >= 1");
  const std::int32_t trained =
      n_ctx_train > 0 ? static_cast<std::int32_t>(std::min<std::uint32_t>(n_ctx_train, 1u << 30)) : 8192;
  EngineSizing out;
  out.context_length = o.context_length > 0 ? o.context_length : std::min(trained, 8192);
  // KV blocks: the budget's worth, or room for two full contexts (a chat and a
  // second request at full length; short requests share it much more widely).
  const std::int64_t blocks_per_context = (std::int64_t{out.context_length} + o.kv_block_size - 1) / o.kv_block_size;
  std::int64_t blocks = blocks_per_context * 2;
  if (o.kv_budget_bytes > 0) {
    blocks = kv_block_bytes == 0 ? 0 : static_cast<std::int64_t>(o.kv_budget_bytes / kv_block_bytes);
  }
  if (blocks < 1) {
    return make_error(ErrorCode::kOutOfMemory, "engine: kv_budget_bytes " + std::to_string(o.kv_budget_bytes) +
                                                   " is smaller than one KV block (" + std::to_string(kv_block_bytes) +
                                                   " bytes)");
  }
  if (blocks > std::numeric_limits<std::int32_t>::max()) {
    return make_error(ErrorCode::kOutOfMemory, "engine: the KV pool would exceed INT32_MAX blocks");
  }
  out.kv_blocks = static_cast<std::int32_t>(blocks);
  return out;
}

namespace runtime {
namespace {

// FNV-1a: a stable identity of the weights for the prefix cache's extra key.
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::uint64_t prefix_cache_key(const std::string& model_id, KvPrecision kv_precision) {
  return fnv1a(model_id + "|kv=" + to_string(kv_precision));
}

namespace {

Result<void> check_options(const ModelBundle& bundle, const EngineOptions& o) {
  if (!bundle.model || !bundle.vocabulary) {
    return make_error(ErrorCode::kInvalidArgument, "engine: the model bundle has no model or vocabulary");
  }
  if (o.context_length < 0 || o.context_length == 1) {
    return make_error(ErrorCode::kInvalidArgument, "engine: context_length must be 0 (default) or at least 2");
  }
  if (o.kv_block_size < 1) return make_error(ErrorCode::kInvalidArgument, "engine: kv_block_size must be >= 1");
  if (o.max_batch_tokens < 1) return make_error(ErrorCode::kInvalidArgument, "engine: max_batch_tokens must be >= 1");
  if (o.max_sequences < 1) return make_error(ErrorCode::kInvalidArgument, "engine: max_sequences must be >= 1");
  return {};
}

}  // namespace

Result<std::unique_ptr<EngineImpl>> EngineImpl::create(ModelBundle bundle, const EngineOptions& options) {
  HEARTH_TRY(check_options(bundle, options));
  const ModelHyperParams& hp = bundle.model->hparams();
  HEARTH_ASSIGN_OR_RETURN(const EngineSizing sizing,
                          engine_sizing(hp.n_ctx_train, bundle.model->kv_block_bytes(options.kv_block_size), options));
  const std::int32_t context = sizing.context_length;
  if (hp.n_ctx_train > 0 && static_cast<std::uint32_t>(context) > hp.n_ctx_train) {
    log::get("engine")->warn("context_length {} exceeds the model's trained context {}", context, hp.n_ctx_train);
  }
  std::int32_t blocks = sizing.kv_blocks;
  Result<void> allocated = bundle.model->allocate_kv(KvLayout{blocks, options.kv_block_size});
  const std::int32_t one_context = (context + options.kv_block_size - 1) / options.kv_block_size;
  if (!allocated && allocated.error().code == ErrorCode::kOutOfMemory && options.kv_budget_bytes == 0 &&
      blocks > one_context) {
    // The default pool (two contexts) where memory is short (a GPU, a VRAM
    // budget): one full context still serves every request.
    log::get("engine")->warn("{}; trying a KV pool of one context", allocated.error().message);
    blocks = one_context;
    allocated = bundle.model->allocate_kv(KvLayout{blocks, options.kv_block_size});
  }
  if (!allocated) return std::move(allocated).error();
  kv::KvCacheConfig kv_config;
  kv_config.num_blocks = blocks;
  kv_config.block_size = options.kv_block_size;
  kv_config.enable_prefix_cache = options.prefix_cache;
  kv_config.extra_key = prefix_cache_key(bundle.model_id, bundle.run.kv_precision);
  HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<kv::KvCacheManager> kv, kv::KvCacheManager::create(kv_config));
  log::get("engine")->info(
      "engine: {} ({}), weights {}, KV {}, context {} tokens, KV pool {} blocks of {} tokens ({} MiB), prefix cache {}",
      bundle.run.device, bundle.run.device_name, bundle.run.weight_format, to_string(bundle.run.kv_precision), context,
      blocks, options.kv_block_size,
      (static_cast<std::size_t>(blocks) * bundle.model->kv_block_bytes(options.kv_block_size)) >> 20,
      options.prefix_cache ? "on" : "off");
  return std::unique_ptr<EngineImpl>(new EngineImpl(std::move(bundle), options, context, std::move(kv)));
}

namespace {

chat::RenderLimits template_limits(const EngineOptions& options) {
  chat::RenderLimits limits;
  limits.max_steps = options.template_max_steps;
  limits.deadline = options.template_deadline;
  return limits;
}

bool has_chat_request(const std::vector<Engine::Submission>& submissions) {
  return std::any_of(submissions.begin(), submissions.end(),
                     [](const Engine::Submission& s) { return !s.request.messages.empty(); });
}

}  // namespace

EngineImpl::EngineImpl(ModelBundle bundle, const EngineOptions& options, std::int32_t context_length,
                       std::unique_ptr<kv::KvCacheManager> kv)
    : bundle_(std::move(bundle)),
      options_(options),
      context_length_(context_length),
      prompts_(bundle_.vocabulary, bundle_.chat_template, template_limits(options)),
      prepare_encoder_(bundle_.vocabulary),
      kv_(std::move(kv)),
      scheduler_(scheduler::SchedulerConfig{options.max_batch_tokens, options.max_sequences}, *kv_),
      encoder_(bundle_.vocabulary) {
  publish_metrics();
  thread_ = std::thread([this] { loop(); });
  prepare_thread_ = std::thread([this] { prepare_loop(); });
}

// The preparation thread stops first: a render in progress is cancelled and
// every batch it still holds is handed over cancelled, so the engine thread
// finishes each of those requests (their sinks hear kCancelled) before it stops.
EngineImpl::~EngineImpl() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    prepare_stopping_ = true;
    render_cancel_.store(true);
  }
  prepare_wake_.notify_one();
  prepare_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_.stopping = true;
  }
  wake_.notify_one();
  thread_.join();
}

RequestId EngineImpl::submit(Request request, std::shared_ptr<Sink> sink) {
  std::vector<Submission> one;
  one.push_back({std::move(request), std::move(sink)});
  return submit_all(std::move(one)).front();
}

std::vector<RequestId> EngineImpl::submit_all(std::vector<Submission> submissions) {
  std::vector<RequestId> ids;
  const bool to_prepare = has_chat_request(submissions);
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::time_point now = Clock::now();
    std::vector<Incoming>& batch = to_prepare ? to_prepare_.emplace_back() : inbox_.requests;
    for (Submission& s : submissions) {
      ids.push_back(next_id_.fetch_add(1));
      if (to_prepare) preparing_.insert(ids.back());
      batch.push_back({ids.back(), std::move(s.request), std::move(s.sink), now, std::nullopt, false});
    }
  }
  if (to_prepare) {
    prepare_wake_.notify_one();
  } else {
    wake_.notify_one();
  }
  return ids;
}

// A request still queued for preparation leaves its batch at once (handed to
// the engine thread cancelled, without waiting for the renders ahead of it);
// one in the batch being prepared is skipped, or its render stopped.
void EngineImpl::cancel(RequestId id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_.cancels.push_back(id);
    if (preparing_.count(id) != 0 && !take_queued(id)) cancelled_before_start_.insert(id);
    if (rendering_ == id) render_cancel_.store(true);
  }
  wake_.notify_one();
}

bool EngineImpl::take_queued(RequestId id) {
  for (auto batch = to_prepare_.begin(); batch != to_prepare_.end(); ++batch) {
    const auto it = std::find_if(batch->begin(), batch->end(), [&](const Incoming& in) { return in.id == id; });
    if (it == batch->end()) continue;
    it->cancelled = true;
    inbox_.requests.push_back(std::move(*it));
    batch->erase(it);
    if (batch->empty()) to_prepare_.erase(batch);
    preparing_.erase(id);
    return true;
  }
  return false;
}

void EngineImpl::prepare_loop() {
  for (;;) {
    std::vector<Incoming> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      prepare_wake_.wait(lock, [&] { return prepare_stopping_ || !to_prepare_.empty(); });
      if (to_prepare_.empty()) return;  // stopping, and everything was handed over
      batch = std::move(to_prepare_.front());
      to_prepare_.pop_front();
    }
    for (Incoming& in : batch) prepare(in);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (Incoming& in : batch) {
        if (cancelled_before_start_.erase(in.id) != 0) in.cancelled = true;
        preparing_.erase(in.id);
        inbox_.requests.push_back(std::move(in));
      }
    }
    wake_.notify_one();
  }
}

void EngineImpl::prepare(Incoming& in) {
  if (in.request.messages.empty()) return;  // token or text prompt: the engine thread tokenizes it
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Not rendered at all: a chat template from a model file may take up to its deadline.
    if (prepare_stopping_ || cancelled_before_start_.count(in.id) != 0) {
      in.cancelled = true;
      return;
    }
    rendering_ = in.id;
    render_cancel_.store(false);
  }
  in.prompt = prompts_.build(in.request, prepare_encoder_, context_length_, &render_cancel_);
  std::lock_guard<std::mutex> lock(mu_);
  rendering_ = 0;
}

KvDebugInfo EngineImpl::debug_kv() {
  std::promise<KvDebugInfo> done;
  std::future<KvDebugInfo> result = done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_.tasks.push_back([this, &done] {
      done.set_value(KvDebugInfo{kv_->stats(), kv_->check_invariants(), static_cast<std::int32_t>(active_.size())});
    });
  }
  wake_.notify_one();
  return result.get();
}

const ModelHyperParams& EngineImpl::model_info() const {
  return bundle_.model->hparams();
}

Result<std::vector<std::int32_t>> EngineImpl::tokenize(std::string_view text, bool add_special,
                                                       bool parse_special) const {
  return tokenizer::encode(bundle_.vocabulary, text, tokenizer::EncodeOptions{add_special, parse_special});
}

Result<std::string> EngineImpl::render_chat(const std::vector<ChatTurn>& messages, bool add_generation_prompt) const {
  return prompts_.render(messages, add_generation_prompt, nullptr);
}

Result<std::string> EngineImpl::detokenize(const std::vector<std::int32_t>& ids) const {
  return tokenizer::decode(*bundle_.vocabulary, ids);
}

EngineImpl::Inbox EngineImpl::wait_for_work() {
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait(lock, [&] {
    return inbox_.stopping || !inbox_.requests.empty() || !inbox_.cancels.empty() || !inbox_.tasks.empty() ||
           scheduler_.has_work();
  });
  Inbox taken;
  std::swap(taken.requests, inbox_.requests);
  std::swap(taken.cancels, inbox_.cancels);
  std::swap(taken.tasks, inbox_.tasks);
  taken.stopping = inbox_.stopping;
  return taken;
}

void EngineImpl::loop() {
  for (;;) {
    Inbox in = wait_for_work();
    for (Incoming& r : in.requests) start_request(std::move(r));
    for (const RequestId id : in.cancels) finish(id, FinishReason::kCancelled, std::nullopt);
    for (auto& task : in.tasks) task();
    if (in.stopping) {
      finish_all(FinishReason::kCancelled);
      publish_metrics();
      return;
    }
    if (scheduler_.has_work()) run_step();
    publish_metrics();
  }
}

void EngineImpl::start_request(Incoming in) {
  auto state = std::make_unique<RequestState>(in.id, std::move(in.request), std::move(in.sink), bundle_.vocabulary,
                                              in.submitted);
  RequestState& r = *state;
  active_.emplace(in.id, std::move(state));
  if (in.cancelled) return finish(in.id, FinishReason::kCancelled, std::nullopt);
  Result<std::vector<std::int32_t>> prompt =
      in.prompt ? std::move(*in.prompt) : prompts_.build(r.request(), encoder_, context_length_);
  if (!prompt && prompt.error().code == ErrorCode::kCancelled) {
    return finish(in.id, FinishReason::kCancelled, std::nullopt);
  }
  if (!prompt) return finish(in.id, FinishReason::kError, std::move(prompt).error());
  if (Result<void> ok = r.start(std::move(prompt).value()); !ok) {
    return finish(in.id, FinishReason::kError, std::move(ok).error());
  }
  if (Result<void> ok = scheduler_.add(in.id, r.prompt(), r.request().priority); !ok) {
    return finish(in.id, FinishReason::kError, std::move(ok).error());
  }
}

void EngineImpl::finish(RequestId id, FinishReason reason, std::optional<Error> error) {
  const auto it = active_.find(id);
  if (it == active_.end()) return;  // unknown or already finished
  scheduler_.remove(id);
  std::unique_ptr<RequestState> state = std::move(it->second);
  active_.erase(it);
  state->finish(reason, std::move(error), Clock::now());
  metrics_.record_finished();
}

void EngineImpl::finish_all(FinishReason reason) {
  std::vector<RequestId> ids;
  for (const auto& [id, state] : active_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (const RequestId id : ids) finish(id, reason, std::nullopt);
}

void EngineImpl::publish_metrics() {
  metrics::Gauges g;
  g.waiting = scheduler_.num_waiting();
  g.running = scheduler_.num_running();
  g.kv = kv_->stats();
  g.preemptions = scheduler_.preemptions();
  const ModelMemory mem = bundle_.model->memory();
  g.memory.weights = mem.weights_bytes;
  g.memory.kv_pool = mem.kv_bytes;
  g.memory.workspace = mem.workspace_bytes;
  g.memory.device_free = mem.device_free;
  g.memory.device_total = mem.device_total;
  metrics_.publish(g);
}

}  // namespace runtime
}  // namespace hearth
