#include "cli/cli_common.h"

namespace hearth::cli {

void fail(const Error& error) {
  throw Failure{error.describe(), 1};
}

void fail(const std::string& message) {
  throw Failure{message, 1};
}

}  // namespace hearth::cli
