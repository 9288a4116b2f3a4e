// hearth-cli template [MODEL] [--template FILE.jinja] --messages FILE.json
//   [--no-generation-prompt] [--bos TEXT] [--eos TEXT]
// Prints the rendered prompt exactly (nothing added). The messages file is a
// JSON list of {"role", "content", ...} or an object {"messages": [...], more
// template variables}. A template error exits non-zero with its message. A
// model without a usable template renders through the same documented
// fallback as --chat and the app (engine/chat/chat_format.h), named on stderr.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "engine/chat/chat_format.h"
#include "engine/chat/chat_template.h"
#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/vocab_from_gguf.h"
#include "models/catalog.h"

namespace hearth::cli {
namespace {

struct TemplateOptions {
  std::string model;
  std::string template_file;
  std::string messages_file;
  bool no_generation_prompt = false;
  std::optional<std::string> bos, eos;
};

// The messages file as the {"messages": ...} object chat::inputs_from_json reads.
std::string inputs_document(const std::string& text, const TemplateOptions& opt) {
  auto doc = parse_json_input(text, opt.messages_file);
  if (doc.is_array()) doc = nlohmann::json{{"messages", doc}};
  if (!doc.is_object() || !doc.contains("messages")) fail(opt.messages_file + ": expected a list of messages");
  doc["add_generation_prompt"] = !opt.no_generation_prompt;
  return doc.dump();
}

void run_template(const TemplateOptions& opt) {
  std::string source, bos = opt.bos.value_or(""), eos = opt.eos.value_or("");
  bool chatml = false;
  if (!opt.model.empty()) {
    const auto file = unwrap(gguf::GgufFile::open(unwrap(models::resolve_model(opt.model))));
    const auto vocab = unwrap(tokenizer::vocabulary_from_gguf(*file));
    std::string_view file_template;
    if (auto t = file->get_string("tokenizer.chat_template")) file_template = *t;
    const chat::ChatFormat format =
        chat::choose_chat_format(file_template, vocab->find("<start_of_turn>") && vocab->find("<end_of_turn>"));
    source = format.source;
    chatml = format.fallback && source.empty();
    if (format.fallback && opt.template_file.empty())
      std::fprintf(stderr, "chat format: %s\n", format.describe().c_str());
    if (!opt.bos && vocab->bos()) bos = vocab->token_text(*vocab->bos());
    if (!opt.eos && vocab->eos()) eos = vocab->token_text(*vocab->eos());
  }
  if (!opt.template_file.empty()) source = read_text_file(opt.template_file), chatml = false;
  if (source.empty() && !chatml) fail("no chat template: give a MODEL or --template");
  auto inputs = unwrap(chat::inputs_from_json(inputs_document(read_text_file(opt.messages_file), opt)));
  inputs.bos_token = bos;
  inputs.eos_token = eos;
  if (chatml) {
    const std::string text = chat::render_fallback(inputs);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  const auto tmpl = unwrap(chat::ChatTemplate::parse(source));
  const std::string text = unwrap(tmpl.render(inputs));
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

void add_template_command(CLI::App& app) {
  auto opt = std::make_shared<TemplateOptions>();
  CLI::App* cmd = app.add_subcommand("template", "Render a chat template with messages, exactly");
  cmd->add_option("model", opt->model, "Path to a .gguf file or a catalog name (its template, BOS and EOS)");
  cmd->add_option("--template", opt->template_file, "Render this Jinja file instead of the model's template");
  cmd->add_option("--messages", opt->messages_file, "JSON file: a list of {role, content} messages")->required();
  cmd->add_flag("--no-generation-prompt", opt->no_generation_prompt, "Do not open an assistant turn at the end");
  cmd->add_option("--bos", opt->bos, "bos_token (default: the model's)");
  cmd->add_option("--eos", opt->eos, "eos_token (default: the model's)");
  cmd->callback([opt] { run_template(*opt); });
}

}  // namespace hearth::cli
