// hearth-bench: end-to-end engine benchmarks (prefix cache across turns,
// concurrent streams). Errors go to stderr as one line with a non-zero exit code.
#include <cstdio>

#include "bench_common.h"
#include "engine/core/log.h"

int main(int argc, char** argv) {
  CLI::App app{"Hearth engine benchmarks", "hearth-bench"};
  app.require_subcommand(1);
  hearth::bench::add_multiturn_command(app);
  hearth::bench::add_concurrent_command(app);
  hearth::bench::add_prefill_command(app);
  hearth::log::set_level(spdlog::level::warn);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const hearth::bench::Failure& f) {
    std::fprintf(stderr, "hearth-bench: %s\n", f.message.c_str());
    return f.exit_code;
  }
  return 0;
}
