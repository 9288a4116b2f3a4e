#include "cli/store_json.h"

#include "cli/store_session.h"

namespace hearth::cli {

namespace {

using nlohmann::json;

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json sampling_json(const store::SamplingRecord& s) {
  return {{"temperature", s.temperature},
          {"top_k", s.top_k},
          {"top_p", s.top_p},
          {"min_p", s.min_p},
          {"repeat_penalty", s.repeat_penalty},
          {"frequency_penalty", s.frequency_penalty},
          {"presence_penalty", s.presence_penalty},
          {"penalty_last_n", s.penalty_last_n},
          {"seed", s.seed}};
}

// The generation's fields other than its prompt version (the caller names it).
json generation_fields(const store::GenerationRecord& g) {
  return {{"prompt_label", g.prompt_label},
          {"system_text", g.system_text},
          {"variables", g.variables},
          {"model", g.model_name},
          {"model_path", g.model_path},
          {"model_sha256", g.model_sha256},
          {"quantization", g.quantization},
          {"kv_precision", g.kv_precision},
          {"device", g.device},
          {"sampling", sampling_json(g.sampling)},
          {"max_tokens", g.max_tokens},
          {"stop", g.stop},
          {"prompt_tokens", g.prompt_tokens},
          {"cached_tokens", g.cached_tokens},
          {"generated_tokens", g.generated_tokens},
          {"ttft_ms", g.ttft_ms},
          {"prefill_tps", g.prefill_tok_s},
          {"decode_tps", g.decode_tok_s},
          {"itl_p50_ms", g.itl_p50_ms},
          {"itl_p95_ms", g.itl_p95_ms},
          {"itl_p99_ms", g.itl_p99_ms},
          {"peak_memory_bytes", g.peak_memory_bytes},
          {"finish_reason", g.finish_reason},
          {"error", g.error},
          {"started", iso_time(g.started_ms)},
          {"finished", iso_time(g.finished_ms)}};
}

}  // namespace

json prompt_config_json(const store::PromptConfig& c) {
  return {{"temperature", or_null(c.temperature)},
          {"top_p", or_null(c.top_p)},
          {"top_k", or_null(c.top_k)},
          {"min_p", or_null(c.min_p)},
          {"max_tokens", or_null(c.max_tokens)},
          {"stop", or_null(c.stop)}};
}

json prompt_version_json(const store::Prompt& p, const store::PromptVersion& v,
                         const std::vector<store::PromptLabel>& labels) {
  json names = json::array();
  for (const auto& l : labels) {
    if (l.version_id == v.id) names.push_back(l.label);
  }
  json source = nullptr;
  if (v.source_version_id) source = *v.source_version_id;
  return {{"name", p.name},
          {"prompt_id", p.id},
          {"version", v.version},
          {"version_id", v.id},
          {"text", v.text},
          {"note", v.note},
          {"created", iso_time(v.created_ms)},
          {"created_ms", v.created_ms},
          {"config", prompt_config_json(v.config)},
          {"source_version_id", source},
          {"labels", names},
          {"archived", p.archived}};
}

json metrics_json(const store::VersionMetrics& m) {
  return {{"answers", m.answers},
          {"median_ttft_ms", m.median_ttft_ms},
          {"median_decode_tps", m.median_decode_tok_s},
          {"median_generated_tokens", m.median_generated_tokens},
          {"finish_reasons", m.finish_reasons},
          {"rated_up", m.rated_up},
          {"rated_down", m.rated_down}};
}

json generation_json(store::Store& store, const store::GenerationRecord& g) {
  json out = generation_fields(g);
  out["prompt_version"] = nullptr;
  if (g.prompt_version_id) {
    auto v = store.get_prompt_version(*g.prompt_version_id);
    auto p = v ? store.get_prompt(v->prompt_id) : store::StoreResult<store::Prompt>(v.error());
    if (p) out["prompt_version"] = {{"name", p->name}, {"version", v->version}, {"id", v->id}};
  }
  return out;
}

json history_entry_json(const store::HistoryEntry& e) {
  json out{{"message_id", e.message_id},
           {"conversation_id", e.conversation_id},
           {"conversation_title", e.conversation_title},
           {"time", iso_time(e.created_ms)},
           {"created_ms", e.created_ms},
           {"text", e.text},
           {"answer_message_id", or_null(e.answer_message_id)},
           {"rating", e.rating == store::Rating::kNone ? json(nullptr) : json(store::to_string(e.rating))},
           {"prompt_version", nullptr}};
  if (e.generation && e.generation->prompt_version_id) {
    out["prompt_version"] = {
        {"name", e.prompt_name}, {"version", e.prompt_version}, {"id", *e.generation->prompt_version_id}};
  }
  // The answer's fields, null for a prompt nobody answered (every row has the same keys).
  const json fields = generation_fields(e.generation.value_or(store::GenerationRecord{}));
  for (const auto& [key, value] : fields.items()) out[key] = e.generation ? value : json(nullptr);
  return out;
}

}  // namespace hearth::cli
