#include "switching.h"

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include <malloc.h>
#include <unistd.h>

#include "hearth/engine.h"

namespace hearth::models::test {
namespace {

class WaitSink final : public Sink {
 public:
  void on_text(const TextEvent&) override {}
  void on_finish(const FinishEvent& e) override {
    std::lock_guard lock(mu_);
    finish_ = e;
    done_ = true;
    cv_.notify_all();
  }
  // The finish, or nothing after two minutes (a hung engine is a failure, not a wait forever).
  std::optional<FinishEvent> wait() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::minutes(2), [&] { return done_; })) return std::nullopt;
    return finish_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  FinishEvent finish_;
};

}  // namespace

Result<std::vector<std::int32_t>> greedy_once(const SwitchTarget& target, std::int32_t max_tokens,
                                              const std::function<std::size_t()>& loaded, std::size_t* loaded_value) {
  HEARTH_ASSIGN_OR_RETURN(OpenedEngine opened, open_engine(target.model, target.config));
  Request r;
  r.messages = {{"user", "Name three rivers of Europe."}};
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  auto sink = std::make_shared<WaitSink>();
  opened.engine->submit(r, sink);
  const auto finish = sink->wait();
  if (!finish) return make_error(ErrorCode::kInternal, target.label + ": no finish within two minutes");
  if (loaded && loaded_value != nullptr) *loaded_value = loaded();
  if (finish->reason == FinishReason::kError) {
    return make_error(ErrorCode::kInternal,
                      target.label + ": the request failed: " + (finish->error ? finish->error->message : "?"));
  }
  return finish->generated_token_ids;
}

std::size_t resident_bytes() {
  ::malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  std::size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

Result<SwitchReport> switch_rounds(const std::vector<SwitchTarget>& targets, int rounds, std::int32_t max_tokens,
                                   const std::function<std::size_t()>& measure) {
  SwitchReport report;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < targets.size(); ++i) {
      std::size_t while_open = 0;
      HEARTH_ASSIGN_OR_RETURN(auto tokens, greedy_once(targets[i], max_tokens, measure, &while_open));
      report.while_loaded.push_back(while_open);
      if (round == 0) {
        report.first_outputs.push_back(std::move(tokens));
      } else {
        if (tokens != report.first_outputs[i]) {
          std::ostringstream s;
          s << targets[i].label << ", round " << round << ": the greedy tokens differ from the first round's";
          report.mismatches.push_back(s.str());
        }
        report.after_each.push_back(measure());
      }
    }
    if (round == 0) report.baseline = measure();
  }
  return report;
}

}  // namespace hearth::models::test
