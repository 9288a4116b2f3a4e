// The model file truncated while the engine runs it from the memory mapping
// (issue 14): the process survives, each request ends with an error saying
// the file changed, and the engine still answers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "engine_test_util.h"
#include "models/loader.h"
#include "synthetic_workload.h"

namespace hearth::testing {
namespace {

namespace fs = std::filesystem;

TEST(EngineModelFile, TruncatedWhileLoadedIsAnErrorNotSigbus) {
  const fs::path copy = fs::temp_directory_path() / ("hearth-truncated-" + std::to_string(::getpid()) + ".gguf");
  fs::copy_file(tiny_model_path(), copy, fs::copy_options::overwrite_existing);
  auto engine = make_engine(copy, tiny_options(false), 1);
  ASSERT_NE(engine, nullptr);
  const std::vector<Outcome> before = run_alone(*engine, {greedy_tokens({10, 11, 12}, 2)});
  EXPECT_EQ(before[0].finish.reason, FinishReason::kLength);

  fs::resize_file(copy, 4096);  // another program truncates the file in place
  for (int i = 0; i < 2; ++i) {
    const std::vector<Outcome> after = run_alone(*engine, {greedy_tokens({20, 21, 22, 23}, 2)});
    EXPECT_EQ(after[0].finish.reason, FinishReason::kError);
    ASSERT_TRUE(after[0].finish.error.has_value());
    EXPECT_NE(after[0].finish.error->message.find("model file changed on disk"), std::string::npos)
        << after[0].finish.error->message;
  }
  engine.reset();
  fs::remove(copy);
}

}  // namespace
}  // namespace hearth::testing
