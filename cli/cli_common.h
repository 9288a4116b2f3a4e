// Shared plumbing of hearth-cli's subcommands: each command file exposes one
// add_*_command function that registers its options and its run callback.
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "hearth/result.h"

namespace hearth::cli {

// Thrown out of a command's callback to end the program with a one-line reason
// on stderr and a non-zero exit code. main() is the only place that catches it.
struct Failure {
  std::string message;
  int exit_code = 1;
  std::string kind = "error";  // --json error objects: an ErrorCode's name, "usage", or "error"
};

[[noreturn]] void fail(const Error& error);
[[noreturn]] void fail(const std::string& message);

// A file's whole contents; fails naming the path when it is missing, a
// directory, or unreadable.
std::string read_text_file(const std::string& path);

// Nesting deeper than this in JSON a user hands the CLI is refused while
// parsing (the parser's depth callback): a document nested 100,000 deep would
// otherwise overflow the stack of the recursive serializer and destructor.
constexpr int kMaxJsonInputDepth = 256;

// Parses JSON from a user (`what` names it in errors); fails on invalid JSON
// and on nesting deeper than kMaxJsonInputDepth.
nlohmann::json parse_json_input(const std::string& text, const std::string& what);

// The snake_case name of an ErrorCode, the `kind` of --json error objects.
const char* error_kind(ErrorCode code);

template <class T>
T unwrap(Result<T> r) {
  if (!r) fail(r.error());
  return std::move(r).value();
}

void add_models_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_synth_command(CLI::App& app);
void add_tokenize_commands(CLI::App& app);
void add_template_command(CLI::App& app);
void add_perplexity_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_estimate_command(CLI::App& app);
void add_prompts_command(CLI::App& app);  // cmd_prompts.cpp
void add_history_command(CLI::App& app);  // cmd_history.cpp
void add_export_commands(CLI::App& app);  // cmd_export.cpp: export, import
void add_send_command(CLI::App& app);     // cmd_send.cpp
void add_rerun_command(CLI::App& app);    // cmd_rerun.cpp
void add_profile_command(CLI::App& app);

}  // namespace hearth::cli
