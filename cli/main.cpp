// hearth-cli: inspect, convert and run models from the terminal. Errors go to
// stderr as one line ("hearth-cli: ...") with a non-zero exit code; with
// --json they also go to stdout as one object {"error": message, "kind": ...}
// so that scripts reading stdout see them.
#include <cstdio>
#include <iostream>
#include <string_view>

#include "cli/cli_common.h"

namespace {

bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--json") return true;
  }
  return false;
}

int report(const std::string& message, const std::string& kind, int exit_code, bool json) {
  std::fprintf(stderr, "hearth-cli: %s\n", message.c_str());
  if (json) {
    std::cout << nlohmann::json{{"error", message}, {"kind", kind}}.dump() << "\n";
    std::cout.flush();
  }
  return exit_code;
}

}  // namespace

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
  hearth::cli::add_estimate_command(app);
#ifdef HEARTH_CLI_HAVE_CONVERSATION
  hearth::cli::add_send_command(app);
  hearth::cli::add_rerun_command(app);
#endif
#ifdef HEARTH_CLI_HAVE_STORE
  hearth::cli::add_prompts_command(app);
  hearth::cli::add_history_command(app);
  hearth::cli::add_export_commands(app);
#endif
  hearth::cli::add_profile_command(app);
  const bool json = wants_json(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report(std::string(e.what()) + " (run with --help for the options)", "usage", e.get_exit_code(), json);
  } catch (const hearth::cli::Failure& f) {
    return report(f.message, f.kind, f.exit_code, json);
  }
  return 0;
}
