// Internal to engine/gguf: fills a GgufFile whose bytes are set.
#pragma once

#include "hearth/result.h"

namespace hearth::gguf {

class GgufFile;
Result<void> run_parser(GgufFile& f);

}  // namespace hearth::gguf
