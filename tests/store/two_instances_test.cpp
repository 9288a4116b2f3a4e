// Two Hearth instances on one database (issue 14): the second one's start-up
// recovery used to mark the first one's live answer interrupted, after which
// the first saved nothing more. Now the second opens read-only, recovers
// nothing, names the writer, and the first loses no byte.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

TEST(StoreTwoInstances, SecondOpensReadOnlyAndTheFirstLosesNothing) {
  testing::TempDir dir;
  const std::string path = dir.file("hearth.db");
  auto first = testing::open_store(testing::options_for(path));
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(first->read_only());
  const Id c = *first->create_conversation("two");
  const Id u = *first->add_message({c, std::nullopt, Role::kUser, "Tell me a long story"});
  const Id a = *first->begin_answer(c, u);
  ASSERT_TRUE(first->append_streaming(a, "Once upon").ok());

  auto second = testing::open_store(testing::options_for(path));
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(second->read_only());
  EXPECT_TRUE(second->writer_elsewhere());
  ASSERT_TRUE(second->writer_pid().has_value());
  EXPECT_EQ(*second->writer_pid(), static_cast<std::int64_t>(::getpid()));
  EXPECT_EQ(second->recovered_messages(), 0);
  EXPECT_EQ(second->get_message(a)->state, MessageState::kStreaming);
  EXPECT_EQ(second->create_conversation("nope").error().code, StoreErrorCode::kIo);  // writes refused

  ASSERT_TRUE(first->append_streaming(a, " a time").ok());
  ASSERT_TRUE(first->finish_message(a, {.tail = ", the end."}).ok());
  EXPECT_EQ(second->get_message(a)->content, "Once upon a time, the end.");  // the reader sees the writer's commits
  second.reset();
  first.reset();

  auto third = testing::open_store(testing::options_for(path));  // the lock is free again
  ASSERT_NE(third, nullptr);
  EXPECT_FALSE(third->read_only());
  EXPECT_EQ(third->recovered_messages(), 0);
  EXPECT_EQ(third->get_message(a)->state, MessageState::kComplete);
}

TEST(StoreTwoInstances, ALiveWriterInAnotherProcessKeepsItsStreamingAnswer) {
  testing::TempDir dir;
  const std::string path = dir.file("hearth.db");
  int ready[2];
  int go_on[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go_on), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    close(go_on[1]);
    auto store = Store::open(testing::options_for(path));
    if (!store) _exit(2);
    const Id c = *(*store)->create_conversation("live");
    const Id u = *(*store)->add_message({c, std::nullopt, Role::kUser, "Hi"});
    const Id a = *(*store)->begin_answer(c, u);
    if (!(*store)->append_streaming(a, "Hello").ok()) _exit(3);
    if (write(ready[1], &a, sizeof a) != static_cast<ssize_t>(sizeof a)) _exit(4);
    char byte = 0;
    if (read(go_on[0], &byte, 1) != 1) _exit(5);  // the parent has opened its Store
    if (!(*store)->finish_message(a, {.tail = " there"}).ok()) _exit(6);
    _exit(0);
  }
  close(ready[1]);
  close(go_on[0]);
  Id a = 0;
  ASSERT_EQ(read(ready[0], &a, sizeof a), static_cast<ssize_t>(sizeof a));
  auto reader = testing::open_store(testing::options_for(path));
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->writer_elsewhere());
  EXPECT_EQ(reader->writer_pid().value_or(0), static_cast<std::int64_t>(pid));
  EXPECT_EQ(reader->recovered_messages(), 0);
  ASSERT_EQ(write(go_on[1], "x", 1), 1);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const Message answer = *reader->get_message(a);
  EXPECT_EQ(answer.content, "Hello there");
  EXPECT_EQ(answer.state, MessageState::kComplete);
  close(ready[0]);
  close(go_on[1]);
}

}  // namespace
}  // namespace hearth::store
