// Conversation list: recency order, rename, archive, soft delete / restore / purge.
#include <vector>

#include "store/sqlite_db.h"
#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

std::vector<Id> ids_of(const std::vector<Conversation>& list) {
  std::vector<Id> ids;
  for (const Conversation& c : list) ids.push_back(c.id);
  return ids;
}

TEST(StoreConversations, ListedByRecentActivity) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  const Id c1 = *store->create_conversation("first");
  const Id c2 = *store->create_conversation("second");
  const Id c3 = *store->create_conversation("third");
  EXPECT_EQ(ids_of(*store->list_conversations()), (std::vector<Id>{c3, c2, c1}));

  ASSERT_STORE_OK(store->add_message({c1, std::nullopt, Role::kUser, "bump"}));
  EXPECT_EQ(ids_of(*store->list_conversations()), (std::vector<Id>{c1, c3, c2}));
  // A finished answer is activity too.
  const Id a = *store->begin_answer(c2, std::nullopt);
  EXPECT_EQ(ids_of(*store->list_conversations()), (std::vector<Id>{c2, c1, c3}));
  ASSERT_STORE_OK(store->finish_message(a, {.tail = "done"}));

  // Renaming is not activity: the order stays.
  ASSERT_STORE_OK(store->rename_conversation(c3, "renamed"));
  EXPECT_EQ(store->get_conversation(c3)->title, "renamed");
  EXPECT_EQ(ids_of(*store->list_conversations()), (std::vector<Id>{c2, c1, c3}));
  EXPECT_EQ(store->rename_conversation(77, "x").error().code, StoreErrorCode::kNotFound);
}

TEST(StoreConversations, ArchiveDeleteRestorePurge) {
  TempDir dir;
  auto store = testing::open_store(testing::options_for(dir.file("hearth.db")));
  ASSERT_NE(store, nullptr);
  const Id c1 = *store->create_conversation("keep");
  const Id c2 = *store->create_conversation("archive me");
  const Id c3 = *store->create_conversation("delete me");
  const Id m3 = *store->add_message({c3, std::nullopt, Role::kUser, "doomed words"});
  const Id a3 = *store->begin_answer(c3, m3);
  ASSERT_STORE_OK(store->finish_message(a3, {.tail = "reply", .generation = GenerationRecord{}}));

  ASSERT_STORE_OK(store->set_archived(c2, true));
  EXPECT_EQ(ids_of(*store->list_conversations()), (std::vector<Id>{c3, c1}));
  EXPECT_EQ(ids_of(*store->list_conversations({.include_archived = true})), (std::vector<Id>{c3, c2, c1}));
  EXPECT_TRUE(store->get_conversation(c2)->archived);

  ASSERT_STORE_OK(store->delete_conversation(c3));
  EXPECT_EQ(ids_of(*store->list_conversations()), (std::vector<Id>{c1}));
  EXPECT_EQ(ids_of(*store->list_conversations({.only_deleted = true})), (std::vector<Id>{c3}));
  EXPECT_TRUE(store->get_conversation(c3)->deleted_ms.has_value());
  EXPECT_EQ(store->delete_conversation(c3).error().code, StoreErrorCode::kNotFound);  // already in the trash

  ASSERT_STORE_OK(store->restore_conversation(c3));  // undo
  EXPECT_EQ(ids_of(*store->list_conversations()), (std::vector<Id>{c3, c1}));
  EXPECT_EQ(store->current_path(c3)->size(), 2u);

  ASSERT_STORE_OK(store->delete_conversation(c3));
  EXPECT_EQ(*store->purge_deleted(), 1);
  EXPECT_EQ(store->get_conversation(c3).error().code, StoreErrorCode::kNotFound);
  EXPECT_EQ(store->get_message(m3).error().code, StoreErrorCode::kNotFound);
  EXPECT_EQ(store->get_generation(a3)->has_value(), false);
  EXPECT_TRUE(store->search("doomed")->empty());
  EXPECT_EQ(ids_of(*store->list_conversations({.include_archived = true})), (std::vector<Id>{c2, c1}));
  EXPECT_EQ(*store->purge_deleted(), 0);
}

// Schema 3: a conversation's own generation settings, set, replaced, cleared,
// and gone with the conversation.
TEST(StoreConversations, OwnGenerationSettings) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  auto store = testing::open_store(testing::options_for(path));
  ASSERT_NE(store, nullptr);
  const Id c1 = *store->create_conversation("tuned");
  const Id c2 = *store->create_conversation("plain");
  EXPECT_FALSE(store->conversation_settings(c1)->has_value());
  ConversationSettings tuned;
  tuned.sampling = {0.25, 7, 0.8, 0.1, 1.15, 0.5, 0.25, 32, 0xfedcba9876543210ull};  // a seed above INT64_MAX
  tuned.max_tokens = 77;
  tuned.system_prompt = "Answer in French.\nBriefly.";
  ASSERT_STORE_OK(store->set_conversation_settings(c1, tuned));
  store.reset();  // survives a restart
  store = testing::open_store(testing::options_for(path));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->conversation_settings(c1)->has_value());
  EXPECT_EQ(**store->conversation_settings(c1), tuned);
  EXPECT_FALSE(store->conversation_settings(c2)->has_value());

  tuned.max_tokens = 12;
  tuned.system_prompt.clear();
  ASSERT_STORE_OK(store->set_conversation_settings(c1, tuned));  // replaces
  EXPECT_EQ(**store->conversation_settings(c1), tuned);
  ASSERT_STORE_OK(store->set_conversation_settings(c1, std::nullopt));  // back to the defaults
  EXPECT_FALSE(store->conversation_settings(c1)->has_value());

  EXPECT_EQ(store->set_conversation_settings(99, tuned).error().code, StoreErrorCode::kNotFound);
  EXPECT_EQ(store->conversation_settings(99).error().code, StoreErrorCode::kNotFound);
  ASSERT_STORE_OK(store->set_conversation_settings(c2, tuned));
  ASSERT_STORE_OK(store->delete_conversation(c2));
  EXPECT_EQ(*store->purge_deleted(), 1);
  auto db = sql::Db::open(path, {});
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM conversation_settings"), 0);  // cascaded
}

}  // namespace
}  // namespace hearth::store
