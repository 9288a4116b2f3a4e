#include "cli/turn_options.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/store_json.h"
#include "conversation/sampling_record.h"
#include "models/catalog.h"
#include "settings/settings.h"
#ifdef HEARTH_CLI_HAVE_REMOTE
#include "conversation/remote/remote_engine.h"
#endif

namespace hearth::cli {

void add_turn_options(CLI::App* cmd, TurnOptions& o) {
  o.command = cmd;
  add_sampling_options(*cmd, o.sampling);
  cmd->add_option("-n,--max-tokens", o.max_tokens, "Tokens to generate at most (a prompt version may set it)")
      ->capture_default_str();
  cmd->add_option("--stop", o.stop, "Stop string (repeatable; a prompt version may set them)");
  cmd->add_option("--prompt", o.prompt, "Prompt version: NAME (its latest), NAME@VERSION or NAME@LABEL");
  cmd->add_option("--var", o.variables, "A {{variable}} of the prompt: K=V (repeatable)");
  add_database_options(cmd, o.database);
  auto* endpoint = cmd->add_option(
      "--endpoint", o.endpoint, "A remote OpenAI-compatible server's base URL (http://host:port/v1) instead of MODEL");
  cmd->add_option("--api-key", o.api_key, "The endpoint's API key (default: $HEARTH_API_KEY)")->needs(endpoint);
  cmd->add_option("--remote-model", o.remote_model, "A model id of the endpoint's /v1/models (default: its only one)")
      ->needs(endpoint);
  if (CLI::Option* model = cmd->get_option_no_throw("model")) {
    model->required(false);
    model->excludes(endpoint);
  }
}

conversation::TurnSettings turn_settings(const TurnOptions& o) {
  conversation::TurnSettings s;
  s.sampling = o.sampling;
  s.sampling.seed = 0;  // no --seed: a fresh one per answer, recorded
  s.max_tokens = o.max_tokens;
  const CLI::App& c = *o.command;
  auto& ov = s.overrides;
  if (c.count("--temp")) ov.temperature = o.sampling.temperature;
  if (c.count("--top-k")) ov.top_k = o.sampling.top_k;
  if (c.count("--top-p")) ov.top_p = o.sampling.top_p;
  if (c.count("--min-p")) ov.min_p = o.sampling.min_p;
  if (c.count("--repeat-penalty")) ov.repeat_penalty = o.sampling.repeat_penalty;
  if (c.count("--seed")) ov.seed = o.sampling.seed;
  if (c.count("--max-tokens")) ov.max_tokens = o.max_tokens;
  if (c.count("--stop")) ov.stop = o.stop;
  if (!o.prompt.empty()) s.prompt = o.prompt;
  for (const auto& v : o.variables) {
    auto kv = conversation::parse_variable_assignment(v);
    if (!kv) throw Failure{"--var " + kv.error().message, 1, "invalid_argument"};
    s.variables[kv->first] = kv->second;
  }
  return s;
}

void check_prompt(store::Store& store, const TurnOptions& o) {
  if (!o.prompt.empty()) unwrap(store.resolve_prompt(o.prompt));
}

void apply_front_end_defaults(conversation::TurnSettings& s, store::Store& store, store::Id conversation_id) {
  if (conversation_id != 0) {
    if (auto own = unwrap(store.conversation_settings(conversation_id))) {
      s.sampling = conversation::sampling_of(own->sampling);
      s.max_tokens = static_cast<std::int32_t>(own->max_tokens);
      s.system_prompt = own->system_prompt;
      return;
    }
  }
  auto path = settings::default_settings_path();
  if (!path) return;  // no HOME: generate's defaults
  auto loaded = settings::load_settings(*path);
  if (!loaded) {
    std::fprintf(stderr, "[settings: %s; using the built-in defaults]\n", loaded.error().message.c_str());
    return;
  }
  for (const std::string& w : loaded->warnings) std::fprintf(stderr, "[settings: %s]\n", w.c_str());
  s.sampling = loaded->settings.sampling;
  s.sampling.seed = 0;  // a fresh seed per answer, recorded (as the app)
  s.max_tokens = loaded->settings.max_tokens;
  s.system_prompt = loaded->settings.system_prompt;
}

namespace {

StartedModel start_remote(const TurnOptions& o) {
#ifdef HEARTH_CLI_HAVE_REMOTE
  std::string key = o.api_key;
  if (key.empty()) {
    if (const char* env = std::getenv("HEARTH_API_KEY")) key = env;
  }
  remote::RemoteOptions options;
  options.endpoint = unwrap(remote::parse_endpoint(o.endpoint, key));
  options.model = o.remote_model;
  StartedModel m;
  m.engine = unwrap(remote::connect_remote(std::move(options)));
  const std::string& where = m.engine->run_info().device;
  std::fprintf(stderr, "[remote model %s at %s]\n", m.engine->model_info().name.c_str(), where.c_str());
  m.identity.device = where;  // the record names the endpoint (never the key)
  m.identity.name = m.engine->model_info().name;
  return m;
#else
  static_cast<void>(o);
  throw Failure{"this hearth-cli was built without cpp-httplib: --endpoint is not available", 1, "unsupported"};
#endif
}

}  // namespace

StartedModel start_model(const TurnOptions& o) {
  if (!o.endpoint.empty()) return start_remote(o);
  const EngineSetup& setup = o.setup;
  if (setup.model.empty()) throw Failure{"give MODEL (a .gguf file or catalog name) or --endpoint URL", 2, "usage"};
  StartedModel m;
  const std::filesystem::path path = std::filesystem::absolute(cli::unwrap(models::resolve_model(setup.model)));
  m.engine = start_engine(setup);
  m.identity = conversation::identify_model(path.string(), m.engine->run_info(), m.engine->model_info().name);
  return m;
}

conversation::TurnResult run(store::Store& store, StartedModel& model, conversation::PreparedTurn turn, bool json) {
  conversation::RunOptions options;
  if (!json) {
    options.on_text = [](std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    };
  }
  auto result = unwrap(conversation::run_turn(store, *model.engine, std::move(turn), model.identity, options));
  if (!json) std::fputs("\n", stdout);
  if (result.reason == FinishReason::kError) {
    fail("the engine stopped the answer (message " + std::to_string(result.turn.answer_id) +
         " keeps what it wrote): " + result.error);
  }
  return result;
}

nlohmann::json turn_json(store::Store& store, const conversation::TurnResult& r) {
  return {{"conversation_id", r.turn.conversation_id}, {"user_message_id", r.turn.user_message_id},
          {"assistant_message_id", r.turn.answer_id},  {"text", r.text},
          {"finish_reason", to_string(r.reason)},      {"generation", generation_json(store, r.generation)}};
}

void print_summary(const conversation::TurnResult& r) {
  std::string prompt = "no prompt";
  if (r.turn.prompt) {
    prompt = "prompt " + r.turn.prompt->name + " version " + std::to_string(r.turn.prompt->version);
    if (!r.turn.prompt->label.empty()) prompt += " (" + r.turn.prompt->label + ")";
  }
  const auto& g = r.generation;
  std::fprintf(stderr,
               "[conversation %lld: message %lld answered by %lld; %s; %lld prompt tokens (%lld cached), %lld "
               "generated; TTFT %.1f ms; decode %.1f tok/s; %s]\n",
               static_cast<long long>(r.turn.conversation_id), static_cast<long long>(r.turn.user_message_id),
               static_cast<long long>(r.turn.answer_id), prompt.c_str(), static_cast<long long>(g.prompt_tokens),
               static_cast<long long>(g.cached_tokens), static_cast<long long>(g.generated_tokens), g.ttft_ms,
               g.decode_tok_s, g.finish_reason.c_str());
}

}  // namespace hearth::cli
