// Full-text search over messages and titles: matching, recency order,
// snippets, prefixes, literal user text, and the index kept in step.
#include "store/sqlite_db.h"
#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

class Search : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::open_store(testing::options_for(dir_.file("hearth.db")));
    ASSERT_NE(store_, nullptr);
  }
  Id conversation(const std::string& title, const std::string& text) {
    const Id c = *store_->create_conversation(title);
    EXPECT_TRUE(store_->add_message({c, std::nullopt, Role::kUser, text}).ok());
    return c;
  }
  std::vector<Id> found(const std::string& query, const SearchOptions& options = {}) {
    auto hits = store_->search(query, options);
    EXPECT_TRUE(hits.ok()) << hits.error().describe();
    std::vector<Id> ids;
    if (hits.ok()) {
      for (const SearchHit& h : *hits) ids.push_back(h.conversation_id);
    }
    return ids;
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(Search, FindsMessagesByRecencyWithSnippets) {
  const Id physics = conversation("Physics", "Tell me about quantum entanglement please");
  const Id cooking = conversation("Cooking", "How long do I boil an egg?");
  const Id more = conversation("More physics", "Is quantum tunnelling real?");
  EXPECT_EQ(found("quantum"), (std::vector<Id>{more, physics}));
  EXPECT_EQ(found("egg"), (std::vector<Id>{cooking}));
  EXPECT_TRUE(found("banana").empty());
  EXPECT_EQ(found("QUANTUM tunnel"), (std::vector<Id>{more}));  // case-folded, every word, prefixes

  // Activity moves a conversation up.
  ASSERT_STORE_OK(store_->add_message({physics, std::nullopt, Role::kUser, "and quantum computing"}));
  EXPECT_EQ(found("quantum"), (std::vector<Id>{physics, more}));

  auto hits = store_->search("entangle", {.open_mark = "<b>", .close_mark = "</b>"});
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].title, "Physics");
  EXPECT_TRUE((*hits)[0].message_id.has_value());
  EXPECT_NE((*hits)[0].snippet.find("<b>entanglement</b>"), std::string::npos) << (*hits)[0].snippet;
  EXPECT_EQ(found("quantum", {.limit = 1}), (std::vector<Id>{physics}));
}

TEST_F(Search, MatchesTitlesAndIgnoresDeletedOnes) {
  const Id a = conversation("Holiday plans", "where to go");
  const Id b = conversation("Other", "nothing here");
  auto hits = store_->search("holiday");
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].conversation_id, a);
  EXPECT_FALSE((*hits)[0].message_id.has_value());
  EXPECT_EQ((*hits)[0].snippet, "[Holiday] plans");
  ASSERT_STORE_OK(store_->rename_conversation(b, "Holiday photos"));
  EXPECT_EQ(found("holiday"), (std::vector<Id>{b, a}));
  ASSERT_STORE_OK(store_->delete_conversation(a));
  EXPECT_EQ(found("holiday"), (std::vector<Id>{b}));
  ASSERT_STORE_OK(store_->set_archived(b, true));
  EXPECT_TRUE(found("holiday", {.include_archived = false}).empty());
}

TEST_F(Search, UserTextIsNeverFtsSyntax) {
  const Id c = conversation("Syntax", "say \"hello\" AND (goodbye) NEAR* x:y -z");
  for (const char* q : {"\"hello", "AND", "(goodbye)", "NEAR*", "x:y", "-z", "\"", "*", "  "}) {
    auto hits = store_->search(q);
    ASSERT_TRUE(hits.ok()) << q << ": " << hits.error().describe();
  }
  EXPECT_EQ(found("\"hello\" (goodbye)"), (std::vector<Id>{c}));
  EXPECT_TRUE(found("").empty());
  EXPECT_EQ(found("cafe"), std::vector<Id>{});
  const Id d = conversation("Accents", "un café crème");
  EXPECT_EQ(found("cafe creme"), (std::vector<Id>{d}));
}

TEST_F(Search, IndexFollowsStreamingEditsAndPurges) {
  const Id c = *store_->create_conversation("Stream");
  const Id u = *store_->add_message({c, std::nullopt, Role::kUser, "start"});
  const Id a = *store_->begin_answer(c, u);
  ASSERT_STORE_OK(store_->append_streaming(a, "partial zebra "));
  EXPECT_EQ(found("zebra"), (std::vector<Id>{c}));
  ASSERT_STORE_OK(store_->finish_message(a, {.tail = "giraffe"}));
  EXPECT_EQ(found("zebra giraffe"), (std::vector<Id>{c}));
  ASSERT_STORE_OK(store_->delete_conversation(c));
  EXPECT_EQ(*store_->purge_deleted(), 1);
  EXPECT_TRUE(found("zebra").empty());
  store_.reset();
  auto db = sql::Db::open(dir_.file("hearth.db"), {});
  ASSERT_TRUE(db.ok());
  EXPECT_TRUE(db->exec("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')").ok());
  EXPECT_TRUE(db->exec("INSERT INTO conversations_fts(conversations_fts) VALUES ('integrity-check')").ok());
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'zebra'"), 0);
}

}  // namespace
}  // namespace hearth::store
