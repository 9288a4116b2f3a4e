#include "store/export_format.h"

namespace hearth::store {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& path, const char* key, const char* expected) {
  throw BadDocument{path + "." + key + ": expected " + expected};
}

const json* find(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object()) throw BadDocument{path + ": expected an object"};
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& require(const json& obj, const char* key, const std::string& path, const char* expected) {
  const json* v = find(obj, key, path);
  if (v == nullptr) bad(path, key, expected);
  return *v;
}

}  // namespace

std::string get_string(const json& obj, const char* key, const std::string& path) {
  const json& v = require(obj, key, path, "a string");
  if (!v.is_string()) bad(path, key, "a string");
  return v.get<std::string>();
}

std::int64_t get_int(const json& obj, const char* key, const std::string& path) {
  const json& v = require(obj, key, path, "an integer");
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) bad(path, key, "a 64-bit signed integer");
    return static_cast<std::int64_t>(u);
  }
  if (!v.is_number_integer()) bad(path, key, "an integer");
  return v.get<std::int64_t>();
}

double get_real(const json& obj, const char* key, const std::string& path) {
  const json& v = require(obj, key, path, "a number");
  if (!v.is_number()) bad(path, key, "a number");
  return v.get<double>();
}

bool get_bool(const json& obj, const char* key, const std::string& path) {
  const json& v = require(obj, key, path, "true or false");
  if (!v.is_boolean()) bad(path, key, "true or false");
  return v.get<bool>();
}

std::optional<std::int64_t> get_optional_int(const json& obj, const char* key, const std::string& path) {
  const json* v = find(obj, key, path);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return get_int(obj, key, path);
}

std::optional<double> get_optional_real(const json& obj, const char* key, const std::string& path) {
  const json* v = find(obj, key, path);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return get_real(obj, key, path);
}

std::optional<std::string> get_optional_string(const json& obj, const char* key, const std::string& path) {
  const json* v = find(obj, key, path);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return get_string(obj, key, path);
}

const json& get_array(const json& obj, const char* key, const std::string& path) {
  const json& v = require(obj, key, path, "an array");
  if (!v.is_array()) bad(path, key, "an array");
  return v;
}

const json& get_object(const json& obj, const char* key, const std::string& path) {
  const json& v = require(obj, key, path, "an object");
  if (!v.is_object()) bad(path, key, "an object");
  return v;
}

namespace {

json sampling_to_json(const SamplingRecord& p) {
  return json{{"temperature", p.temperature},
              {"top_k", p.top_k},
              {"top_p", p.top_p},
              {"min_p", p.min_p},
              {"repeat_penalty", p.repeat_penalty},
              {"frequency_penalty", p.frequency_penalty},
              {"presence_penalty", p.presence_penalty},
              {"penalty_last_n", p.penalty_last_n},
              {"seed", p.seed}};
}

}  // namespace

json generation_to_json(const GenerationRecord& g) {
  return json{{"prompt_version_id", g.prompt_version_id ? json(*g.prompt_version_id) : json(nullptr)},
              {"model_path", g.model_path},
              {"model_sha256", g.model_sha256},
              {"model_name", g.model_name},
              {"quantization", g.quantization},
              {"kv_precision", g.kv_precision},
              {"device", g.device},
              {"sampling", sampling_to_json(g.sampling)},
              {"max_tokens", g.max_tokens},
              {"stop", g.stop},
              {"system_text", g.system_text},
              {"variables", g.variables},
              {"prompt_label", g.prompt_label},
              {"prompt_tokens", g.prompt_tokens},
              {"cached_tokens", g.cached_tokens},
              {"generated_tokens", g.generated_tokens},
              {"ttft_ms", g.ttft_ms},
              {"prefill_tok_s", g.prefill_tok_s},
              {"decode_tok_s", g.decode_tok_s},
              {"itl_p50_ms", g.itl_p50_ms},
              {"itl_p95_ms", g.itl_p95_ms},
              {"itl_p99_ms", g.itl_p99_ms},
              {"peak_memory_bytes", g.peak_memory_bytes},
              {"finish_reason", g.finish_reason},
              {"error", g.error},
              {"started_ms", g.started_ms},
              {"finished_ms", g.finished_ms}};
}

json conversation_settings_to_json(const ConversationSettings& c, TimeMs updated_ms) {
  return json{{"sampling", sampling_to_json(c.sampling)},
              {"max_tokens", c.max_tokens},
              {"system_prompt", c.system_prompt},
              {"updated_ms", updated_ms}};
}

namespace {

SamplingRecord sampling_from_json(const json& j, const std::string& path) {
  SamplingRecord p;
  p.temperature = get_real(j, "temperature", path);
  p.top_k = get_int(j, "top_k", path);
  p.top_p = get_real(j, "top_p", path);
  p.min_p = get_real(j, "min_p", path);
  p.repeat_penalty = get_real(j, "repeat_penalty", path);
  p.frequency_penalty = get_real(j, "frequency_penalty", path);
  p.presence_penalty = get_real(j, "presence_penalty", path);
  p.penalty_last_n = get_int(j, "penalty_last_n", path);
  const json& seed = j.at("seed");
  if (seed.is_number_unsigned()) {
    p.seed = seed.get<std::uint64_t>();
  } else if (seed.is_number_integer() && seed.get<std::int64_t>() >= 0) {
    p.seed = static_cast<std::uint64_t>(seed.get<std::int64_t>());
  } else {
    throw BadDocument{path + ".seed: expected an unsigned integer"};
  }
  return p;
}

std::vector<std::string> strings_of(const json& arr, const std::string& path) {
  std::vector<std::string> out;
  for (const json& s : arr) {
    if (!s.is_string()) throw BadDocument{path + ": expected strings"};
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace

GenerationRecord generation_from_json(const json& j, const std::string& path) {
  GenerationRecord g;
  g.prompt_version_id = get_optional_int(j, "prompt_version_id", path);
  g.model_path = get_string(j, "model_path", path);
  g.model_sha256 = get_string(j, "model_sha256", path);
  g.model_name = get_string(j, "model_name", path);
  g.quantization = get_string(j, "quantization", path);
  g.kv_precision = get_string(j, "kv_precision", path);
  g.device = get_string(j, "device", path);
  const json& sampling = get_object(j, "sampling", path);
  if (!sampling.contains("seed")) throw BadDocument{path + ".sampling.seed: expected an unsigned integer"};
  g.sampling = sampling_from_json(sampling, path + ".sampling");
  g.max_tokens = get_int(j, "max_tokens", path);
  g.stop = strings_of(get_array(j, "stop", path), path + ".stop");
  g.system_text = get_string(j, "system_text", path);
  for (const auto& [key, value] : get_object(j, "variables", path).items()) {
    if (!value.is_string()) throw BadDocument{path + ".variables." + key + ": expected a string"};
    g.variables[key] = value.get<std::string>();
  }
  g.prompt_label = get_string(j, "prompt_label", path);
  g.prompt_tokens = get_int(j, "prompt_tokens", path);
  g.cached_tokens = get_int(j, "cached_tokens", path);
  g.generated_tokens = get_int(j, "generated_tokens", path);
  g.ttft_ms = get_real(j, "ttft_ms", path);
  g.prefill_tok_s = get_real(j, "prefill_tok_s", path);
  g.decode_tok_s = get_real(j, "decode_tok_s", path);
  g.itl_p50_ms = get_real(j, "itl_p50_ms", path);
  g.itl_p95_ms = get_real(j, "itl_p95_ms", path);
  g.itl_p99_ms = get_real(j, "itl_p99_ms", path);
  g.peak_memory_bytes = get_int(j, "peak_memory_bytes", path);
  g.finish_reason = get_string(j, "finish_reason", path);
  g.error = get_optional_string(j, "error", path).value_or("");  // files written before schema 5 have none
  g.started_ms = get_int(j, "started_ms", path);
  g.finished_ms = get_int(j, "finished_ms", path);
  return g;
}

ConversationSettings conversation_settings_from_json(const json& j, const std::string& path) {
  if (!j.is_object()) throw BadDocument{path + ": expected an object or null"};
  ConversationSettings c;
  const json& sampling = get_object(j, "sampling", path);
  if (!sampling.contains("seed")) throw BadDocument{path + ".sampling.seed: expected an unsigned integer"};
  c.sampling = sampling_from_json(sampling, path + ".sampling");
  if (c.sampling.top_k < 0 || c.sampling.penalty_last_n < 0) {
    throw BadDocument{path + ".sampling: top_k and penalty_last_n must not be negative"};
  }
  c.max_tokens = get_int(j, "max_tokens", path);
  if (c.max_tokens < 0) throw BadDocument{path + ".max_tokens: must not be negative"};
  c.system_prompt = get_string(j, "system_prompt", path);
  return c;
}

}  // namespace hearth::store
