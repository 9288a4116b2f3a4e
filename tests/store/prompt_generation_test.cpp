// Prompts with immutable versions, and generation records round-tripped.
#include <cstdint>
#include <limits>

#include "store/sqlite_db.h"
#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

TEST(StorePrompts, VersionsAreAppendedAndNeverChanged) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  auto store = testing::open_store(testing::options_for(path));
  ASSERT_NE(store, nullptr);
  const Id p = *store->create_prompt("Pirate");
  const Id q = *store->create_prompt("Assistant");
  const PromptVersion v1 = *store->add_prompt_version(p, "You are a pirate.", "first");
  const PromptVersion w1 = *store->add_prompt_version(q, "You help.");
  const PromptVersion v2 = *store->add_prompt_version(p, "You are a polite pirate.");
  EXPECT_EQ(v1.version, 1);
  EXPECT_EQ(w1.version, 1);
  EXPECT_EQ(v2.version, 2);
  EXPECT_EQ(v1.note, "first");
  EXPECT_EQ(v2.prompt_id, p);

  auto versions = store->list_prompt_versions(p);
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].text, "You are a pirate.");
  EXPECT_EQ((*versions)[1].text, "You are a polite pirate.");
  EXPECT_EQ(store->get_prompt_version(v1.id)->text, "You are a pirate.");
  auto prompts = store->list_prompts();
  ASSERT_EQ(prompts->size(), 2u);
  EXPECT_EQ((*prompts)[0].name, "Assistant");  // by name

  EXPECT_EQ(store->add_prompt_version(999, "x").error().code, StoreErrorCode::kNotFound);
  EXPECT_EQ(store->get_prompt_version(999).error().code, StoreErrorCode::kNotFound);

  const Id c = *store->create_conversation("pinned");
  ASSERT_STORE_OK(store->set_prompt_version(c, v2.id));
  EXPECT_EQ(store->get_conversation(c)->prompt_version_id, v2.id);
  EXPECT_FALSE(store->set_prompt_version(c, 12345).ok());  // no such version (foreign key)
  store.reset();

  // Immutability holds against any SQL, not only this API.
  auto db = sql::Db::open(path, {});
  ASSERT_TRUE(db.ok());
  auto update = db->exec("UPDATE prompt_versions SET text = 'changed' WHERE id = " + std::to_string(v1.id));
  ASSERT_FALSE(update.ok());
  EXPECT_NE(update.error().describe().find("immutable"), std::string::npos) << update.error().describe();
  EXPECT_FALSE(db->exec("DELETE FROM prompt_versions").ok());
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM prompt_versions WHERE text = 'You are a pirate.'"), 1);
}

GenerationRecord sample_record() {
  GenerationRecord g;
  g.model_path = "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  g.model_sha256 = "ab12cd34";
  g.quantization = "Q4_1";
  g.kv_precision = "fp8";
  g.device = "cuda:1";
  g.sampling = {0.7, 40, 0.9, 0.05, 1.1, 0.25, 0.5, 64, std::numeric_limits<std::uint64_t>::max() - 6};
  g.prompt_tokens = 321;
  g.cached_tokens = 256;
  g.generated_tokens = 77;
  g.ttft_ms = 12.5;
  g.prefill_tok_s = 4321.25;
  g.decode_tok_s = 98.75;
  g.itl_p50_ms = 10.125;
  g.itl_p95_ms = 14.875;
  g.peak_memory_bytes = std::int64_t{5} << 32;
  g.finish_reason = "length";
  g.started_ms = 1'700'000'000'123;
  g.finished_ms = 1'700'000'001'456;
  return g;
}

void expect_same(const GenerationRecord& a, const GenerationRecord& b) {
  EXPECT_EQ(a.message_id, b.message_id);
  EXPECT_EQ(a.prompt_version_id, b.prompt_version_id);
  EXPECT_EQ(a.model_path, b.model_path);
  EXPECT_EQ(a.model_sha256, b.model_sha256);
  EXPECT_EQ(a.quantization, b.quantization);
  EXPECT_EQ(a.kv_precision, b.kv_precision);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.sampling.temperature, b.sampling.temperature);
  EXPECT_EQ(a.sampling.top_k, b.sampling.top_k);
  EXPECT_EQ(a.sampling.top_p, b.sampling.top_p);
  EXPECT_EQ(a.sampling.min_p, b.sampling.min_p);
  EXPECT_EQ(a.sampling.repeat_penalty, b.sampling.repeat_penalty);
  EXPECT_EQ(a.sampling.frequency_penalty, b.sampling.frequency_penalty);
  EXPECT_EQ(a.sampling.presence_penalty, b.sampling.presence_penalty);
  EXPECT_EQ(a.sampling.penalty_last_n, b.sampling.penalty_last_n);
  EXPECT_EQ(a.sampling.seed, b.sampling.seed);
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
  EXPECT_EQ(a.cached_tokens, b.cached_tokens);
  EXPECT_EQ(a.generated_tokens, b.generated_tokens);
  EXPECT_EQ(a.ttft_ms, b.ttft_ms);
  EXPECT_EQ(a.prefill_tok_s, b.prefill_tok_s);
  EXPECT_EQ(a.decode_tok_s, b.decode_tok_s);
  EXPECT_EQ(a.itl_p50_ms, b.itl_p50_ms);
  EXPECT_EQ(a.itl_p95_ms, b.itl_p95_ms);
  EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes);
  EXPECT_EQ(a.finish_reason, b.finish_reason);
  EXPECT_EQ(a.started_ms, b.started_ms);
  EXPECT_EQ(a.finished_ms, b.finished_ms);
  EXPECT_EQ(a.error, b.error);
}

TEST(StoreGenerations, RecordRoundTripsEveryField) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  const Id p = *store->create_prompt("sys");
  const Id pv = store->add_prompt_version(p, "Be brief.")->id;
  const Id c = *store->create_conversation("gen");
  const Id u = *store->add_message({c, std::nullopt, Role::kUser, "hi"});
  const Id a = *store->begin_answer(c, u);

  GenerationRecord g = sample_record();
  g.prompt_version_id = pv;
  g.message_id = 0;  // finish_message fills it in
  ASSERT_STORE_OK(store->finish_message(a, {.tail = "hello", .generation = g}));
  g.message_id = a;
  auto back = store->get_generation(a);
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(back->has_value());
  expect_same(**back, g);

  // One per assistant message; none on user messages.
  auto twice = store->record_generation(g);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, StoreErrorCode::kInvalidArgument);
  g.message_id = u;
  EXPECT_EQ(store->record_generation(g).error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_FALSE(store->get_generation(u)->has_value());

  // A regeneration gets its own record.
  const Id a2 = *store->regenerate(a);
  ASSERT_STORE_OK(store->finish_message(a2, {.tail = "hey"}));
  g = sample_record();
  g.message_id = a2;
  g.sampling.seed = 7;
  ASSERT_TRUE(store->record_generation(g).ok());
  expect_same(**store->get_generation(a2), g);
}

// Schema 5: an answer that failed part-way keeps why, through the history,
// an export and an import; an export written before schema 5 (no "error")
// imports with none.
TEST(StoreGenerations, AFailedAnswerKeepsItsError) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  const Id c = *store->create_conversation("cut");
  const Id u = *store->add_message({c, std::nullopt, Role::kUser, "tell me"});
  const Id a = *store->begin_answer(c, u);
  ASSERT_STORE_OK(store->append_streaming(a, "Hello"));
  GenerationRecord g = sample_record();
  g.device = "http://gpu:8000/v1";
  g.finish_reason = "error";
  g.error = "the stream from http://gpu:8000/v1 was cut before the answer finished: \u00e9 \"quoted\"";
  ASSERT_STORE_OK(store->finish_message(a, {.tail = " from", .state = MessageState::kInterrupted, .generation = g}));
  EXPECT_EQ(store->get_message(a)->state, MessageState::kInterrupted);
  EXPECT_EQ(store->get_generation(a)->value().error, g.error);
  auto rows = store->history({});
  ASSERT_TRUE(rows.ok() && rows->size() == 1u);
  ASSERT_TRUE(rows->front().generation.has_value());
  EXPECT_EQ(rows->front().generation->error, g.error);

  const std::string text = *store->export_json({});
  ASSERT_NE(text.find("\"error\""), std::string::npos);
  auto copy = testing::open_store(testing::options_for(dir.file("copy.db")));
  ASSERT_NE(copy, nullptr);
  ASSERT_TRUE(copy->import_json(text).ok());
  EXPECT_EQ(copy->get_generation(a)->value().error, g.error);

  std::string old = text;  // pretty-printed: the field is one line of its own, and not the object's last
  const std::string field = "\"error\": ";
  const auto at = old.find(field);
  const auto line = old.rfind('\n', at), line_end = old.find('\n', at);
  ASSERT_TRUE(at != std::string::npos && line != std::string::npos && line_end != std::string::npos);
  old.erase(line, line_end - line);
  ASSERT_EQ(old.find(field), std::string::npos) << old;
  auto older = testing::open_store(testing::options_for(dir.file("older.db")));
  ASSERT_NE(older, nullptr);
  auto imported = older->import_json(old);
  ASSERT_TRUE(imported.ok()) << imported.error().describe();
  EXPECT_EQ(older->get_generation(a)->value().error, "");
  EXPECT_EQ(older->get_generation(a)->value().finish_reason, "error");
}

TEST(StoreGenerations, FailedFinishChangesNothing) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  const Id c = *store->create_conversation("atomic");
  const Id u = *store->add_message({c, std::nullopt, Role::kUser, "hi"});
  const Id a = *store->begin_answer(c, u);
  ASSERT_STORE_OK(store->append_streaming(a, "so far"));
  GenerationRecord g = sample_record();
  g.prompt_version_id = 4242;  // no such prompt version: the insert fails
  auto r = store->finish_message(a, {.tail = " and more", .generation = g});
  ASSERT_FALSE(r.ok());
  const Message m = *store->get_message(a);
  EXPECT_EQ(m.content, "so far");  // the tail was rolled back with the rest
  EXPECT_EQ(m.state, MessageState::kStreaming);
  EXPECT_FALSE(store->get_generation(a)->has_value());
}

}  // namespace
}  // namespace hearth::store
