// Turns through conversation/ on a tiny synthetic model: what the request
// holds, what the store records (prompt version, rendered system text,
// variables, sampling, model, measurements), and that the answer reaches the
// store while it streams.
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "conversation/prompt_resolve.h"
#include "models/catalog.h"
#include "tests/conversation/conversation_test_util.h"

namespace hearth::conversation {
namespace {

using testing::greedy;

class Turn : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    opened_ = new models::OpenedEngine(testing::open_tiny_engine(testing::write_tiny_model(*dir_)));
  }
  static void TearDownTestSuite() {
    delete opened_;
    delete dir_;
  }
  void SetUp() override {
    store_ = store::testing::open_store(store::testing::options_for(local_.file("hearth.db")));
    ASSERT_NE(store_, nullptr);
    model_ = identify_model(opened_->path.string(), opened_->engine->run_info());
    prompt_ = *store_->create_prompt("helper");
    v1_ = *store_->add_prompt_version(prompt_, "You help {{who}}.", "first");
    v2_ = *store_->add_prompt_version(prompt_, "You help {{who}} briefly.", "shorter");
  }

  TurnResult run(PreparedTurn t, const RunOptions& options = {}) {
    auto r = run_turn(*store_, *opened_->engine, std::move(t), model_, options);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
    return std::move(r).value();
  }
  PreparedTurn send(store::Id conv, const std::string& text, const TurnSettings& s) {
    auto t = begin_send(*store_, {.conversation_id = conv, .text = text}, s);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().describe());
    return std::move(t).value();
  }
  store::GenerationRecord stored_generation(store::Id answer) { return **store_->get_generation(answer); }

  static testing::TempDir* dir_;
  static models::OpenedEngine* opened_;
  testing::TempDir local_;
  std::unique_ptr<store::Store> store_;
  ModelIdentity model_;
  store::Id prompt_ = 0;
  store::PromptVersion v1_, v2_;
};
testing::TempDir* Turn::dir_ = nullptr;
models::OpenedEngine* Turn::opened_ = nullptr;

TEST_F(Turn, ANewConversationWithoutAPromptRecordsTheModelAndTheMeasurements) {
  const TurnResult r = run(send(0, "Hello there\nsecond line", greedy()));
  EXPECT_EQ(store_->get_conversation(r.turn.conversation_id)->title, "Hello there");
  ASSERT_EQ(r.turn.messages.size(), 1u);  // no system message
  EXPECT_EQ(r.turn.messages[0].role, "user");
  const store::Message answer = *store_->get_message(r.turn.answer_id);
  EXPECT_EQ(answer.content, r.text);
  EXPECT_EQ(answer.state, store::MessageState::kComplete);
  EXPECT_EQ(answer.parent_id, r.turn.user_message_id);
  const store::GenerationRecord g = stored_generation(r.turn.answer_id);
  EXPECT_FALSE(g.prompt_version_id);
  EXPECT_EQ(g.model_path, opened_->path.string());
  EXPECT_EQ(g.model_sha256, *models::sha256_file(opened_->path));
  EXPECT_EQ(g.quantization, "Q8_0");
  EXPECT_EQ(g.kv_precision, "f16");
  EXPECT_EQ(g.device, "cpu");
  EXPECT_EQ(g.sampling.seed, 7u);
  EXPECT_EQ(g.sampling.temperature, 0);
  EXPECT_GT(g.prompt_tokens, 0);
  EXPECT_GT(g.generated_tokens, 0);
  EXPECT_GT(g.ttft_ms, 0);
  EXPECT_EQ(g.finish_reason, to_string(r.reason));
  EXPECT_LE(g.started_ms, g.finished_ms);
}

TEST_F(Turn, APinnedVersionIsRenderedRecordedAndKeptForTheNextTurn) {
  TurnSettings s = greedy();
  s.prompt = std::string("helper@1");
  s.variables = {{"who", "Ada"}};
  const TurnResult first = run(send(0, "Hi", s));
  ASSERT_EQ(first.turn.messages.size(), 2u);
  EXPECT_EQ(first.turn.messages[0].role, "system");
  EXPECT_EQ(first.turn.messages[0].content, "You help Ada.");
  ASSERT_TRUE(first.turn.prompt);
  EXPECT_EQ(first.turn.prompt->version, 1);
  EXPECT_EQ(first.turn.prompt->system_text, "You help Ada.");
  EXPECT_EQ(stored_generation(first.turn.answer_id).prompt_version_id, v1_.id);
  EXPECT_EQ(store_->get_conversation(first.turn.conversation_id)->prompt_version_id, v1_.id);  // pinned

  s.prompt.reset();  // the pin applies
  const TurnResult second = run(send(first.turn.conversation_id, "And again", s));
  EXPECT_EQ(stored_generation(second.turn.answer_id).prompt_version_id, v1_.id);
  // The model saw the system text once, then the whole path.
  ASSERT_EQ(second.turn.messages.size(), 4u);
  EXPECT_EQ(second.turn.messages[0].content, "You help Ada.");
  EXPECT_EQ(second.turn.messages[2].content, first.text);
  EXPECT_EQ(second.turn.messages[3].content, "And again");
}

TEST_F(Turn, ANameAloneResolvesTheLatestLabelAtSendTime) {
  TurnSettings s = greedy();
  s.prompt = std::string("helper");
  s.variables = {{"who", "Bo"}};
  const TurnResult r = run(send(0, "Hi", s));
  ASSERT_TRUE(r.turn.prompt);
  EXPECT_EQ(r.turn.prompt->version_id, v2_.id);
  EXPECT_EQ(r.turn.prompt->label, "latest");
  EXPECT_EQ(r.turn.prompt->system_text, "You help Bo briefly.");
  const store::GenerationRecord g = stored_generation(r.turn.answer_id);
  EXPECT_EQ(g.prompt_version_id, v2_.id);
  EXPECT_EQ(g.prompt_label, "latest");
  EXPECT_EQ(g.system_text, "You help Bo briefly.");
  EXPECT_EQ(g.variables, (Variables{{"who", "Bo"}}));
}

TEST_F(Turn, APinnedLabelIsResolvedAtEachSendAndTheVariablesAreRemembered) {
  ASSERT_TRUE(store_->set_prompt_label(prompt_, "production", v1_.id).ok());
  TurnSettings s = greedy();
  s.prompt = std::string("helper@production");
  s.variables = {{"who", "Di"}};
  const TurnResult first = run(send(0, "Hi", s));
  EXPECT_EQ(first.generation.prompt_version_id, v1_.id);
  EXPECT_EQ(first.generation.prompt_label, "production");
  const store::Conversation c = *store_->get_conversation(first.turn.conversation_id);
  EXPECT_EQ(c.prompt_label, "production");  // the label is pinned, not the version
  EXPECT_FALSE(c.prompt_version_id);

  ASSERT_TRUE(store_->set_prompt_label(prompt_, "production", v2_.id).ok());  // moved
  TurnSettings next = greedy();                                               // no prompt and no variables given
  const TurnResult second = run(send(first.turn.conversation_id, "More", next));
  const store::GenerationRecord g = stored_generation(second.turn.answer_id);
  EXPECT_EQ(g.prompt_version_id, v2_.id);
  EXPECT_EQ(g.prompt_label, "production");
  EXPECT_EQ(g.system_text, "You help Di briefly.");  // the value the last answer used
  EXPECT_EQ(g.variables, (Variables{{"who", "Di"}}));
}

TEST_F(Turn, TheVersionsConfigurationAppliesUnderExplicitOverrides) {
  store::NewPromptVersion v;
  v.text = "Terse.";
  v.config.temperature = 0.5;
  v.config.top_k = 3;
  v.config.max_tokens = 4;
  v.config.stop = std::vector<std::string>{"\n\n"};
  const store::PromptVersion v3 = *store_->add_prompt_version(prompt_, v);
  TurnSettings s = greedy(50);
  s.prompt = std::string("helper@3");
  s.overrides.top_k = 9;
  const TurnResult r = run(send(0, "Hi", s));
  EXPECT_EQ(r.generation.prompt_version_id, v3.id);
  EXPECT_FLOAT_EQ(static_cast<float>(r.generation.sampling.temperature), 0.5f);  // the version's
  EXPECT_EQ(r.generation.sampling.top_k, 9);                                     // the override's
  EXPECT_EQ(r.generation.max_tokens, 4);
  EXPECT_LE(r.generation.generated_tokens, 4);
  EXPECT_EQ(r.generation.stop, (std::vector<std::string>{"\n\n"}));
  EXPECT_EQ(stored_generation(r.turn.answer_id).max_tokens, 4);
}

TEST_F(Turn, AMissingVariableIsRefusedBeforeAnythingIsWritten) {
  TurnSettings s = greedy();
  s.prompt = std::string("helper@2");
  auto t = begin_send(*store_, {.text = "Hi"}, s);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, store::StoreErrorCode::kInvalidArgument);
  EXPECT_NE(t.error().message.find("\"who\""), std::string::npos) << t.error().message;
  EXPECT_TRUE(store_->list_conversations()->empty());
}

// What a front end asks for before a send: the variables of the prompt the
// send would apply (asked for, else pinned) that no value covers yet.
TEST_F(Turn, VariablesNeededNameWhatNoValueCoversYet) {
  auto none = variables_needed(*store_, 0, std::nullopt, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->prompt.empty());
  EXPECT_TRUE(none->missing.empty());
  auto fresh = variables_needed(*store_, 0, std::string("helper@2"), {});
  ASSERT_TRUE(fresh.ok()) << fresh.error().describe();
  EXPECT_EQ(fresh->prompt, "helper@2");
  EXPECT_EQ(fresh->names, (std::vector<std::string>{"who"}));
  EXPECT_EQ(fresh->missing, (std::vector<std::string>{"who"}));
  EXPECT_TRUE(variables_needed(*store_, 0, std::string("helper@2"), {{"who", "Al"}})->missing.empty());
  // Once an answer recorded a value, the pinned prompt needs nothing more and offers it.
  TurnSettings s = greedy();
  s.prompt = std::string("helper@2");
  s.variables = {{"who", "Al"}};
  const TurnResult r = run(send(0, "Hi", s));
  auto pinned = variables_needed(*store_, r.turn.conversation_id, std::nullopt, {});
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(pinned->prompt, "helper@2");
  EXPECT_TRUE(pinned->missing.empty());
  EXPECT_EQ(pinned->remembered, (Variables{{"who", "Al"}}));
  EXPECT_FALSE(variables_needed(*store_, 0, std::string("ghost"), {}).ok());
}

TEST_F(Turn, UnknownPromptsAndVersionsAreNamed) {
  TurnSettings s = greedy();
  s.prompt = std::string("nobody");
  auto t = begin_send(*store_, {.text = "Hi"}, s);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, store::StoreErrorCode::kNotFound);
  EXPECT_NE(t.error().message.find("nobody"), std::string::npos) << t.error().message;
  s.prompt = std::string("helper@9");
  t = begin_send(*store_, {.text = "Hi"}, s);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("version 9"), std::string::npos) << t.error().message;
  EXPECT_TRUE(store_->list_conversations()->empty());
}

TEST_F(Turn, OverridesWinOverTheDefaults) {
  TurnSettings s = greedy(4);
  s.overrides.max_tokens = 3;
  s.overrides.seed = 99;
  s.overrides.top_k = 5;
  const TurnResult r = run(send(0, "Count", s));
  EXPECT_EQ(r.turn.max_tokens, 3);
  EXPECT_LE(r.generation.generated_tokens, 3);
  EXPECT_EQ(r.generation.sampling.seed, 99u);
  EXPECT_EQ(r.generation.sampling.top_k, 5);
  s.overrides.top_p = 2.0f;  // out of range: refused by the sampler's validation
  EXPECT_FALSE(begin_send(*store_, {.text = "x"}, s).ok());
}

TEST_F(Turn, SeedZeroPicksAFreshSeedThatIsRecorded) {
  TurnSettings s = greedy();
  s.sampling.seed = 0;
  const TurnResult r = run(send(0, "Hi", s));
  EXPECT_NE(r.generation.sampling.seed, 0u);
  EXPECT_EQ(stored_generation(r.turn.answer_id).sampling.seed, r.generation.sampling.seed);
}

// Hands the engine's text on one piece at a time: each on_text waits (on the
// engine thread) until the driver has saved the piece before it, so the test
// sees every piece reach the store whatever the machine's load.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    ++permits_;
    cv_.notify_all();
  }
  bool pass() {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, std::chrono::seconds(20), [this] { return permits_ > 0; })) return false;
    --permits_;
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int permits_ = 1;
};

class GatedSink final : public Sink {
 public:
  GatedSink(std::shared_ptr<Sink> inner, Gate& gate) : inner_(std::move(inner)), gate_(gate) {}
  void on_text(const TextEvent& e) override {
    if (!e.text.empty()) {
      EXPECT_TRUE(gate_.pass()) << "the driver never saved the previous piece";
    }
    inner_->on_text(e);
  }
  void on_finish(const FinishEvent& e) override { inner_->on_finish(e); }

 private:
  std::shared_ptr<Sink> inner_;
  Gate& gate_;
};

// The real engine with each request's sink gated.
class GatedEngine final : public Engine {
 public:
  GatedEngine(Engine& inner, Gate& gate) : inner_(inner), gate_(gate) {}
  RequestId submit(Request r, std::shared_ptr<Sink> sink) override {
    return inner_.submit(std::move(r), std::make_shared<GatedSink>(std::move(sink), gate_));
  }
  std::vector<RequestId> submit_all(std::vector<Submission> s) override { return inner_.submit_all(std::move(s)); }
  void cancel(RequestId id) override { inner_.cancel(id); }
  EngineStats stats() const override { return inner_.stats(); }
  const ModelHyperParams& model_info() const override { return inner_.model_info(); }
  const ModelRunInfo& run_info() const override { return inner_.run_info(); }
  std::int32_t context_length() const override { return inner_.context_length(); }
  Result<std::vector<std::int32_t>> tokenize(std::string_view t, bool a, bool p) const override {
    return inner_.tokenize(t, a, p);
  }
  Result<std::string> render_chat(const std::vector<ChatTurn>& m, bool g) const override {
    return inner_.render_chat(m, g);
  }
  Result<std::string> detokenize(const std::vector<std::int32_t>& ids) const override { return inner_.detokenize(ids); }

 private:
  Engine& inner_;
  Gate& gate_;
};

TEST_F(Turn, TheAnswerIsInTheStoreWhileItStreams) {
  Gate gate;
  GatedEngine engine(*opened_->engine, gate);
  RunOptions options;
  options.save_interval_ms = 0;  // every piece
  int saves = 0;
  options.on_saved = [&](const AnswerRecorder& rec) {
    const store::Message m = *store_->get_message(rec.answer_id());
    EXPECT_EQ(m.state, store::MessageState::kStreaming);
    EXPECT_EQ(m.content, rec.text());  // everything received so far is on disk, before the finish
    if (!m.content.empty()) ++saves;
    gate.open();
  };
  auto r = run_turn(*store_, engine, send(0, "Stream", greedy(16)), model_, options);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_GE(saves, 2) << "answer: " << r->text;
  const store::Message done = *store_->get_message(r->turn.answer_id);
  EXPECT_EQ(done.state, store::MessageState::kComplete);
  EXPECT_EQ(done.content, r->text);
}

TEST_F(Turn, RerunIsASiblingWithTheSamePromptAndSampling) {
  TurnSettings s = greedy();
  s.prompt = std::string("helper@1");
  s.variables = {{"who", "Cy"}};
  const TurnResult first = run(send(0, "Question", s));
  store::Id previous = 0;
  TurnSettings again;  // nothing given: the first answer's prompt, variables, sampling and limit
  auto t = begin_rerun(*store_, first.turn.user_message_id, again, &previous);
  ASSERT_TRUE(t.ok()) << t.error().describe();
  EXPECT_EQ(previous, first.turn.answer_id);
  const TurnResult second = run(std::move(t).value());
  EXPECT_EQ(second.turn.messages.size(), first.turn.messages.size());
  EXPECT_EQ(second.generation.prompt_version_id, v1_.id);
  EXPECT_EQ(second.generation.sampling.seed, 7u);
  EXPECT_EQ(second.text, first.text);  // greedy, same seed, same model
  const store::Siblings sib = *store_->siblings(second.turn.answer_id);
  EXPECT_EQ(sib.ids, (std::vector<store::Id>{first.turn.answer_id, second.turn.answer_id}));

  TurnSettings other;
  other.prompt = std::string("helper@2");
  auto third = begin_rerun(*store_, first.turn.user_message_id, other);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->prompt->version_id, v2_.id);
  EXPECT_EQ(third->messages[0].content, "You help Cy briefly.");

  auto not_user = begin_rerun(*store_, first.turn.answer_id, again);
  ASSERT_FALSE(not_user.ok());
  EXPECT_EQ(not_user.error().code, store::StoreErrorCode::kInvalidArgument);
  EXPECT_FALSE(begin_rerun(*store_, 12345, again).ok());
}

// An engine that writes a few words, then fails as a cut remote stream does.
class FailingEngine final : public Engine {
 public:
  explicit FailingEngine(Engine& inner) : inner_(inner) {}
  RequestId submit(Request, std::shared_ptr<Sink> sink) override {
    sink->on_text(TextEvent{1, "Half an", {}, Clock::now()});
    FinishEvent f;
    f.id = 1;
    f.reason = FinishReason::kError;
    f.error = make_error(ErrorCode::kIo, "the stream from http://gpu:8000/v1 was cut before the answer finished");
    sink->on_finish(f);
    return 1;
  }
  std::vector<RequestId> submit_all(std::vector<Submission>) override { return {}; }
  void cancel(RequestId) override {}
  EngineStats stats() const override { return {}; }
  const ModelHyperParams& model_info() const override { return inner_.model_info(); }
  const ModelRunInfo& run_info() const override { return inner_.run_info(); }
  std::int32_t context_length() const override { return inner_.context_length(); }
  Result<std::vector<std::int32_t>> tokenize(std::string_view t, bool a, bool p) const override {
    return inner_.tokenize(t, a, p);
  }
  Result<std::string> render_chat(const std::vector<ChatTurn>& m, bool g) const override {
    return inner_.render_chat(m, g);
  }
  Result<std::string> detokenize(const std::vector<std::int32_t>& ids) const override { return inner_.detokenize(ids); }

 private:
  Engine& inner_;
};

// An answer that fails part-way keeps its text, marked interrupted, and its
// record says why (schema 5); an answer that ends normally records no error.
TEST_F(Turn, AFailedAnswerRecordsTheErrorWithTheText) {
  FailingEngine engine(*opened_->engine);
  auto r = run_turn(*store_, engine, send(0, "Tell me", greedy()), model_, {});
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r->reason, FinishReason::kError);
  const store::Message m = *store_->get_message(r->turn.answer_id);
  EXPECT_EQ(m.content, "Half an");
  EXPECT_EQ(m.state, store::MessageState::kInterrupted);
  const store::GenerationRecord g = stored_generation(r->turn.answer_id);
  EXPECT_EQ(g.finish_reason, "error");
  EXPECT_NE(g.error.find("the stream from http://gpu:8000/v1 was cut"), std::string::npos) << g.error;
  EXPECT_EQ(r->generation.error, g.error);

  const TurnResult fine = run(send(0, "Hi", greedy()));
  EXPECT_EQ(stored_generation(fine.turn.answer_id).error, "");
}

// The front end's plain system prompt (the app's Generation panel): first in
// the request and recorded as system_text when no version applies; a pinned
// version wins over it; a re-run keeps it.
TEST_F(Turn, APlainSystemPromptIsSentAndRecordedWhenNoVersionApplies) {
  TurnSettings s = greedy();
  s.system_prompt = "Answer like a pirate.";
  const TurnResult r = run(send(0, "Hi", s));
  ASSERT_EQ(r.turn.messages.size(), 2u);
  EXPECT_EQ(r.turn.messages[0].role, "system");
  EXPECT_EQ(r.turn.messages[0].content, "Answer like a pirate.");
  EXPECT_EQ(r.turn.system_text, "Answer like a pirate.");
  EXPECT_FALSE(r.turn.prompt);
  const store::GenerationRecord g = stored_generation(r.turn.answer_id);
  EXPECT_EQ(g.system_text, "Answer like a pirate.");
  EXPECT_FALSE(g.prompt_version_id);

  TurnSettings again;  // a re-run sends (and records) the same plain prompt
  auto rerun = begin_rerun(*store_, r.turn.user_message_id, again);
  ASSERT_TRUE(rerun.ok()) << rerun.error().describe();
  EXPECT_EQ(rerun->system_text, "Answer like a pirate.");
  ASSERT_FALSE(rerun->messages.empty());
  EXPECT_EQ(rerun->messages[0].content, "Answer like a pirate.");

  s.prompt = std::string("helper@2");
  s.variables = {{"who", "Ed"}};
  const TurnResult pinned = run(send(0, "Hi", s));
  ASSERT_EQ(pinned.turn.messages.size(), 2u);
  EXPECT_EQ(pinned.turn.messages[0].content, "You help Ed briefly.");
  EXPECT_EQ(stored_generation(pinned.turn.answer_id).system_text, "You help Ed briefly.");
}

// A conversation with a stored system message keeps it; the plain prompt is not added.
TEST_F(Turn, AStoredSystemMessageWinsOverThePlainPrompt) {
  const store::Id conv = *store_->create_conversation("own system");
  ASSERT_TRUE(store_->add_message({conv, std::nullopt, store::Role::kSystem, "Stored rules."}).ok());
  TurnSettings s = greedy();
  s.system_prompt = "Panel rules.";
  const TurnResult r = run(send(conv, "Hi", s));
  ASSERT_EQ(r.turn.messages.size(), 2u);
  EXPECT_EQ(r.turn.messages[0].content, "Stored rules.");
  EXPECT_TRUE(r.turn.system_text.empty());
  EXPECT_TRUE(stored_generation(r.turn.answer_id).system_text.empty());
}

}  // namespace
}  // namespace hearth::conversation
