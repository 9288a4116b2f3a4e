// A remote OpenAI-compatible server (vLLM, llama.cpp's server, Ollama,
// hearth-server) behind hearth's Engine interface, so conversations, prompt
// versions, history and records work as with the local engine: submit()
// streams POST {base}/chat/completions on a thread of its own; the sink gets
// the text as chunks arrive and one finish whose Usage is the client's view
// (TTFT from submit to the first text, decode tok/s and inter-token gaps
// between chunks as they arrived; token counts as the server reported them,
// else one per chunk). cancel() closes the connection at once.
//
// What only a local model has (its tokenizer, chat template, KV cache) is
// refused with kUnsupported, and run_info().device is the endpoint's base
// URL: that is what a generation record names as the place it ran.
// Continuing an answer (Request::continue_text) goes only to a server known
// to honour vLLM's continue_final_message: hearth-server (its /models says
// "owned_by": "hearth"). Elsewhere it is refused with kUnsupported, never sent
// to a server that might answer afresh and be taken for a continuation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "conversation/remote/chat_stream.h"
#include "conversation/remote/endpoint.h"
#include "conversation/remote/openai_chat.h"
#include "hearth/engine.h"

namespace hearth::remote {

struct RemoteOptions {
  Endpoint endpoint;
  std::string model;  // an id of the endpoint's GET /models; "" : the only one it serves
  int connect_timeout_ms = 10'000;
  int read_timeout_ms = 300'000;  // silence allowed between two reads (a big prompt's prefill)
  StreamLimits limits{};
  // The server continues a final assistant message (continue_final_message);
  // connect_remote sets it from the model's owner.
  bool continues_answers = false;
};

// GET {base}/models: the ids the endpoint serves.
Result<std::vector<std::string>> list_models(const Endpoint& endpoint, int timeout_ms = 10'000);
// The same with each model's owner.
Result<std::vector<ModelEntry>> list_model_entries(const Endpoint& endpoint, int timeout_ms = 10'000);

// Whether `engine` can continue an answer: a local engine can; a remote one
// when its server honours continue_final_message.
bool continues_answers(const Engine& engine);

// Picks options.model from the endpoint's list (checking that it is served,
// or taking the only one when none was named; several and none named: an
// error listing them) and returns the engine. Nothing is held open between
// requests.
Result<std::unique_ptr<Engine>> connect_remote(RemoteOptions options);

// The same without asking the endpoint (options.model must be named).
std::unique_ptr<Engine> make_remote_engine(RemoteOptions options);

}  // namespace hearth::remote
