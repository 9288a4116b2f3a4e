// hearth-cli prompts label|unlabel|list|archive|revert:
//   prompts label NAME VERSION LABEL     point LABEL at VERSION (moves it when it exists)
//   prompts unlabel NAME LABEL
//   prompts list [--archived]            archived prompts too
//   prompts archive NAME [--undo]        versions stay; answers keep pointing at them
//   prompts revert NAME VERSION [--note N]   a new version equal to VERSION
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cmd_prompts.h"
#include "cli/store_json.h"

namespace hearth::cli {

using nlohmann::json;

std::string labels_suffix(const json& labels) {
  if (labels.empty()) return "";
  std::string out = "  [";
  for (std::size_t i = 0; i < labels.size(); ++i) out += (i ? ", " : "") + labels[i].get<std::string>();
  return out + "]";
}

namespace {

struct ManageOptions {
  DatabaseOptions db;
  std::string name, label, note;
  int version = 0;
  bool archived = false;  // list: include archived; archive: --undo
};

json labels_json(const std::vector<store::PromptLabel>& labels) {
  json out = json::object();
  for (const auto& l : labels) out[l.label] = l.version;
  return out;
}

void run_label(const ManageOptions& o) {
  auto s = open_database(o.db, Access::kWrite);
  const auto p = unwrap(s->find_prompt(o.name));
  const auto v = unwrap(s->find_prompt_version(p.id, o.version));
  unwrap(s->set_prompt_label(p.id, o.label, v.id));
  const json out{{"name", p.name},
                 {"label", o.label},
                 {"version", v.version},
                 {"version_id", v.id},
                 {"labels", labels_json(unwrap(s->list_prompt_labels(p.id)))}};
  if (o.db.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("%s@%s -> version %d\n", p.name.c_str(), o.label.c_str(), v.version);
  }
}

void run_unlabel(const ManageOptions& o) {
  auto s = open_database(o.db, Access::kWrite);
  const auto p = unwrap(s->find_prompt(o.name));
  unwrap(s->remove_prompt_label(p.id, o.label));
  if (o.db.json) {
    std::cout << json{{"name", p.name},
                      {"removed", o.label},
                      {"labels", labels_json(unwrap(s->list_prompt_labels(p.id)))}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("%s: label %s removed\n", p.name.c_str(), o.label.c_str());
  }
}

void run_list(const ManageOptions& o) {
  auto s = open_database(o.db, Access::kRead);
  json list = json::array();
  for (const auto& p : unwrap(s->list_prompts(o.archived))) {
    const auto labels = unwrap(s->list_prompt_labels(p.id));
    list.push_back(json{{"name", p.name},
                        {"prompt_id", p.id},
                        {"latest_version", p.latest_version},
                        {"created", iso_time(p.created_ms)},
                        {"archived", p.archived},
                        {"labels", labels_json(labels)}});
  }
  if (o.db.json) {
    std::cout << json{{"prompts", list}}.dump(2) << "\n";
    return;
  }
  if (list.empty()) std::printf("(no prompts)\n");
  for (const auto& j : list) {
    std::printf("%-30s v%-3d %s%s\n", j["name"].get<std::string>().c_str(), j["latest_version"].get<int>(),
                j["created"].get<std::string>().c_str(), j["archived"].get<bool>() ? "  (archived)" : "");
  }
}

void run_archive(const ManageOptions& o) {
  auto s = open_database(o.db, Access::kWrite);
  const auto p = unwrap(s->find_prompt(o.name));
  unwrap(s->set_prompt_archived(p.id, !o.archived));
  if (o.db.json) {
    std::cout << json{{"name", p.name}, {"prompt_id", p.id}, {"archived", !o.archived}}.dump(2) << "\n";
  } else {
    std::printf("%s %s\n", p.name.c_str(), o.archived ? "restored from the archive" : "archived");
  }
}

void run_revert(const ManageOptions& o) {
  auto s = open_database(o.db, Access::kWrite);
  const auto p = unwrap(s->find_prompt(o.name));
  const auto v = unwrap(s->revert_prompt(p.id, o.version, o.note));
  const json out = prompt_version_json(unwrap(s->get_prompt(p.id)), v, unwrap(s->list_prompt_labels(p.id)));
  if (o.db.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("%s@%d: a copy of version %d\n", p.name.c_str(), v.version, o.version);
  }
}

CLI::App* subcommand(CLI::App* prompts, const char* name, const char* help, std::shared_ptr<ManageOptions> o,
                     void (*run)(const ManageOptions&)) {
  CLI::App* cmd = prompts->add_subcommand(name, help);
  add_database_options(cmd, o->db);
  cmd->callback([o, run] { run(*o); });
  return cmd;
}

}  // namespace

void add_prompts_manage_commands(CLI::App* prompts) {
  auto label = std::make_shared<ManageOptions>();
  CLI::App* cmd = subcommand(prompts, "label", "Point a label at a version (moving it)", label, run_label);
  cmd->add_option("NAME", label->name, "Prompt name")->required();
  cmd->add_option("VERSION", label->version, "Version number")->required();
  cmd->add_option("LABEL", label->label, "Label, e.g. production")->required();

  auto unlabel = std::make_shared<ManageOptions>();
  cmd = subcommand(prompts, "unlabel", "Remove a label", unlabel, run_unlabel);
  cmd->add_option("NAME", unlabel->name, "Prompt name")->required();
  cmd->add_option("LABEL", unlabel->label, "Label")->required();

  auto list = std::make_shared<ManageOptions>();
  cmd = subcommand(prompts, "list", "List prompts", list, run_list);
  cmd->add_flag("--archived", list->archived, "Include archived prompts");

  auto archive = std::make_shared<ManageOptions>();
  cmd = subcommand(prompts, "archive", "Archive a prompt (its versions stay)", archive, run_archive);
  cmd->add_option("NAME", archive->name, "Prompt name")->required();
  cmd->add_flag("--undo", archive->archived, "Take it out of the archive");

  auto revert = std::make_shared<ManageOptions>();
  cmd = subcommand(prompts, "revert", "Save a new version equal to an old one", revert, run_revert);
  cmd->add_option("NAME", revert->name, "Prompt name")->required();
  cmd->add_option("VERSION", revert->version, "The version to copy")->required();
  cmd->add_option("--note", revert->note, "Note (default: \"revert to version N\")");
}

}  // namespace hearth::cli
