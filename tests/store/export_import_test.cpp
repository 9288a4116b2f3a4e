// Export and import: export(import(export(db))) is the same document; an
// import into a database that already has rows remaps ids and keeps every
// reference; malformed documents are refused whole, naming the field.
#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

// The first conversation's own generation settings.
const ConversationSettings kSettings{.sampling = {.temperature = 0.2, .top_k = 7, .seed = 18446744073709551614ull},
                                     .max_tokens = 300,
                                     .system_prompt = "Be brief."};

// A database with every kind of row: prompts with configured versions, labels,
// a revert, an archived prompt, branches, pins, generations, ratings, an
// experiment, a soft-deleted conversation.
void fill(Store& s) {
  PromptConfig config;
  config.temperature = 0.3;
  config.stop = std::vector<std::string>{"END"};
  const PromptVersion v1 = *s.add_prompt("pirate", {"Arr {{name}}.", "first", config});
  const PromptVersion v2 = *s.add_prompt_version(v1.prompt_id, "Arr!");
  ASSERT_STORE_OK(s.revert_prompt(v1.prompt_id, 1));
  ASSERT_STORE_OK(s.set_prompt_label(v1.prompt_id, "production", v2.id));
  const PromptVersion old = *s.add_prompt("old", {"gone", "", {}});
  ASSERT_STORE_OK(s.set_prompt_archived(old.prompt_id, true));

  const Id c = *s.create_conversation("Seas ünïcode \"quoted\"");
  ASSERT_STORE_OK(s.pin_prompt_label(c, v1.prompt_id, "production"));
  ASSERT_STORE_OK(s.set_conversation_settings(c, kSettings));
  const Id u = *s.add_message({c, std::nullopt, Role::kUser, "hello\nthere"});
  const Id a = *s.begin_answer(c, u);
  GenerationRecord g;
  g.prompt_version_id = v2.id;
  g.prompt_label = "production";
  g.system_text = "Arr!";
  g.variables = {{"name", "Jim"}};
  g.model_path = "/m/smol.gguf";
  g.model_sha256 = "abc";
  g.quantization = "Q4_1";
  g.kv_precision = "f16";
  g.device = "cpu";
  g.sampling.temperature = 0.7;
  g.sampling.seed = 18446744073709551615ull;  // the largest u64 survives
  g.max_tokens = 64;
  g.stop = {"\n\n"};
  g.ttft_ms = 12.345678901234;
  g.itl_p99_ms = 9.5;
  g.finish_reason = "stop";
  ASSERT_STORE_OK(s.finish_message(a, {.tail = "ahoy", .generation = g}));
  ASSERT_STORE_OK(s.set_rating(a, Rating::kUp));
  const Id a2 = *s.regenerate(a);  // a branch
  ASSERT_STORE_OK(s.finish_message(a2, {.tail = "yo", .state = MessageState::kInterrupted}));
  ASSERT_STORE_OK(s.switch_branch(a));

  const Id d = *s.create_conversation("Trash");
  ASSERT_STORE_OK(s.set_prompt_version(d, v1.id));
  ASSERT_STORE_OK(s.add_message({d, std::nullopt, Role::kUser, "bye"}));
  ASSERT_STORE_OK(s.delete_conversation(d));

  const Id e = *s.create_experiment({"exp", v1.id, v2.id, "{}"});
  ASSERT_STORE_OK(s.add_experiment_result(e, {0, u, v2.id, a}));
}

std::string exported(Store& s, ExportOptions o = {}) {
  auto text = s.export_json(o);
  EXPECT_TRUE(text.ok()) << text.error().describe();
  return text.ok() ? *text : std::string();
}

TEST(StoreExportImport, RoundTripIsExact) {
  TempDir dir;
  auto a = testing::open_store(testing::options_for(dir.file("a.db")));
  ASSERT_NE(a, nullptr);
  fill(*a);
  const std::string first = exported(*a);
  ASSERT_NE(first.find("\"hearth-export\""), std::string::npos);
  auto b = testing::open_store(testing::options_for(dir.file("b.db")));
  ASSERT_NE(b, nullptr);
  auto summary = b->import_json(first);
  ASSERT_TRUE(summary.ok()) << summary.error().describe();
  EXPECT_FALSE(summary->ids_remapped);
  EXPECT_EQ(summary->prompts, 2);
  EXPECT_EQ(summary->prompt_versions, 4);
  EXPECT_EQ(summary->conversations, 2);
  EXPECT_EQ(summary->messages, 4);
  EXPECT_EQ(summary->generations, 1);
  EXPECT_EQ(summary->ratings, 1);
  EXPECT_EQ(summary->experiments, 1);
  EXPECT_EQ(exported(*b), first);
  // The imported rows work like native ones.
  EXPECT_EQ(b->resolve_prompt("pirate@production")->version.version, 2);
  EXPECT_EQ(b->resolve_prompt("pirate")->version.version, 3);
  EXPECT_EQ(b->history({.search = "hello"})->size(), 1u);
  EXPECT_EQ(b->get_generation(2)->value().sampling.seed, 18446744073709551615ull);
  EXPECT_EQ(b->conversation_settings(1)->value(), kSettings);
  EXPECT_FALSE(b->conversation_settings(2)->has_value());
}

TEST(StoreExportImport, ImportIntoAFilledDatabaseRemapsIds) {
  TempDir dir;
  auto a = testing::open_store(testing::options_for(dir.file("a.db")));
  ASSERT_NE(a, nullptr);
  fill(*a);
  const std::string doc = exported(*a);
  // A library that grew since the export still holds every version of the file's "old": reused too.
  ASSERT_STORE_OK(a->add_prompt_version(a->find_prompt("old")->id, "changed here"));
  const auto prompts_before = a->list_prompts()->size();
  auto summary = a->import_json(doc);  // into itself: every id is taken
  ASSERT_TRUE(summary.ok()) << summary.error().describe();
  EXPECT_TRUE(summary->ids_remapped);
  // "pirate" is here with the same versions: reused, not copied.
  EXPECT_EQ(summary->prompts_reused, 2);
  EXPECT_EQ(summary->prompts, 0);
  EXPECT_EQ(summary->renamed_prompts.size(), 0u);
  EXPECT_EQ(a->list_prompts()->size(), prompts_before);
  ASSERT_STORE_OK_AND_ASSIGN(const ResolvedPrompt pirate, a->resolve_prompt("pirate@production"));
  EXPECT_EQ(pirate.version.version, 2);
  EXPECT_EQ(a->list_prompt_versions(pirate.prompt.id)->size(), 3u);
  EXPECT_EQ(a->list_conversations({.include_archived = true})->size(), 2u);  // the trash stays out
  // The copied conversation's references point at the prompt that was here.
  const Conversation c = a->list_conversations()->front();
  EXPECT_EQ(c.label_prompt_id, pirate.prompt.id);
  EXPECT_EQ(a->conversation_settings(c.id)->value(), kSettings);  // under the copy's new id
  const std::vector<Message> path = *a->current_path(c.id);
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[1].content, "ahoy");
  EXPECT_EQ(a->get_generation(path[1].id)->value().prompt_version_id, pirate.version.id);
  EXPECT_EQ(*a->get_rating(path[1].id), Rating::kUp);
  EXPECT_EQ(a->list_experiments()->size(), 2u);
  // Importing the same document again adds no prompt either.
  ASSERT_STORE_OK_AND_ASSIGN(const ImportSummary again, a->import_json(doc));
  EXPECT_EQ(again.prompts_reused, 2);
  EXPECT_EQ(again.prompts, 0);
  EXPECT_EQ(a->list_prompts()->size(), prompts_before);
  EXPECT_FALSE(a->find_prompt("pirate (imported)").ok());
}

TEST(StoreExportImport, APromptWithOtherVersionsIsCopiedUnderANewName) {
  TempDir dir;
  auto a = testing::open_store(testing::options_for(dir.file("a.db")));
  auto b = testing::open_store(testing::options_for(dir.file("b.db")));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  fill(*a);
  ASSERT_STORE_OK(b->add_prompt("pirate", {"Something else.", "", {}}));
  ASSERT_STORE_OK_AND_ASSIGN(const ImportSummary s, b->import_json(exported(*a)));
  EXPECT_EQ(s.prompts_reused, 0);
  EXPECT_EQ(s.renamed_prompts.at("pirate"), "pirate (imported)");
  EXPECT_EQ(b->resolve_prompt("pirate (imported)@production")->version.text, "Arr!");
  EXPECT_EQ(b->resolve_prompt("pirate")->version.text, "Something else.");
  // Imported again: the copy the first import made is found and reused.
  const auto prompts = b->list_prompts()->size();
  ASSERT_STORE_OK_AND_ASSIGN(const ImportSummary t, b->import_json(exported(*a)));
  EXPECT_EQ(t.prompts_reused, 2);  // "pirate (imported)" and "old"
  EXPECT_EQ(t.renamed_prompts.size(), 0u);
  EXPECT_EQ(b->list_prompts()->size(), prompts);
}

TEST(StoreExportImport, OneConversationBringsItsPrompts) {
  TempDir dir;
  auto a = testing::open_store(testing::options_for(dir.file("a.db")));
  ASSERT_NE(a, nullptr);
  fill(*a);
  const Id c = a->list_conversations()->front().id;
  const std::string doc = exported(*a, {.conversation_id = c});
  auto b = testing::open_store(testing::options_for(dir.file("b.db")));
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->import_json(doc).ok());
  EXPECT_EQ(b->list_conversations({.include_archived = true})->size(), 1u);
  EXPECT_EQ(b->list_prompts()->size(), 1u);  // "pirate", not the archived "old"
  EXPECT_EQ(exported(*b, {.conversation_id = c}), doc);
  EXPECT_EQ(a->export_json({.conversation_id = 999}).error().code, StoreErrorCode::kNotFound);

  auto md = a->export_markdown(c);
  ASSERT_TRUE(md.ok()) << md.error().describe();
  EXPECT_NE(md->find("# Seas ünïcode \"quoted\""), std::string::npos) << *md;
  EXPECT_NE(md->find("## User\n\nhello\nthere"), std::string::npos) << *md;
  EXPECT_NE(md->find("## Assistant\n\nahoy"), std::string::npos) << *md;
  EXPECT_NE(md->find("> Arr!"), std::string::npos) << *md;
  EXPECT_NE(md->find("smol Q4_1 · prompt pirate@2"), std::string::npos) << *md;
  EXPECT_EQ(md->find("yo"), std::string::npos) << "only the current branch";
}

TEST(StoreExportImport, MalformedDocumentsAreRefusedWhole) {
  TempDir dir;
  auto a = testing::open_store(testing::options_for(dir.file("a.db")));
  ASSERT_NE(a, nullptr);
  fill(*a);
  const std::string good = exported(*a);
  auto b = testing::open_store(testing::options_for(dir.file("b.db")));
  ASSERT_NE(b, nullptr);
  const auto refused = [&](const std::string& doc, const std::string& part) {
    auto r = b->import_json(doc);
    ASSERT_FALSE(r.ok()) << part;
    EXPECT_NE(r.error().message.find(part), std::string::npos) << r.error().message;
  };
  refused("not json", "not valid JSON");
  refused("{\"format\": \"other\"}", "not a Hearth export");
  refused(std::string(100, '[') + std::string(100, ']'), "nested deeper");
  refused("{\"format\": \"hearth-export\", \"version\": 99}", "newer");
  std::string bad_role = good;
  bad_role.replace(bad_role.find("\"role\": \"user\""), 14, "\"role\": \"pirate\"");
  refused(bad_role, "conversations[0].messages[0].role");
  std::string bad_type = good;
  bad_type.replace(bad_type.find("\"title\": \""), 10, "\"title\": 5, \"x\": \"");
  refused(bad_type, "conversations[0].title: expected a string");
  std::string bad_settings = good;
  bad_settings.replace(bad_settings.find("\"max_tokens\": 300"), 17, "\"max_tokens\": -3");
  refused(bad_settings, "conversations[0].settings.max_tokens");
  // Nothing of the refused documents stayed (each import is one transaction).
  EXPECT_TRUE(b->list_prompts()->empty());
  EXPECT_TRUE(b->list_conversations({.include_archived = true})->empty());
}

}  // namespace
}  // namespace hearth::store
