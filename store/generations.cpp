// Generation records: one row per assistant message.
#include <bit>
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

constexpr std::string_view kGenerationColumns =
    "message_id, prompt_version_id, model_path, model_sha256, quantization, kv_precision, device, "
    "temperature, top_k, top_p, min_p, repeat_penalty, frequency_penalty, presence_penalty, penalty_last_n, seed, "
    "prompt_tokens, cached_tokens, generated_tokens, ttft_ms, prefill_tok_s, decode_tok_s, itl_p50_ms, itl_p95_ms, "
    "peak_memory_bytes, finish_reason, started_ms, finished_ms";
constexpr int kGenerationColumnCount = 28;

void bind_sampling(sql::Statement& s, const SamplingRecord& p) {
  s.bind(8, p.temperature).bind(9, p.top_k).bind(10, p.top_p).bind(11, p.min_p).bind(12, p.repeat_penalty);
  s.bind(13, p.frequency_penalty).bind(14, p.presence_penalty).bind(15, p.penalty_last_n);
  s.bind(16, std::bit_cast<std::int64_t>(p.seed));  // SQLite integers are signed 64-bit
}

SamplingRecord read_sampling(const sql::Statement& s) {
  SamplingRecord p;
  p.temperature = s.real(7);
  p.top_k = s.int64(8);
  p.top_p = s.real(9);
  p.min_p = s.real(10);
  p.repeat_penalty = s.real(11);
  p.frequency_penalty = s.real(12);
  p.presence_penalty = s.real(13);
  p.penalty_last_n = s.int64(14);
  p.seed = std::bit_cast<std::uint64_t>(s.int64(15));
  return p;
}

GenerationRecord read_generation(const sql::Statement& s) {
  GenerationRecord g;
  g.message_id = s.int64(0);
  g.prompt_version_id = s.optional_int64(1);
  g.model_path = s.text(2);
  g.model_sha256 = s.text(3);
  g.quantization = s.text(4);
  g.kv_precision = s.text(5);
  g.device = s.text(6);
  g.sampling = read_sampling(s);
  g.prompt_tokens = s.int64(16);
  g.cached_tokens = s.int64(17);
  g.generated_tokens = s.int64(18);
  g.ttft_ms = s.real(19);
  g.prefill_tok_s = s.real(20);
  g.decode_tok_s = s.real(21);
  g.itl_p50_ms = s.real(22);
  g.itl_p95_ms = s.real(23);
  g.peak_memory_bytes = s.int64(24);
  g.finish_reason = s.text(25);
  g.started_ms = s.int64(26);
  g.finished_ms = s.int64(27);
  return g;
}

}  // namespace

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
  STORE_ASSIGN_OR_RETURN(sql::Statement s, db.prepare("INSERT INTO generations (" + std::string(kGenerationColumns) +
                                                      ") VALUES (" + placeholders + ")"));
  s.bind(1, g.message_id).bind(2, g.prompt_version_id).bind(3, std::string_view(g.model_path));
  s.bind(4, std::string_view(g.model_sha256)).bind(5, std::string_view(g.quantization));
  s.bind(6, std::string_view(g.kv_precision)).bind(7, std::string_view(g.device));
  bind_sampling(s, g.sampling);
  s.bind(17, g.prompt_tokens).bind(18, g.cached_tokens).bind(19, g.generated_tokens).bind(20, g.ttft_ms);
  s.bind(21, g.prefill_tok_s).bind(22, g.decode_tok_s).bind(23, g.itl_p50_ms).bind(24, g.itl_p95_ms);
  s.bind(25, g.peak_memory_bytes).bind(26, std::string_view(g.finish_reason)).bind(27, g.started_ms);
  s.bind(28, g.finished_ms);
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
                                              impl_->db.prepare("SELECT " + std::string(kGenerationColumns) +
                                                                " FROM generations WHERE message_id = ?"));
                       s.bind(1, message_id);
                       STORE_ASSIGN_OR_RETURN(const bool row, s.step());
                       if (!row) return std::optional<GenerationRecord>();
                       return std::optional<GenerationRecord>(read_generation(s));
                     });
}

}  // namespace hearth::store
