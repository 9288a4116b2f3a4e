// What a Request's prompt becomes: chat messages rendered through the model's
// chat template (with the vocabulary's BOS / EOS texts and the generation
// prompt), or raw text, tokenized; or token ids used as they are. Then checked
// against the vocabulary and the context.
//
// Chat prompts are tokenized with special-token texts parsed and without the
// encoder's automatic specials; BOS is prepended when the model asks for it and
// the template did not already put it there (no double BOS). Raw text gets the
// model's automatic specials (add_bos / add_eos) with specials parsed.
//
// Thread-safe: immutable after construction (the Encoder is the caller's).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/chat/chat_template.h"
#include "engine/tokenizer/encoder.h"
#include "engine/tokenizer/vocabulary.h"
#include "hearth/engine.h"

namespace hearth::runtime {

class PromptBuilder {
 public:
  // An empty or unparsable template means the documented ChatML fallback (logged once).
  // `limits` bound each render (its `cancel` is ignored: pass one per call).
  PromptBuilder(std::shared_ptr<const tokenizer::Vocabulary> vocab, const std::string& chat_template,
                const chat::RenderLimits& limits = {});

  // The template's output; a render error falls back to ChatML (logged),
  // except a limit of the render budget (kOutOfMemory: a runaway template from
  // the model file) and a cancel (kCancelled), which end the request.
  // `cancel` (optional) stops a running render once set.
  Result<std::string> render(const std::vector<ChatTurn>& messages, bool add_generation_prompt,
                             const std::atomic<bool>* cancel = nullptr) const;

  // The request's prompt tokens. kInvalidArgument: an empty prompt, an id
  // outside the vocabulary; kContextExceeded: the prompt leaves no position
  // for a generated token (prompt tokens >= context_length).
  Result<std::vector<std::int32_t>> build(const Request& request, tokenizer::Encoder& encoder,
                                          std::int32_t context_length, const std::atomic<bool>* cancel = nullptr) const;

 private:
  Result<std::vector<std::int32_t>> tokenize_chat(const std::vector<ChatTurn>& messages,
                                                  const std::string& continue_text, tokenizer::Encoder& encoder,
                                                  const std::atomic<bool>* cancel) const;

  std::shared_ptr<const tokenizer::Vocabulary> vocab_;
  std::optional<chat::ChatTemplate> template_;  // nullopt: the fallback
};

}  // namespace hearth::runtime
