// The text side of a prompt version: how its {{variables}} are filled, and
// how the command line gives them. Pure functions, no store.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "store/store_error.h"

namespace hearth::conversation {

using Variables = std::map<std::string, std::string>;

// "K=V" from the command line (V may contain '=', K must be a variable name).
store::StoreResult<std::pair<std::string, std::string>> parse_variable_assignment(std::string_view text);

// The variable names a text uses, in order of first use, without repeats.
// A variable is `{{name}}` (spaces inside the braces allowed) where name is
// [A-Za-z_][A-Za-z0-9_]*; any other `{{...}}` is plain text.
std::vector<std::string> variables_in(std::string_view text);

struct RenderedPrompt {
  std::string text;
  Variables used;  // the values substituted, by name
};
// Substitutes every variable; a variable without a value is kInvalidArgument
// naming it and `what` (e.g. `prompt "helper" version 2`).
store::StoreResult<RenderedPrompt> render_variables(std::string_view text, const Variables& values,
                                                    std::string_view what);

// {"name": "value", ...} (keys sorted), the form generations record.
std::string variables_to_json(const Variables& values);
// The inverse; an empty or invalid text gives no variables.
Variables variables_from_json(std::string_view json);

// A conversation's title from its first message: the first line with runs of
// white space made single spaces, at most 48 characters (code points); "New chat" when empty.
std::string title_from_message(std::string_view text);

}  // namespace hearth::conversation
