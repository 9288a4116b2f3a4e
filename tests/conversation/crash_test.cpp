// A process killed (SIGKILL) while an answer streams through run_turn leaves
// the text written so far, marked interrupted by the next open. The child
// forks before any engine thread exists in this process, opens its own
// engine, and says over a pipe when streamed text has reached the store.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/conversation/conversation_test_util.h"

namespace hearth::conversation {
namespace {

struct Reported {
  store::Id answer = 0;
  std::int64_t saved_bytes = 0;
};

[[noreturn]] void child(int fd, const std::string& db, const std::string& model_path) {
  auto s = store::Store::open(store::testing::options_for(db));
  if (!s) _exit(2);
  models::OpenedEngine opened = testing::open_tiny_engine(model_path);
  if (!opened.engine) _exit(3);
  auto turn = begin_send(**s, {.text = "Tell me everything"}, testing::greedy(200));
  if (!turn) _exit(4);
  RunOptions options;
  options.save_interval_ms = 0;
  options.on_saved = [fd](const AnswerRecorder& rec) {
    if (rec.text().size() < 8) return;
    const Reported r{rec.answer_id(), static_cast<std::int64_t>(rec.text().size())};
    if (write(fd, &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(5);
    for (;;) pause();  // killed here, the answer still streaming
  };
  (void)run_turn(**s, *opened.engine, std::move(turn).value(),
                 identify_model(opened.path.string(), opened.engine->run_info()), options);
  _exit(6);  // the answer ended before 8 bytes were saved
}

TEST(TurnCrash, AKilledProcessLeavesThePartialAnswerMarkedInterrupted) {
  testing::TempDir dir;
  const std::string model_path = testing::write_tiny_model(dir);
  const std::string db = dir.file("hearth.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    child(fds[1], db, model_path);
  }
  close(fds[1]);
  Reported r;
  std::size_t got = 0;
  while (got < sizeof r) {
    const ssize_t n = read(fds[0], reinterpret_cast<char*>(&r) + got, sizeof r - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fds[0]);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(got, sizeof r) << "the child exited early, status " << status;
  ASSERT_TRUE(WIFSIGNALED(status));

  auto s = store::testing::open_store(store::testing::options_for(db));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->recovered_messages(), 1);
  const store::Message answer = *s->get_message(r.answer);
  EXPECT_EQ(answer.state, store::MessageState::kInterrupted);
  EXPECT_EQ(static_cast<std::int64_t>(answer.content.size()), r.saved_bytes);
  EXPECT_FALSE(s->get_generation(r.answer)->has_value());  // no record of an answer that never finished
}

}  // namespace
}  // namespace hearth::conversation
