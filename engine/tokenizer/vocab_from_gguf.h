// Fills a Vocabulary from a GGUF file's tokenizer.ggml.* metadata. The only
// file of the tokenizer that knows about GGUF.
#pragma once

#include <memory>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/vocabulary.h"
#include "hearth/result.h"

namespace hearth::tokenizer {

// Reads tokenizer.ggml.{model, pre, tokens, scores, token_type, merges,
// bos/eos/unknown/padding/eot_token_id, add_bos_token, add_eos_token,
// add_space_prefix}. Required: model, tokens. Errors name the key: a missing
// required key (kNotFound), a value of the wrong type or an array of the wrong
// element type or length (kCorruptFile), an id outside the vocabulary
// (kCorruptFile), and whatever Vocabulary::create rejects.
Result<VocabularyData> vocabulary_data_from_gguf(const gguf::GgufFile& file);

Result<std::shared_ptr<const Vocabulary>> vocabulary_from_gguf(const gguf::GgufFile& file);

}  // namespace hearth::tokenizer
