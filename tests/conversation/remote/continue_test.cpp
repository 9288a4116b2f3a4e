// Continuing an answer through a remote endpoint (issue 18): hearth-server's
// own OpenAiServer, in this process on a free loopback port over a tiny
// synthetic model, continues a partial answer exactly as the local engine
// does (the same greedy text, the same prompt length); an endpoint whose
// /models does not name hearth as the owner is never sent a continuation:
// it is refused with kUnsupported before any request.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "conversation/remote/remote_engine.h"
#include "server/openai_server.h"
#include "tests/conversation/conversation_test_util.h"

namespace hearth::remote {
namespace {

struct Answer {
  std::string text;
  FinishEvent finish;
};

class Collect final : public Sink {
 public:
  void on_text(const TextEvent& e) override {
    std::lock_guard lock(mutex_);
    text_ += e.text;
  }
  void on_finish(const FinishEvent& e) override {
    std::lock_guard lock(mutex_);
    finish_ = e;
    cv_.notify_all();
  }
  Answer wait() {
    std::unique_lock lock(mutex_);
    const bool done = cv_.wait_for(lock, std::chrono::seconds(60), [this] { return finish_.has_value(); });
    EXPECT_TRUE(done) << "no finish within a minute";
    return {text_, finish_.value_or(FinishEvent{})};
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string text_;
  std::optional<FinishEvent> finish_;
};

Answer run(Engine& engine, const Request& request) {
  auto sink = std::make_shared<Collect>();
  engine.submit(request, sink);
  return sink->wait();
}

Request greedy_request(int max_tokens) {
  Request r;
  r.messages = {{"user", "Count to ten."}};
  r.sampling.temperature = 0;
  r.sampling.top_k = 0;
  r.sampling.min_p = 0;
  r.sampling.seed = 7;
  r.max_tokens = max_tokens;
  return r;
}

// hearth-server's routes over `engine` on a free loopback port, served on a thread of its own.
class ServedEngine {
 public:
  explicit ServedEngine(Engine& engine) : server_(engine, options()) {
    auto port = server_.bind();  // listening from here on: connects wait in the backlog
    EXPECT_TRUE(port.ok()) << (port.ok() ? "" : port.error().describe());
    port_ = port.ok() ? *port : 0;
    thread_ = std::thread([this] { static_cast<void>(server_.serve()); });
  }
  ~ServedEngine() {
    while (!server_.running()) std::this_thread::yield();  // stop() needs a server that listens
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  static server::ServerOptions options() {
    server::ServerOptions o;
    o.port = 0;
    o.model_id = "tiny";
    return o;
  }
  server::OpenAiServer server_;
  int port_ = 0;
  std::thread thread_;
};

Result<std::unique_ptr<Engine>> connect(const std::string& url) {
  RemoteOptions o;
  HEARTH_ASSIGN_OR_RETURN(o.endpoint, parse_endpoint(url, ""));
  return connect_remote(std::move(o));
}

TEST(RemoteContinue, HearthServerContinuesAsTheLocalEngineDoes) {
  conversation::testing::TempDir dir;
  models::OpenedEngine opened = conversation::testing::open_tiny_engine(conversation::testing::write_tiny_model(dir));
  ASSERT_NE(opened.engine, nullptr);
  Engine& local = *opened.engine;
  ServedEngine served(local);
  auto remote = connect(served.url());
  ASSERT_TRUE(remote.ok()) << remote.error().describe();
  EXPECT_TRUE(continues_answers(**remote));  // /models: "owned_by": "hearth"
  EXPECT_TRUE(continues_answers(local));

  const Answer first = run(local, greedy_request(8));  // the answer to go on from
  ASSERT_EQ(first.finish.reason, FinishReason::kLength);
  ASSERT_FALSE(first.text.empty());
  Request more = greedy_request(6);
  more.continue_text = first.text;
  const Answer here = run(local, more);
  const Answer there = run(**remote, more);
  ASSERT_NE(there.finish.reason, FinishReason::kError) << there.finish.error->describe();
  EXPECT_EQ(there.text, here.text);
  EXPECT_EQ(there.finish.reason, here.finish.reason);
  // The server saw the partial answer: its prompt is the local continuation's, longer than a new answer's.
  EXPECT_EQ(there.finish.usage.prompt_tokens, here.finish.usage.prompt_tokens);
  const Answer fresh = run(**remote, greedy_request(6));
  EXPECT_GT(there.finish.usage.prompt_tokens, fresh.finish.usage.prompt_tokens);
}

TEST(RemoteContinue, OtherServersAreNeverAskedToContinue) {
  httplib::Server fake;
  std::atomic<int> posts{0};
  fake.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"object":"list","data":[{"id":"big","object":"model","owned_by":"someone"}]})",
                    "application/json");
  });
  fake.Post("/v1/chat/completions", [&posts](const httplib::Request&, httplib::Response& res) {
    ++posts;
    res.set_content(R"({"choices":[{"index":0,"message":{"role":"assistant","content":"Fresh."},)"
                    R"("finish_reason":"stop"}]})",
                    "application/json");
  });
  const int port = fake.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { fake.listen_after_bind(); });
  {
    auto remote = connect("http://127.0.0.1:" + std::to_string(port) + "/v1");
    ASSERT_TRUE(remote.ok()) << remote.error().describe();
    EXPECT_FALSE(continues_answers(**remote));
    Request more = greedy_request(6);
    more.continue_text = "Once upon";
    const Answer refused = run(**remote, more);
    EXPECT_EQ(refused.finish.reason, FinishReason::kError);
    ASSERT_TRUE(refused.finish.error.has_value());
    EXPECT_EQ(refused.finish.error->code, ErrorCode::kUnsupported);
    EXPECT_NE(refused.finish.error->message.find("cannot continue an answer"), std::string::npos)
        << refused.finish.error->message;
    EXPECT_TRUE(refused.text.empty());
    EXPECT_EQ(posts.load(), 0);                             // nothing was sent
    const Answer plain = run(**remote, greedy_request(6));  // a new answer is fine
    EXPECT_EQ(plain.text, "Fresh.");
    EXPECT_EQ(posts.load(), 1);
  }
  while (!fake.is_running()) std::this_thread::yield();
  fake.stop();
  serving.join();
}

}  // namespace
}  // namespace hearth::remote
