// Generation records: one row per assistant message.
#include <array>
#include <bit>
#include <filesystem>
#include <string>

#include "store/json_text.h"
#include "store/store_impl.h"

namespace hearth::store {

namespace {

constexpr std::array<std::string_view, 36> kGenerationColumnNames{
    "message_id", "prompt_version_id", "model_path", "model_sha256", "quantization", "kv_precision", "device",
    "temperature", "top_k", "top_p", "min_p", "repeat_penalty", "frequency_penalty", "presence_penalty",
    "penalty_last_n", "seed", "prompt_tokens", "cached_tokens", "generated_tokens", "ttft_ms", "prefill_tok_s",
    "decode_tok_s", "itl_p50_ms", "itl_p95_ms", "peak_memory_bytes", "finish_reason", "started_ms", "finished_ms",
    // schema 2
    "system_text", "variables_json", "prompt_label", "itl_p99_ms", "max_tokens", "stop_json", "model_name",
    // schema 5
    "error"};
constexpr int kGenerationColumnCount = static_cast<int>(kGenerationColumnNames.size());

void bind_sampling(sql::Statement& s, const SamplingRecord& p) {
  s.bind(8, p.temperature).bind(9, p.top_k).bind(10, p.top_p).bind(11, p.min_p).bind(12, p.repeat_penalty);
  s.bind(13, p.frequency_penalty).bind(14, p.presence_penalty).bind(15, p.penalty_last_n);
  s.bind(16, std::bit_cast<std::int64_t>(p.seed));  // SQLite integers are signed 64-bit
}

SamplingRecord read_sampling(const sql::Statement& s, int c) {
  SamplingRecord p;
  p.temperature = s.real(c + 7);
  p.top_k = s.int64(c + 8);
  p.top_p = s.real(c + 9);
  p.min_p = s.real(c + 10);
  p.repeat_penalty = s.real(c + 11);
  p.frequency_penalty = s.real(c + 12);
  p.presence_penalty = s.real(c + 13);
  p.penalty_last_n = s.int64(c + 14);
  p.seed = std::bit_cast<std::uint64_t>(s.int64(c + 15));
  return p;
}

// "models/SmolLM2-135M.Q4_1.gguf" -> "SmolLM2-135M.Q4_1".
std::string model_name_of(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > 5 && name.ends_with(".gguf")) name.resize(name.size() - 5);
  return name.empty() ? path : name;
}

}  // namespace

std::string generation_columns(std::string_view prefix) {
  std::string out;
  for (const std::string_view name : kGenerationColumnNames) {
    if (!out.empty()) out += ", ";
    out += prefix;
    out += name;
  }
  return out;
}

GenerationRecord read_generation(const sql::Statement& s, int c) {
  GenerationRecord g;
  g.message_id = s.int64(c + 0);
  g.prompt_version_id = s.optional_int64(c + 1);
  g.model_path = s.text(c + 2);
  g.model_sha256 = s.text(c + 3);
  g.quantization = s.text(c + 4);
  g.kv_precision = s.text(c + 5);
  g.device = s.text(c + 6);
  g.sampling = read_sampling(s, c);
  g.prompt_tokens = s.int64(c + 16);
  g.cached_tokens = s.int64(c + 17);
  g.generated_tokens = s.int64(c + 18);
  g.ttft_ms = s.real(c + 19);
  g.prefill_tok_s = s.real(c + 20);
  g.decode_tok_s = s.real(c + 21);
  g.itl_p50_ms = s.real(c + 22);
  g.itl_p95_ms = s.real(c + 23);
  g.peak_memory_bytes = s.int64(c + 24);
  g.finish_reason = s.text(c + 25);
  g.started_ms = s.int64(c + 26);
  g.finished_ms = s.int64(c + 27);
  g.system_text = s.text(c + 28);
  g.variables = variables_from_json(s.text(c + 29));
  g.prompt_label = s.text(c + 30);
  g.itl_p99_ms = s.real(c + 31);
  g.max_tokens = s.int64(c + 32);
  g.stop = strings_from_json(s.text(c + 33));
  g.model_name = s.text(c + 34);
  g.error = s.text(c + 35);
  return g;
}

StoreResult<Id> insert_generation(sql::Db& db, const GenerationRecord& g) {
  STORE_ASSIGN_OR_RETURN(const Message m, load_message(db, g.message_id));
  if (m.role != Role::kAssistant) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "message " + std::to_string(m.id) + " is not an assistant message");
  }
  STORE_ASSIGN_OR_RETURN(sql::Statement exists, db.prepare("SELECT 1 FROM generations WHERE message_id = ?"));
  exists.bind(1, g.message_id);
  STORE_ASSIGN_OR_RETURN(const bool found, exists.step());
  if (found) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "message " + std::to_string(g.message_id) + " already has a generation record");
  }
  std::string placeholders = "?";
  for (int i = 1; i < kGenerationColumnCount; ++i) placeholders += ", ?";
  STORE_ASSIGN_OR_RETURN(sql::Statement s, db.prepare("INSERT INTO generations (" + generation_columns("") +
                                                      ") VALUES (" + placeholders + ")"));
  s.bind(1, g.message_id).bind(2, g.prompt_version_id).bind(3, std::string_view(g.model_path));
  s.bind(4, std::string_view(g.model_sha256)).bind(5, std::string_view(g.quantization));
  s.bind(6, std::string_view(g.kv_precision)).bind(7, std::string_view(g.device));
  bind_sampling(s, g.sampling);
  s.bind(17, g.prompt_tokens).bind(18, g.cached_tokens).bind(19, g.generated_tokens).bind(20, g.ttft_ms);
  s.bind(21, g.prefill_tok_s).bind(22, g.decode_tok_s).bind(23, g.itl_p50_ms).bind(24, g.itl_p95_ms);
  s.bind(25, g.peak_memory_bytes).bind(26, std::string_view(g.finish_reason)).bind(27, g.started_ms);
  s.bind(28, g.finished_ms).bind(29, std::string_view(g.system_text));
  s.bind(30, std::string_view(variables_to_json(g.variables))).bind(31, std::string_view(g.prompt_label));
  s.bind(32, g.itl_p99_ms).bind(33, g.max_tokens).bind(34, std::string_view(strings_to_json(g.stop)));
  s.bind(35, std::string_view(g.model_name.empty() ? model_name_of(g.model_path) : g.model_name));
  s.bind(36, std::string_view(g.error));
  STORE_TRY(s.run());
  return db.last_insert_rowid();
}

StoreResult<Id> Store::record_generation(const GenerationRecord& record) {
  return impl_->write("recording the generation of message " + std::to_string(record.message_id),
                      [&] { return insert_generation(impl_->db, record); });
}

StoreResult<std::optional<GenerationRecord>> Store::get_generation(Id message_id) {
  return impl_->read("reading the generation of message " + std::to_string(message_id),
                     [&]() -> StoreResult<std::optional<GenerationRecord>> {
                       STORE_ASSIGN_OR_RETURN(sql::Statement s,
                                              impl_->db.prepare("SELECT " + generation_columns("") +
                                                                " FROM generations WHERE message_id = ?"));
                       s.bind(1, message_id);
                       STORE_ASSIGN_OR_RETURN(const bool row, s.step());
                       if (!row) return std::optional<GenerationRecord>();
                       return std::optional<GenerationRecord>(read_generation(s, 0));
                     });
}

}  // namespace hearth::store
