// hearth-cli models --install NAME / --delete NAME (cmd_models_install.cpp;
// built where the model installer is: cpp-httplib and zlib).
#pragma once

#include <string>

namespace hearth::cli {

void run_install(const std::string& name, bool json);
void run_delete(const std::string& name, bool json);

}  // namespace hearth::cli
