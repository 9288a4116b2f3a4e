// Shared plumbing of hearth-cli's subcommands: each command file exposes one
// add_*_command function that registers its options and its run callback.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "hearth/result.h"

namespace hearth::cli {

// Thrown out of a command's callback to end the program with a one-line reason
// on stderr and a non-zero exit code. main() is the only place that catches it.
struct Failure {
  std::string message;
  int exit_code = 1;
};

[[noreturn]] void fail(const Error& error);
[[noreturn]] void fail(const std::string& message);

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

}  // namespace hearth::cli
