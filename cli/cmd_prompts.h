// The `prompts` command's pieces, shared by cmd_prompts.cpp and cmd_prompts_manage.cpp.
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/store_session.h"

namespace hearth::cli {

// label, unlabel, list, archive, revert under `prompts`.
void add_prompts_manage_commands(CLI::App* prompts);

// "  [latest, production]" for a JSON array of label names; "" when empty.
std::string labels_suffix(const nlohmann::json& labels);

}  // namespace hearth::cli
