// Schema migrations: a database at every earlier version opens and migrates to
// the latest, keeping its rows; newer databases and failed steps are refused
// without damage.
#include <functional>
#include <vector>

#include "store/schema.h"
#include "store/sqlite_db.h"
#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

// Per version k: rows written with version k's schema, and a check, run on the
// migrated store, that they survived. Adding schema version N: append an entry
// for version N-1 (written with raw SQL of that version), so every old version
// keeps being migrated in this test.
struct Fixture {
  std::function<void(sql::Db&)> seed;
  std::function<void(Store&)> check;
};

std::vector<Fixture> fixtures() {
  std::vector<Fixture> f;
  // Version 0: a new, empty file.
  f.push_back({[](sql::Db&) {}, [](Store& s) { EXPECT_TRUE(s.list_conversations()->empty()); }});
  // Version 1: two prompts of one name (allowed then), versions, a pinned
  // conversation with an answer and its generation.
  f.push_back({[](sql::Db& db) {
                 ASSERT_TRUE(db.exec(R"sql(
      INSERT INTO prompts (id, name, created_ms) VALUES (1, 'Pirate', 10), (2, 'Pirate', 11);
      INSERT INTO prompt_versions (id, prompt_id, version, text, note, created_ms)
        VALUES (1, 1, 1, 'Arr.', '', 12), (2, 1, 2, 'Arr!', 'louder', 13), (3, 2, 1, 'Yo ho.', '', 14);
      INSERT INTO conversations (id, title, created_ms, updated_ms, prompt_version_id) VALUES (1, 'Old', 15, 17, 2);
      INSERT INTO messages (id, conversation_id, parent_id, role, content, state, created_ms, updated_ms)
        VALUES (1, 1, NULL, 'user', 'ahoy', 'complete', 16, 16), (2, 1, 1, 'assistant', 'arr', 'complete', 17, 17);
      UPDATE conversations SET current_leaf_id = 2;
      INSERT INTO generations (message_id, prompt_version_id, model_path, model_sha256, quantization, kv_precision,
        device, temperature, top_k, top_p, min_p, repeat_penalty, frequency_penalty, presence_penalty, penalty_last_n,
        seed, prompt_tokens, cached_tokens, generated_tokens, ttft_ms, prefill_tok_s, decode_tok_s, itl_p50_ms,
        itl_p95_ms, peak_memory_bytes, finish_reason, started_ms, finished_ms)
        VALUES (2, 2, '/m/smol.gguf', 'ab', 'Q4_1', 'f16', 'cpu', 0.7, 40, 0.9, 0.05, 1.1, 0, 0, 64, 7, 5, 0, 1, 12.5,
                100, 50, 20, 30, 1000, 'stop', 16, 17);
    )sql")
                                 .ok());
               },
               [](Store& s) {
                 auto prompts = s.list_prompts();
                 ASSERT_TRUE(prompts.ok());
                 ASSERT_EQ(prompts->size(), 2u);
                 EXPECT_EQ((*prompts)[0].name, "Pirate");
                 EXPECT_EQ((*prompts)[1].name, "Pirate (2)");  // names are unique from version 2 on
                 EXPECT_EQ((*prompts)[0].latest_version, 2);
                 auto latest = s.resolve_prompt("Pirate");
                 ASSERT_TRUE(latest.ok()) << latest.error().describe();
                 EXPECT_EQ(latest->version.id, 2);  // `latest` was set on the newest version
                 EXPECT_EQ(latest->version.config, PromptConfig{});
                 auto g = s.get_generation(2);
                 ASSERT_TRUE(g.ok() && g->has_value());
                 EXPECT_EQ((*g)->model_name, "/m/smol.gguf");
                 EXPECT_EQ((*g)->prompt_version_id, 2);
                 EXPECT_TRUE((*g)->system_text.empty());
                 auto history = s.history({});
                 ASSERT_TRUE(history.ok() && history->size() == 1u);
                 EXPECT_EQ(history->front().answer_message_id, 2);  // answer_id was filled in
                 EXPECT_EQ(history->front().prompt_name, "Pirate");
                 EXPECT_EQ(s.get_conversation(1)->prompt_version_id, 2);
                 EXPECT_FALSE(s.conversation_settings(1)->has_value());  // schema 4: the defaults apply
               }});
  // Version 2: a conversation pinned to a label, a generation with its
  // system text; from version 4 on it can have its own settings.
  f.push_back({[](sql::Db& db) {
                 ASSERT_TRUE(db.exec(R"sql(
      INSERT INTO prompts (id, name, created_ms) VALUES (1, 'Terse', 10);
      INSERT INTO prompt_versions (id, prompt_id, version, text, note, created_ms, temperature)
        VALUES (1, 1, 1, 'Be terse.', '', 11, 0.3);
      INSERT INTO conversations (id, title, created_ms, updated_ms, label_prompt_id, prompt_label)
        VALUES (1, 'Two', 12, 14, 1, 'latest');
      INSERT INTO messages (id, conversation_id, parent_id, role, content, state, created_ms, updated_ms)
        VALUES (1, 1, NULL, 'user', 'hi', 'complete', 13, 13), (2, 1, 1, 'assistant', 'Hi.', 'complete', 14, 14);
      UPDATE conversations SET current_leaf_id = 2;
      INSERT INTO generations (message_id, prompt_version_id, model_path, model_sha256, quantization, kv_precision,
        device, temperature, top_k, top_p, min_p, repeat_penalty, frequency_penalty, presence_penalty, penalty_last_n,
        seed, prompt_tokens, cached_tokens, generated_tokens, ttft_ms, prefill_tok_s, decode_tok_s, itl_p50_ms,
        itl_p95_ms, peak_memory_bytes, finish_reason, started_ms, finished_ms, system_text, max_tokens, model_name)
        VALUES (2, 1, '/m/smol.gguf', 'ab', 'Q4_1', 'f16', 'cpu', 0.3, 40, 0.9, 0.05, 1.0, 0, 0, 64, 9, 8, 0, 2, 10,
                100, 50, 20, 30, 1000, 'stop', 13, 14, 'Be terse.', 256, 'SmolLM2');
    )sql")
                                 .ok());
               },
               [](Store& s) {
                 auto c = s.get_conversation(1);
                 ASSERT_TRUE(c.ok());
                 EXPECT_EQ(c->prompt_label, "latest");
                 auto g = s.get_generation(2);
                 ASSERT_TRUE(g.ok() && g->has_value());
                 EXPECT_EQ((*g)->system_text, "Be terse.");
                 EXPECT_EQ((*g)->max_tokens, 256);
                 EXPECT_FALSE(s.conversation_settings(1)->has_value());
                 ConversationSettings own;
                 own.max_tokens = 64;
                 own.system_prompt = "Rhyme.";
                 ASSERT_TRUE(s.set_conversation_settings(1, own).ok());
                 EXPECT_EQ(**s.conversation_settings(1), own);
               }});
  // Version 3 (the measurement indexes, which a TTFT sort reads): two answered
  // prompts with measurements and an unanswered one, which sorts last.
  f.push_back({[](sql::Db& db) {
                 ASSERT_TRUE(db.exec(R"sql(
      INSERT INTO conversations (id, title, created_ms, updated_ms) VALUES (1, 'Two', 10, 20);
      INSERT INTO messages (id, conversation_id, parent_id, role, content, state, created_ms, updated_ms) VALUES
        (1, 1, NULL, 'user', 'first', 'complete', 11, 11), (2, 1, 1, 'assistant', 'a', 'complete', 12, 12),
        (3, 1, 2, 'user', 'second', 'complete', 13, 13), (4, 1, 3, 'assistant', 'b', 'complete', 14, 14),
        (5, 1, 4, 'user', 'third', 'complete', 15, 15);
      UPDATE conversations SET current_leaf_id = 5;
      INSERT INTO generations (message_id, model_path, model_sha256, quantization, kv_precision, device, temperature,
        top_k, top_p, min_p, repeat_penalty, frequency_penalty, presence_penalty, penalty_last_n, seed, prompt_tokens,
        cached_tokens, generated_tokens, ttft_ms, prefill_tok_s, decode_tok_s, itl_p50_ms, itl_p95_ms,
        peak_memory_bytes, finish_reason, started_ms, finished_ms, model_name) VALUES
        (2, '/m/a.gguf', '', 'Q4_1', 'f16', 'cpu', 0, 0, 1, 0, 1, 0, 0, 64, 1, 5, 0, 3, 40, 0, 9, 0, 0, 0, 'stop', 11,
         12, 'a'),
        (4, '/m/a.gguf', '', 'Q4_1', 'f16', 'cpu', 0, 0, 1, 0, 1, 0, 0, 64, 1, 5, 0, 3, 20, 0, 9, 0, 0, 0, 'stop', 13,
         14, 'a');
    )sql")
                                 .ok());
               },
               [](Store& s) {
                 auto rows = s.history({.sort = HistorySort::kTtft});
                 ASSERT_TRUE(rows.ok()) << rows.error().describe();
                 ASSERT_EQ(rows->size(), 3u);
                 EXPECT_EQ((*rows)[0].text, "first");  // TTFT 40
                 EXPECT_EQ((*rows)[1].text, "second");
                 EXPECT_EQ((*rows)[2].text, "third");  // no answer: last
               }});
  // Version 4: a conversation with its own settings and an answer that failed
  // part-way (interrupted, finish_reason 'error'); from version 5 on a record
  // keeps the failure's message, which this older one never had.
  f.push_back({[](sql::Db& db) {
                 ASSERT_TRUE(db.exec(R"sql(
      INSERT INTO conversations (id, title, created_ms, updated_ms) VALUES (1, 'Cut', 10, 12);
      INSERT INTO messages (id, conversation_id, parent_id, role, content, state, created_ms, updated_ms) VALUES
        (1, 1, NULL, 'user', 'tell me', 'complete', 11, 11), (2, 1, 1, 'assistant', 'Hel', 'interrupted', 12, 12);
      UPDATE conversations SET current_leaf_id = 2;
      INSERT INTO conversation_settings (conversation_id, temperature, top_k, top_p, min_p, repeat_penalty,
        frequency_penalty, presence_penalty, penalty_last_n, seed, max_tokens, system_prompt, updated_ms)
        VALUES (1, 0.5, 20, 0.9, 0, 1, 0, 0, 64, 3, 128, 'Be kind.', 11);
      INSERT INTO generations (message_id, model_path, model_sha256, quantization, kv_precision, device, temperature,
        top_k, top_p, min_p, repeat_penalty, frequency_penalty, presence_penalty, penalty_last_n, seed, prompt_tokens,
        cached_tokens, generated_tokens, ttft_ms, prefill_tok_s, decode_tok_s, itl_p50_ms, itl_p95_ms,
        peak_memory_bytes, finish_reason, started_ms, finished_ms, model_name) VALUES
        (2, '', '', '', '', 'http://gpu:8000/v1', 0.5, 20, 0.9, 0, 1, 0, 0, 64, 3, 5, 0, 1, 40, 0, 9, 0, 0, 0,
         'error', 11, 12, 'remote');
    )sql")
                                 .ok());
               },
               [](Store& s) {
                 auto g = s.get_generation(2);
                 ASSERT_TRUE(g.ok() && g->has_value());
                 EXPECT_EQ((*g)->finish_reason, "error");
                 EXPECT_EQ((*g)->error, "");  // not known for rows written before schema 5
                 EXPECT_EQ((*g)->device, "http://gpu:8000/v1");
                 EXPECT_EQ(s.get_message(2)->state, MessageState::kInterrupted);
                 EXPECT_EQ((*s.conversation_settings(1))->system_prompt, "Be kind.");
               }});
  return f;
}

TEST(StoreMigration, EveryEarlierVersionMigratesToTheLatest) {
  const int latest = latest_schema_version();
  const std::vector<Fixture> all = fixtures();
  ASSERT_EQ(static_cast<int>(all.size()), latest) << "add a fixture for each schema version before the latest";
  for (int from = 0; from < latest; ++from) {
    SCOPED_TRACE("from schema version " + std::to_string(from));
    TempDir dir;
    const std::string path = dir.file("hearth.db");
    {
      auto db = sql::Db::open(path, {});
      ASSERT_TRUE(db.ok()) << db.error().describe();
      ASSERT_TRUE(migrate(*db, from).ok());
      ASSERT_EQ(*db->query_int("PRAGMA user_version"), from);
      all[static_cast<std::size_t>(from)].seed(*db);
    }
    auto store = testing::open_store(testing::options_for(path));
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), latest);
    all[static_cast<std::size_t>(from)].check(*store);
    // The migrated schema works: a conversation with a message, found by search.
    auto conv = store->create_conversation("Migrated");
    ASSERT_TRUE(conv.ok());
    ASSERT_TRUE(store->add_message({*conv, std::nullopt, Role::kUser, "hello migration"}).ok());
    EXPECT_EQ(store->search("migration")->size(), 1u);
    store.reset();
    auto db = sql::Db::open(path, {});
    EXPECT_EQ(*db->query_int("PRAGMA user_version"), latest);
  }
}

TEST(StoreMigration, OpensInWalModeWithTheLatestVersion) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  ASSERT_NE(testing::open_store(testing::options_for(path)), nullptr);
  auto db = sql::Db::open(path, {});
  ASSERT_TRUE(db.ok());
  auto mode = db->prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  ASSERT_TRUE(*mode->step());
  EXPECT_EQ(mode->text(0), "wal");
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), latest_schema_version());
}

TEST(StoreMigration, NewerDatabaseIsRefusedAndLeftAlone) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  const int newer = latest_schema_version() + 1;
  {
    auto db = sql::Db::open(path, {});
    ASSERT_TRUE(db->exec("CREATE TABLE future (x); PRAGMA user_version = " + std::to_string(newer)).ok());
  }
  auto store = Store::open(testing::options_for(path));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, StoreErrorCode::kUnsupported);
  EXPECT_NE(store.error().message.find("newer"), std::string::npos) << store.error().message;
  auto db = sql::Db::open(path, {});
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), newer);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'conversations'"), 0);
}

TEST(StoreMigration, FailedStepKeepsThePreviousVersion) {
  TempDir dir;
  auto db = sql::Db::open(dir.file("x.db"), {});
  ASSERT_TRUE(db.ok());
  const Migration steps[] = {{1, "CREATE TABLE a (x)"}, {2, "CREATE TABLE b (x); CREATE TABLE a (y)"}};
  auto r = migrate(*db, 2, steps);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema version 2"), std::string::npos) << r.error().message;
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), 1);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM sqlite_master WHERE name IN ('a', 'b')"), 1);
}

}  // namespace
}  // namespace hearth::store
