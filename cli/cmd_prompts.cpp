// hearth-cli prompts add|edit|show|versions|diff: the prompt library's
// versions. (label, unlabel, list, archive, revert: cmd_prompts_manage.cpp.)
//   prompts add NAME (--text T | --file F) [--note N] [config options]
//   prompts edit NAME (--text T | --file F) [--note N] [config options]   a new version
//   prompts show NAME[@VERSION|@LABEL]
//   prompts versions NAME
//   prompts diff NAME V1 V2          (V: a version number or a label)
// Config options: --temperature --top-p --top-k --min-p --max-tokens --stop S (repeatable) --no-stop.
// `edit` keeps the latest version's configuration for options not given.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cmd_prompts.h"
#include "cli/store_json.h"

namespace hearth::cli {
namespace {

using nlohmann::json;

struct ConfigOptions {
  std::optional<double> temperature, top_p, min_p;
  std::optional<std::int64_t> top_k, max_tokens;
  std::vector<std::string> stop;
  bool no_stop = false;
};

struct SaveOptions {
  DatabaseOptions db;
  std::string name, text, file, note;
  ConfigOptions config;
};

void add_config_options(CLI::App* cmd, ConfigOptions& c) {
  cmd->add_option("--temperature", c.temperature, "Sampling temperature saved with the version")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--top-p", c.top_p, "Top-p")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--top-k", c.top_k, "Top-k (0: off)")->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 31));
  cmd->add_option("--min-p", c.min_p, "Min-p")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--max-tokens", c.max_tokens, "Answer length limit in tokens")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 31));
  cmd->add_option("--stop", c.stop, "A stop string (repeat for more)");
  cmd->add_flag("--no-stop", c.no_stop, "Save an empty stop list");
}

// The configuration a new version gets: `base` (the latest version's, for
// edit) with every option given replacing its field.
store::PromptConfig config_from(const ConfigOptions& c, store::PromptConfig base) {
  if (c.temperature) base.temperature = c.temperature;
  if (c.top_p) base.top_p = c.top_p;
  if (c.top_k) base.top_k = c.top_k;
  if (c.min_p) base.min_p = c.min_p;
  if (c.max_tokens) base.max_tokens = c.max_tokens;
  if (!c.stop.empty()) base.stop = c.stop;
  if (c.no_stop) base.stop = std::vector<std::string>{};
  return base;
}

std::string text_of(const SaveOptions& o) {
  if (!o.text.empty() && !o.file.empty()) fail("give the prompt's text with --text or --file, not both");
  if (!o.file.empty()) return read_text_file(o.file);
  if (o.text.empty()) fail("the prompt has no text: give --text T or --file F");
  return o.text;
}

std::string config_line(const store::PromptConfig& c) {
  std::string out;
  const auto add = [&](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  if (c.temperature) add("temperature=" + json(*c.temperature).dump());
  if (c.top_p) add("top_p=" + json(*c.top_p).dump());
  if (c.top_k) add("top_k=" + std::to_string(*c.top_k));
  if (c.min_p) add("min_p=" + json(*c.min_p).dump());
  if (c.max_tokens) add("max_tokens=" + std::to_string(*c.max_tokens));
  if (c.stop) add("stop=" + json(*c.stop).dump());
  return out.empty() ? "(none: the conversation's settings apply)" : out;
}

void print_version(store::Store& s, const store::Prompt& p, const store::PromptVersion& v, bool json_out,
                   const std::string& label = {}) {
  const auto labels = unwrap(s.list_prompt_labels(p.id));
  json j = prompt_version_json(p, v, labels);
  if (!label.empty()) j["label"] = label;
  if (json_out) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("%s@%d  %s%s\n", p.name.c_str(), v.version, j["created"].get<std::string>().c_str(),
              labels_suffix(j["labels"]).c_str());
  if (!v.note.empty()) std::printf("note: %s\n", v.note.c_str());
  std::printf("config: %s\n---\n%s\n", config_line(v.config).c_str(), v.text.c_str());
}

void run_add(const SaveOptions& o) {
  const std::string text = text_of(o);
  auto s = open_database(o.db, Access::kWrite);
  const auto v = unwrap(s->add_prompt(o.name, {text, o.note, config_from(o.config, {})}));
  print_version(*s, unwrap(s->get_prompt(v.prompt_id)), v, o.db.json);
}

void run_edit(const SaveOptions& o) {
  const std::string text = text_of(o);
  auto s = open_database(o.db, Access::kWrite);
  const auto p = unwrap(s->find_prompt(o.name));
  store::PromptConfig base;
  if (p.latest_version > 0) base = unwrap(s->find_prompt_version(p.id, p.latest_version)).config;
  const auto v = unwrap(s->add_prompt_version(p.id, {text, o.note, config_from(o.config, base)}));
  print_version(*s, unwrap(s->get_prompt(p.id)), v, o.db.json);
}

struct RefOptions {
  DatabaseOptions db;
  std::string reference;
  std::string v1, v2;
};

void run_show(const RefOptions& o) {
  auto s = open_database(o.db, Access::kRead);
  const auto r = unwrap(s->resolve_prompt(o.reference));
  print_version(*s, r.prompt, r.version, o.db.json, r.label);
}

void run_versions(const RefOptions& o) {
  auto s = open_database(o.db, Access::kRead);
  const auto p = unwrap(s->find_prompt(o.reference));
  const auto labels = unwrap(s->list_prompt_labels(p.id));
  json list = json::array();
  for (const auto& v : unwrap(s->list_prompt_versions(p.id))) {
    json j = prompt_version_json(p, v, labels);
    j["metrics"] = metrics_json(unwrap(s->version_metrics(v.id)));
    list.push_back(std::move(j));
  }
  if (o.db.json) {
    std::cout << json{{"name", p.name}, {"prompt_id", p.id}, {"archived", p.archived}, {"versions", list}}.dump(2)
              << "\n";
    return;
  }
  for (const auto& j : list) {
    std::printf("v%-3d %s  answers %-5lld %s%s\n", j["version"].get<int>(), j["created"].get<std::string>().c_str(),
                static_cast<long long>(j["metrics"]["answers"].get<std::int64_t>()),
                j["note"].get<std::string>().c_str(), labels_suffix(j["labels"]).c_str());
  }
}

void run_diff(const RefOptions& o) {
  auto s = open_database(o.db, Access::kRead);
  const auto a = unwrap(s->resolve_prompt(o.reference + "@" + o.v1));
  const auto b = unwrap(s->resolve_prompt(o.reference + "@" + o.v2));
  const auto ops = unwrap(s->diff_prompt_versions(a.version.id, b.version.id));
  if (o.db.json) {
    json list = json::array();
    for (const auto& op : ops) list.push_back(json{{"op", store::to_string(op.op)}, {"text", op.text}});
    std::cout << json{{"name", a.prompt.name},
                      {"from", {{"version", a.version.version}, {"version_id", a.version.id}}},
                      {"to", {{"version", b.version.version}, {"version_id", b.version.id}}},
                      {"ops", list}}
                     .dump(2)
              << "\n";
    return;
  }
  // wdiff's notation: [-deleted-] {+inserted+}.
  std::printf("%s: version %d -> %d\n", a.prompt.name.c_str(), a.version.version, b.version.version);
  for (const auto& op : ops) {
    if (op.op == store::DiffOpKind::kEqual) std::printf("%s", op.text.c_str());
    if (op.op == store::DiffOpKind::kDelete) std::printf("[-%s-]", op.text.c_str());
    if (op.op == store::DiffOpKind::kInsert) std::printf("{+%s+}", op.text.c_str());
  }
  std::printf("\n");
}

CLI::App* add_save_command(CLI::App* prompts, const char* name, const char* help, bool edit) {
  auto o = std::make_shared<SaveOptions>();
  CLI::App* cmd = prompts->add_subcommand(name, help);
  cmd->add_option("NAME", o->name, "Prompt name")->required();
  cmd->add_option("--text", o->text, "The prompt's text");
  cmd->add_option("--file", o->file, "Read the prompt's text from a file");
  cmd->add_option("--note", o->note, "A note saved with the version");
  add_config_options(cmd, o->config);
  add_database_options(cmd, o->db);
  cmd->callback([o, edit] { edit ? run_edit(*o) : run_add(*o); });
  return cmd;
}

}  // namespace

void add_prompts_command(CLI::App& app) {
  CLI::App* prompts = app.add_subcommand("prompts", "The prompt library: versions, labels, diffs");
  prompts->require_subcommand(1);
  add_save_command(prompts, "add", "Create a prompt with its version 1", false);
  add_save_command(prompts, "edit", "Save a new version of a prompt", true);

  auto show = std::make_shared<RefOptions>();
  CLI::App* cmd = prompts->add_subcommand("show", "Show a version: NAME (latest), NAME@VERSION or NAME@LABEL");
  cmd->add_option("REF", show->reference, "NAME[@VERSION|@LABEL]")->required();
  add_database_options(cmd, show->db);
  cmd->callback([show] { run_show(*show); });

  auto versions = std::make_shared<RefOptions>();
  cmd = prompts->add_subcommand("versions", "List a prompt's versions with their metrics");
  cmd->add_option("NAME", versions->reference, "Prompt name")->required();
  add_database_options(cmd, versions->db);
  cmd->callback([versions] { run_versions(*versions); });

  auto diff = std::make_shared<RefOptions>();
  cmd = prompts->add_subcommand("diff", "Word-level diff of two versions");
  cmd->add_option("NAME", diff->reference, "Prompt name")->required();
  cmd->add_option("V1", diff->v1, "Old version (number or label)")->required();
  cmd->add_option("V2", diff->v2, "New version (number or label)")->required();
  add_database_options(cmd, diff->db);
  cmd->callback([diff] { run_diff(*diff); });

  add_prompts_manage_commands(prompts);
}

}  // namespace hearth::cli
