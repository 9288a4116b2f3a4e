// The prompt library of schema 2: versions with their model configuration
// that nothing can alter, labels that move (`latest` by itself), references
// NAME[@VERSION|@LABEL], revert, archive, conversation pins, per-version
// metrics and ratings.
#include "store/sqlite_db.h"
#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

PromptConfig full_config() {
  PromptConfig c;
  c.temperature = 0.25;
  c.top_p = 0.9;
  c.top_k = 20;
  c.min_p = 0.05;
  c.max_tokens = 256;
  c.stop = std::vector<std::string>{"</end>", "\n\nUser:"};
  return c;
}

TEST(StorePromptLibrary, ConfigurationIsVersionedAndVersionsCannotBeAltered) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  auto store = testing::open_store(testing::options_for(path));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v1, store->add_prompt("pirate", {"Arr.", "first", full_config()}));
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v2, store->add_prompt_version(v1.prompt_id, {"Arr!", "", {}}));
  EXPECT_EQ(store->get_prompt_version(v1.id)->config, full_config());
  EXPECT_EQ(store->get_prompt_version(v2.id)->config, PromptConfig{});  // unset: not set, not zero
  EXPECT_FALSE(store->get_prompt_version(v2.id)->config.stop.has_value());
  // An empty stop list is a set value, different from "not set".
  PromptConfig no_stop;
  no_stop.stop = std::vector<std::string>{};
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v3, store->add_prompt_version(v1.prompt_id, {"x", "", no_stop}));
  EXPECT_EQ(store->get_prompt_version(v3.id)->config, no_stop);
  store.reset();

  auto db = sql::Db::open(path, {});
  ASSERT_TRUE(db.ok());
  for (const std::string sql : {"UPDATE prompt_versions SET temperature = 2 WHERE id = 1",
                                "UPDATE prompt_versions SET stop_json = '[]'", "DELETE FROM prompt_versions"}) {
    auto r = db->exec(sql);
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_NE(r.error().describe().find("immutable"), std::string::npos) << r.error().describe();
  }
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM prompt_versions WHERE temperature = 0.25"), 1);
}

TEST(StorePromptLibrary, NamesAreUniqueAndChecked) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK(store->create_prompt("pirate"));
  auto again = store->create_prompt("pirate");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_NE(again.error().message.find("\"pirate\" exists"), std::string::npos) << again.error().message;
  EXPECT_EQ(store->create_prompt("a@b").error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_EQ(store->create_prompt("  ").error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_EQ(store->find_prompt("nobody").error().code, StoreErrorCode::kNotFound);
  // A failed add_prompt leaves no prompt behind.
  EXPECT_FALSE(store->add_prompt("pirate", {"x", "", {}}).ok());
  EXPECT_EQ(store->list_prompts()->size(), 1u);
}

TEST(StorePromptLibrary, LabelsMoveAndLatestFollowsEveryNewVersion) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v1, store->add_prompt("sys", {"one", "", {}}));
  const Id p = v1.prompt_id;
  EXPECT_EQ(store->resolve_prompt_label(p, "latest")->id, v1.id);
  ASSERT_STORE_OK(store->set_prompt_label(p, "production", v1.id));
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v2, store->add_prompt_version(p, "two"));
  EXPECT_EQ(store->resolve_prompt_label(p, "latest")->id, v2.id);
  EXPECT_EQ(store->resolve_prompt_label(p, "production")->id, v1.id);  // user labels stay until moved
  ASSERT_STORE_OK(store->set_prompt_label(p, "production", v2.id));
  EXPECT_EQ(store->resolve_prompt_label(p, "production")->id, v2.id);

  auto labels = store->list_prompt_labels(p);
  ASSERT_TRUE(labels.ok());
  ASSERT_EQ(labels->size(), 2u);
  EXPECT_EQ((*labels)[0].label, "latest");
  EXPECT_EQ((*labels)[1].label, "production");
  EXPECT_EQ((*labels)[1].version, 2);

  // `latest` is the store's; bad names and other prompts' versions are refused.
  EXPECT_EQ(store->set_prompt_label(p, "latest", v1.id).error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_EQ(store->set_prompt_label(p, "3", v1.id).error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_EQ(store->set_prompt_label(p, "a b", v1.id).error().code, StoreErrorCode::kInvalidArgument);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion other, store->add_prompt("other", {"x", "", {}}));
  EXPECT_EQ(store->set_prompt_label(p, "beta", other.id).error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_EQ(store->resolve_prompt_label(p, "latest")->id, v2.id);

  ASSERT_STORE_OK(store->remove_prompt_label(p, "production"));
  EXPECT_EQ(store->resolve_prompt_label(p, "production").error().code, StoreErrorCode::kNotFound);
  EXPECT_EQ(store->remove_prompt_label(p, "latest").error().code, StoreErrorCode::kInvalidArgument);
}

TEST(StorePromptLibrary, ReferencesResolveToVersionsAndNameWhatIsMissing) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v1, store->add_prompt("sys", {"one", "", {}}));
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v2, store->add_prompt_version(v1.prompt_id, "two"));
  ASSERT_STORE_OK(store->set_prompt_label(v1.prompt_id, "production", v1.id));

  auto latest = store->resolve_prompt("sys");
  ASSERT_TRUE(latest.ok()) << latest.error().describe();
  EXPECT_EQ(latest->version.id, v2.id);
  EXPECT_EQ(latest->label, "latest");
  EXPECT_EQ(store->resolve_prompt("sys@1")->version.id, v1.id);
  EXPECT_TRUE(store->resolve_prompt("sys@1")->label.empty());
  EXPECT_EQ(store->resolve_prompt("sys@production")->version.id, v1.id);
  EXPECT_EQ(store->resolve_prompt("sys@production")->label, "production");

  const auto message = [&](const std::string& ref) {
    auto r = store->resolve_prompt(ref);
    EXPECT_FALSE(r.ok()) << ref;
    return r.ok() ? std::string() : r.error().message;
  };
  EXPECT_NE(message("nope").find("no prompt named \"nope\""), std::string::npos) << message("nope");
  EXPECT_NE(message("sys@7").find("has no version 7"), std::string::npos) << message("sys@7");
  EXPECT_NE(message("sys@staging").find("no label \"staging\""), std::string::npos);
  EXPECT_NE(message("sys@99999999999999999999").find("no version"), std::string::npos);
  EXPECT_NE(message("sys@").find("after '@'"), std::string::npos);
}

TEST(StorePromptLibrary, RevertAppendsACopyAndArchiveKeepsVersions) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v1, store->add_prompt("sys", {"one", "n", full_config()}));
  const Id p = v1.prompt_id;
  ASSERT_STORE_OK(store->add_prompt_version(p, "two"));
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v3, store->revert_prompt(p, 1));
  EXPECT_EQ(v3.version, 3);
  EXPECT_EQ(v3.text, "one");
  EXPECT_EQ(v3.config, full_config());
  EXPECT_EQ(v3.source_version_id, v1.id);
  EXPECT_EQ(v3.note, "revert to version 1");
  EXPECT_EQ(store->resolve_prompt("sys")->version.id, v3.id);
  EXPECT_EQ(store->revert_prompt(p, 9).error().code, StoreErrorCode::kNotFound);

  const Id c = *store->create_conversation("uses v1");
  ASSERT_STORE_OK(store->set_prompt_version(c, v1.id));
  ASSERT_STORE_OK(store->set_prompt_archived(p, true));
  EXPECT_TRUE(store->list_prompts(false)->empty());
  ASSERT_EQ(store->list_prompts(true)->size(), 1u);
  EXPECT_TRUE((*store->list_prompts(true))[0].archived);
  EXPECT_EQ(store->list_prompt_versions(p)->size(), 3u);
  EXPECT_EQ(store->resolve_conversation_prompt(c)->value().version.id, v1.id);  // still pinned
  EXPECT_EQ(store->set_prompt_archived(999, true).error().code, StoreErrorCode::kNotFound);
}

TEST(StorePromptLibrary, ConversationPinsAVersionOrALabel) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v1, store->add_prompt("sys", {"one", "", {}}));
  const Id p = v1.prompt_id;
  const Id c = *store->create_conversation("chat");
  EXPECT_FALSE(store->resolve_conversation_prompt(c)->has_value());

  ASSERT_STORE_OK(store->pin_prompt_label(c, p, "production"));
  auto missing = store->resolve_conversation_prompt(c);
  ASSERT_FALSE(missing.ok());  // the label does not exist yet
  EXPECT_NE(missing.error().message.find("no label \"production\""), std::string::npos) << missing.error().message;
  ASSERT_STORE_OK(store->set_prompt_label(p, "production", v1.id));
  EXPECT_EQ(store->resolve_conversation_prompt(c)->value().version.id, v1.id);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v2, store->add_prompt_version(p, "two"));
  ASSERT_STORE_OK(store->set_prompt_label(p, "production", v2.id));
  // Resolved at each send: the label's version now.
  auto now = store->resolve_conversation_prompt(c);
  ASSERT_TRUE(now.ok() && now->has_value());
  EXPECT_EQ((*now)->version.id, v2.id);
  EXPECT_EQ((*now)->label, "production");
  EXPECT_EQ((*now)->prompt.name, "sys");
  EXPECT_EQ(store->get_conversation(c)->prompt_label, "production");
  EXPECT_FALSE(store->get_conversation(c)->prompt_version_id.has_value());

  // Pinning a version clears the label, and the other way round.
  ASSERT_STORE_OK(store->set_prompt_version(c, v1.id));
  EXPECT_TRUE(store->get_conversation(c)->prompt_label.empty());
  EXPECT_TRUE((*store->resolve_conversation_prompt(c))->label.empty());
  ASSERT_STORE_OK(store->pin_prompt_label(c, p, "latest"));
  EXPECT_FALSE(store->get_conversation(c)->prompt_version_id.has_value());
  EXPECT_EQ((*store->resolve_conversation_prompt(c))->version.id, v2.id);
  EXPECT_EQ(store->pin_prompt_label(c, 999, "x").error().code, StoreErrorCode::kNotFound);
  EXPECT_EQ(store->pin_prompt_label(999, p, "x").error().code, StoreErrorCode::kNotFound);
}

// An answer to `prompt` recorded with version `version_id`.
Id answer(Store& store, Id conversation, std::optional<Id> version_id, double ttft, double tps, std::int64_t tokens,
          const std::string& finish) {
  const Id u = *store.add_message({conversation, std::nullopt, Role::kUser, "q"});
  const Id a = *store.begin_answer(conversation, u);
  GenerationRecord g;
  g.prompt_version_id = version_id;
  g.model_path = "/m/x.gguf";
  g.ttft_ms = ttft;
  g.decode_tok_s = tps;
  g.generated_tokens = tokens;
  g.finish_reason = finish;
  EXPECT_TRUE(store.finish_message(a, {.tail = "a", .generation = g}).ok());
  return a;
}

TEST(StorePromptLibrary, VersionMetricsAndRatings) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v1, store->add_prompt("sys", {"one", "", {}}));
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v2, store->add_prompt_version(v1.prompt_id, "two"));
  const Id c = *store->create_conversation("chat");
  const Id a1 = answer(*store, c, v1.id, 10, 50, 100, "stop");
  const Id a2 = answer(*store, c, v1.id, 30, 40, 20, "length");
  answer(*store, c, v1.id, 20, 60, 30, "stop");
  const Id a4 = answer(*store, c, v1.id, 40, 70, 40, "stop");
  answer(*store, c, v2.id, 5, 5, 5, "stop");
  ASSERT_STORE_OK(store->set_rating(a1, Rating::kUp));
  ASSERT_STORE_OK(store->set_rating(a2, Rating::kUp));
  ASSERT_STORE_OK(store->set_rating(a4, Rating::kDown));
  ASSERT_STORE_OK(store->set_rating(a2, Rating::kDown));  // changed
  EXPECT_EQ(*store->get_rating(a2), Rating::kDown);
  ASSERT_STORE_OK(store->set_rating(a4, Rating::kNone));  // removed
  EXPECT_EQ(*store->get_rating(a4), Rating::kNone);
  EXPECT_EQ(store->set_rating(*store->get_message(a1)->parent_id, Rating::kUp).error().code,
            StoreErrorCode::kInvalidArgument);  // a user message

  ASSERT_STORE_OK_AND_ASSIGN(const VersionMetrics m, store->version_metrics(v1.id));
  EXPECT_EQ(m.answers, 4);
  EXPECT_DOUBLE_EQ(m.median_ttft_ms, 25);  // 10 20 30 40
  EXPECT_DOUBLE_EQ(m.median_decode_tok_s, 55);
  EXPECT_DOUBLE_EQ(m.median_generated_tokens, 35);
  EXPECT_EQ(m.finish_reasons.at("stop"), 3);
  EXPECT_EQ(m.finish_reasons.at("length"), 1);
  EXPECT_EQ(m.rated_up, 1);
  EXPECT_EQ(m.rated_down, 1);
  EXPECT_EQ(store->version_metrics(v2.id)->answers, 1);
  EXPECT_EQ(store->version_metrics(999).error().code, StoreErrorCode::kNotFound);
}

TEST(StorePromptLibrary, DiffOfTwoVersions) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v1, store->add_prompt("sys", {"You are a pirate.", "", {}}));
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v2,
                             store->add_prompt_version(v1.prompt_id, "You are a polite pirate."));
  ASSERT_STORE_OK_AND_ASSIGN(const std::vector<DiffOp> ops, store->diff_prompt_versions(v1.id, v2.id));
  const std::vector<DiffOp> expected{
      {DiffOpKind::kEqual, "You are a "}, {DiffOpKind::kInsert, "polite "}, {DiffOpKind::kEqual, "pirate."}};
  EXPECT_EQ(ops, expected);
  EXPECT_EQ(store->diff_prompt_versions(v1.id, 999).error().code, StoreErrorCode::kNotFound);
}

TEST(StorePromptLibrary, ExperimentsKeepTheirResults) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v1, store->add_prompt("sys", {"one", "", {}}));
  ASSERT_STORE_OK_AND_ASSIGN(const PromptVersion v2, store->add_prompt_version(v1.prompt_id, "two"));
  const Id c = *store->create_conversation("chat");
  const Id a = answer(*store, c, v1.id, 1, 1, 1, "stop");
  const Id u = *store->get_message(a)->parent_id;
  ASSERT_STORE_OK_AND_ASSIGN(const Id e, store->create_experiment({"polite or not", v1.id, v2.id, "{\"n\":1}"}));
  ASSERT_STORE_OK(store->add_experiment_result(e, {0, u, v1.id, a}));
  ASSERT_STORE_OK(store->add_experiment_result(e, {0, u, v2.id, std::nullopt}));
  EXPECT_EQ(store->add_experiment_result(e, {0, u, v2.id, u}).error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_EQ(store->add_experiment_result(999, {0, u, v2.id, a}).error().code, StoreErrorCode::kNotFound);
  EXPECT_EQ(store->create_experiment({"x", v1.id, 999, "{}"}).error().code, StoreErrorCode::kNotFound);
  ASSERT_STORE_OK_AND_ASSIGN(const Experiment got, store->get_experiment(e));
  EXPECT_EQ(got.name, "polite or not");
  EXPECT_EQ(got.settings_json, "{\"n\":1}");
  ASSERT_EQ(got.results.size(), 2u);
  EXPECT_EQ(got.results[0].answer_message_id, a);
  EXPECT_EQ(got.results[1].version_id, v2.id);
  EXPECT_FALSE(got.results[1].answer_message_id.has_value());
  EXPECT_EQ(store->list_experiments()->size(), 1u);
}

}  // namespace
}  // namespace hearth::store
