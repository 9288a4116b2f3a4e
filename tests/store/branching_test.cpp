// The message tree: streaming answers, regenerations and edits as siblings,
// the current path, sibling indices and switching branches.
#include <vector>

#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

std::vector<Id> ids_of(const std::vector<Message>& path) {
  std::vector<Id> ids;
  for (const Message& m : path) ids.push_back(m.id);
  return ids;
}

class Branching : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::open_store(testing::options_for(dir_.file("hearth.db")));
    ASSERT_NE(store_, nullptr);
    conv_ = *store_->create_conversation("Branches");
  }

  // A finished answer under `parent` with `text` (streamed in two pieces).
  Id answer(std::optional<Id> parent, const std::string& text) {
    const Id id = *store_->begin_answer(conv_, parent);
    EXPECT_TRUE(store_->append_streaming(id, text.substr(0, 2)).ok());
    EXPECT_TRUE(store_->finish_message(id, {.tail = text.substr(2)}).ok());
    return id;
  }

  std::vector<Id> path() { return ids_of(*store_->current_path(conv_)); }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  Id conv_ = 0;
};

TEST_F(Branching, StreamedAnswerIsAssembledAndCompleted) {
  const Id user = *store_->add_message({conv_, std::nullopt, Role::kUser, "Hi"});
  const Id a = *store_->begin_answer(conv_, user);
  EXPECT_EQ(store_->get_message(a)->state, MessageState::kStreaming);
  ASSERT_STORE_OK(store_->append_streaming(a, "Hel"));
  ASSERT_STORE_OK(store_->append_streaming(a, "lo"));
  EXPECT_EQ(store_->get_message(a)->content, "Hello");
  ASSERT_STORE_OK(store_->finish_message(a, {.tail = " there"}));
  const Message m = *store_->get_message(a);
  EXPECT_EQ(m.content, "Hello there");
  EXPECT_EQ(m.state, MessageState::kComplete);
  EXPECT_EQ(m.role, Role::kAssistant);
  EXPECT_EQ(m.parent_id, user);
  EXPECT_EQ(path(), (std::vector<Id>{user, a}));

  auto again = store_->append_streaming(a, "more");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_EQ(store_->get_message(a)->content, "Hello there");
  auto bad = store_->finish_message(user, {.state = MessageState::kStreaming});
  EXPECT_FALSE(bad.ok());
}

TEST_F(Branching, RegenerateAndEditMakeSiblingsAndKeepEveryVersion) {
  const Id u1 = *store_->add_message({conv_, std::nullopt, Role::kUser, "Question"});
  const Id a1 = answer(u1, "First answer");
  const Id a2 = *store_->regenerate(a1);
  ASSERT_STORE_OK(store_->finish_message(a2, {.tail = "Second answer"}));
  const Id a3 = *store_->regenerate(a1);
  ASSERT_STORE_OK(store_->finish_message(a3, {.tail = "Third answer"}));

  EXPECT_EQ(path(), (std::vector<Id>{u1, a3}));
  Siblings s = *store_->siblings(a2);
  EXPECT_EQ(s.ids, (std::vector<Id>{a1, a2, a3}));
  EXPECT_EQ(s.index, 1u);  // shown as 2/3

  // Editing the user turn: a new root sibling; its answer continues from it.
  const Id u2 = *store_->edit_message(u1, "Question, edited");
  EXPECT_EQ(path(), (std::vector<Id>{u2}));
  const Message edited = *store_->get_message(u2);
  EXPECT_EQ(edited.role, Role::kUser);
  EXPECT_EQ(edited.parent_id, std::nullopt);
  EXPECT_EQ(edited.content, "Question, edited");
  const Id b1 = answer(u2, "Answer to the edit");
  EXPECT_EQ(path(), (std::vector<Id>{u2, b1}));
  s = *store_->siblings(u2);
  EXPECT_EQ(s.ids, (std::vector<Id>{u1, u2}));
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(store_->siblings(b1)->ids, (std::vector<Id>{b1}));

  // Every version is still stored, unchanged.
  EXPECT_EQ(store_->get_message(u1)->content, "Question");
  EXPECT_EQ(store_->get_message(a1)->content, "First answer");
  EXPECT_EQ(store_->get_message(a2)->content, "Second answer");
}

TEST_F(Branching, SwitchBranchFollowsTheNewestChildToALeaf) {
  const Id u1 = *store_->add_message({conv_, std::nullopt, Role::kUser, "One"});
  const Id a1 = answer(u1, "Alpha");
  const Id u2 = *store_->add_message({conv_, a1, Role::kUser, "Two"});
  const Id a2 = answer(u2, "Beta");
  const Id a1b = *store_->regenerate(a1);
  ASSERT_STORE_OK(store_->finish_message(a1b, {.tail = "Alpha again"}));
  EXPECT_EQ(path(), (std::vector<Id>{u1, a1b}));

  // Back to version 1 of the answer: its conversation continues to a2.
  EXPECT_EQ(*store_->switch_branch(a1), a2);
  EXPECT_EQ(path(), (std::vector<Id>{u1, a1, u2, a2}));
  EXPECT_EQ(store_->siblings(a1)->index, 0u);
  EXPECT_EQ(store_->get_conversation(conv_)->current_leaf_id, a2);

  // From the root: the newest child of u1 is a1b.
  EXPECT_EQ(*store_->switch_branch(u1), a1b);
  EXPECT_EQ(path(), (std::vector<Id>{u1, a1b}));
}

TEST_F(Branching, ParentMustBelongToTheConversation) {
  const Id other = *store_->create_conversation("Other");
  const Id foreign = *store_->add_message({other, std::nullopt, Role::kUser, "elsewhere"});
  auto r = store_->add_message({conv_, foreign, Role::kUser, "Hi"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, StoreErrorCode::kInvalidArgument);
  EXPECT_TRUE(store_->current_path(conv_)->empty());
  auto missing = store_->add_message({conv_, 999, Role::kUser, "Hi"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, StoreErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("999"), std::string::npos);
  EXPECT_EQ(store_->regenerate(foreign).error().code, StoreErrorCode::kInvalidArgument);  // a user message
}

}  // namespace
}  // namespace hearth::store
