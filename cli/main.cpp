// hearth-cli: inspect, convert and run models from the terminal. Errors go to
// stderr as one line with a non-zero exit code.
#include <cstdio>

#include "cli/cli_common.h"

int main(int argc, char** argv) {
  CLI::App app{"Hearth command-line tool: inspect models and run the engine", "hearth-cli"};
  app.set_version_flag("--version", std::string("hearth-cli ") + HEARTH_VERSION);
  app.require_subcommand(1);
  hearth::cli::add_models_command(app);
  hearth::cli::add_inspect_command(app);
  hearth::cli::add_synth_command(app);
  hearth::cli::add_tokenize_commands(app);
  hearth::cli::add_template_command(app);
  hearth::cli::add_generate_command(app);
  hearth::cli::add_chat_command(app);
  hearth::cli::add_perplexity_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const hearth::cli::Failure& f) {
    std::fprintf(stderr, "hearth-cli: %s\n", f.message.c_str());
    return f.exit_code;
  }
  return 0;
}
