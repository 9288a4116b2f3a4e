// Nothing stored is lost: a process killed mid-answer (SIGKILL, in a child),
// a full disk (a page limit, and a file-size limit in a child) and a read-only
// database (opened read-only, and write-protected in a child) each leave the
// stored data intact and, where a write failed, a clear kIo error.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "store/sqlite_db.h"
#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

// A conversation: user "keep me", assistant "saved part" + " done".
struct Saved {
  Id conv = 0, user = 0, answer = 0;
};

Saved save_conversation(const std::string& path) {
  Saved s;
  auto store = testing::open_store(testing::options_for(path));
  if (!store) return s;
  s.conv = *store->create_conversation("precious");
  s.user = *store->add_message({s.conv, std::nullopt, Role::kUser, "keep me"});
  s.answer = *store->begin_answer(s.conv, s.user);
  EXPECT_TRUE(store->append_streaming(s.answer, "saved part").ok());
  EXPECT_TRUE(store->finish_message(s.answer, {.tail = " done"}).ok());
  return s;
}

// Reopens the database and checks the saved conversation is all there.
void expect_intact(const std::string& path, const Saved& s, std::size_t messages) {
  auto db = sql::Db::open(path, {});
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM messages"), static_cast<std::int64_t>(messages));
  db = sql::Db();
  auto store = testing::open_store(testing::options_for(path));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->get_conversation(s.conv)->title, "precious");
  EXPECT_EQ(store->get_message(s.user)->content, "keep me");
  const Message a = *store->get_message(s.answer);
  EXPECT_EQ(a.content, "saved part done");
  EXPECT_EQ(a.state, MessageState::kComplete);
}

// Runs `body` in a forked child; returns its raw wait status.
int in_child(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

std::string big_text() {
  std::string s;
  while (s.size() < 512 * 1024) s += "lorem ipsum dolor " + std::to_string(s.size()) + " ";
  return s;
}

bool has(const StoreError& e, const std::string& text) {
  return e.message.find(text) != std::string::npos;
}

TEST(StoreCrashSafety, KilledMidAnswerKeepsThePartialAnswerMarkedInterrupted) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    auto store = Store::open(testing::options_for(path));
    if (!store) _exit(2);
    const Id c = *(*store)->create_conversation("crash");
    const Id u = *(*store)->add_message({c, std::nullopt, Role::kUser, "What is a hearth?"});
    const Id a = *(*store)->begin_answer(c, u);
    if (!(*store)->append_streaming(a, "A hearth is").ok()) _exit(3);
    if (!(*store)->append_streaming(a, " the floor of a fireplace").ok()) _exit(3);
    const Id ids[3] = {c, u, a};
    if (write(ready[1], ids, sizeof ids) != static_cast<ssize_t>(sizeof ids)) _exit(4);
    for (;;) pause();  // killed here, mid-answer, the store still open
  }
  close(ready[1]);
  Id ids[3] = {};
  std::size_t got = 0;
  while (got < sizeof ids) {
    const ssize_t n = read(ready[0], reinterpret_cast<char*>(ids) + got, sizeof ids - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(ready[0]);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(got, sizeof ids) << "child exited early with status " << status;
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  auto store = testing::open_store(testing::options_for(path));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->recovered_messages(), 1);
  EXPECT_EQ(store->recovered_message_ids(), std::vector<Id>{ids[2]});  // the app links to it
  const Message answer = *store->get_message(ids[2]);
  EXPECT_EQ(answer.content, "A hearth is the floor of a fireplace");
  EXPECT_EQ(answer.state, MessageState::kInterrupted);
  const Message user = *store->get_message(ids[1]);
  EXPECT_EQ(user.content, "What is a hearth?");
  EXPECT_EQ(user.state, MessageState::kComplete);
  auto path_ids = *store->current_path(ids[0]);
  ASSERT_EQ(path_ids.size(), 2u);
  EXPECT_EQ(path_ids[1].id, ids[2]);
  EXPECT_EQ(store->append_streaming(ids[2], "more").error().code, StoreErrorCode::kInvalidArgument);
  // Regenerating the interrupted answer works as for any other.
  EXPECT_TRUE(store->regenerate(ids[2]).ok());
  store.reset();
  EXPECT_EQ(testing::open_store(testing::options_for(path))->recovered_messages(), 1);  // the regeneration's
}

TEST(StoreCrashSafety, FullDiskIsAClearErrorAndLosesNothing) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  const Saved saved = save_conversation(path);
  std::int64_t pages = 0;
  {
    auto db = sql::Db::open(path, {});
    ASSERT_TRUE(db.ok());
    pages = *db->query_int("PRAGMA page_count");
  }
  StoreOptions options = testing::options_for(path);
  options.max_page_count = pages + 4;  // room for small writes, not for half a megabyte
  Id streaming = 0;
  {
    auto store = testing::open_store(options);
    ASSERT_NE(store, nullptr);
    auto r = store->add_message({saved.conv, saved.answer, Role::kUser, big_text()});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, StoreErrorCode::kIo);
    EXPECT_TRUE(has(r.error(), "disk full")) << r.error().message;
    EXPECT_TRUE(has(r.error(), "conversation " + std::to_string(saved.conv))) << r.error().message;

    streaming = *store->begin_answer(saved.conv, saved.user);
    ASSERT_STORE_OK(store->append_streaming(streaming, "kept text"));
    auto a = store->append_streaming(streaming, big_text());
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().code, StoreErrorCode::kIo);
    EXPECT_TRUE(has(a.error(), "disk full while saving message " + std::to_string(streaming))) << a.error().message;
    EXPECT_EQ(store->get_message(streaming)->content, "kept text");
  }
  expect_intact(path, saved, 3);
  auto store = testing::open_store(testing::options_for(path));
  EXPECT_EQ(store->get_message(streaming)->content, "kept text");
  EXPECT_EQ(store->get_message(streaming)->state, MessageState::kInterrupted);
}

TEST(StoreCrashSafety, FileSizeLimitIsAClearErrorAndLosesNothing) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  const Saved saved = save_conversation(path);
  const int status = in_child([&] {
    auto store = Store::open(testing::options_for(path));
    if (!store) return 2;
    signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing us
    const rlim_t limit = static_cast<rlim_t>(std::filesystem::file_size(path)) + 64 * 1024;
    const rlimit rl{limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 3;
    auto r = (*store)->add_message({saved.conv, saved.answer, Role::kUser, big_text()});
    if (r.ok()) return 4;
    if (r.error().code != StoreErrorCode::kIo) return 5;
    if (!has(r.error(), "while saving a message in conversation")) return 6;
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  expect_intact(path, saved, 2);
}

TEST(StoreCrashSafety, ReadOnlyOpenReadsAndRefusesWrites) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  const Saved saved = save_conversation(path);
  StoreOptions options = testing::options_for(path);
  options.read_only = true;
  {
    auto store = testing::open_store(options);
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(store->read_only());
    EXPECT_EQ(store->list_conversations()->size(), 1u);
    EXPECT_EQ(store->current_path(saved.conv)->size(), 2u);
    auto r = store->add_message({saved.conv, saved.answer, Role::kUser, "lost?"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, StoreErrorCode::kIo);
    EXPECT_TRUE(has(r.error(), "read-only")) << r.error().message;
    EXPECT_EQ(store->rename_conversation(saved.conv, "x").error().code, StoreErrorCode::kIo);
  }
  expect_intact(path, saved, 2);
}

TEST(StoreCrashSafety, WriteProtectedFileReadsAndRefusesWrites) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  const Saved saved = save_conversation(path);
  // The file and its folder are write-protected; root ignores modes, so the
  // child drops to an unprivileged user first.
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  ASSERT_EQ(chmod(dir.path().c_str(), 0555), 0);
  const int status = in_child([&] {
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) return 2;
    auto store = Store::open(testing::options_for(path));
    if (!store) return store.error().code == StoreErrorCode::kIo ? 10 : 3;
    if (!(*store)->read_only()) return 4;
    auto list = (*store)->list_conversations();
    if (!list || list->size() != 1) return 5;
    auto r = (*store)->rename_conversation(saved.conv, "changed");
    if (r.ok() || r.error().code != StoreErrorCode::kIo || !has(r.error(), "read-only")) return 6;
    return 0;
  });
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  expect_intact(path, saved, 2);
}

}  // namespace
}  // namespace hearth::store
