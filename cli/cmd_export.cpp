// hearth-cli export [--conversation ID] --format json|markdown -o FILE
// hearth-cli import FILE
// The whole database (conversations with their message trees, the prompt
// library with versions and labels, generations, ratings, experiments) or one
// conversation, as store/export_json.cpp's JSON document or as Markdown (one
// conversation's current branch). -o - writes to stdout. import adds a
// document's rows in one transaction, remapping ids already taken.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/store_session.h"

namespace hearth::cli {
namespace {

using nlohmann::json;

struct ExportOptions {
  DatabaseOptions db;
  std::optional<std::int64_t> conversation;
  std::string format, output;
};

void write_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder = fs::absolute(fs::path(path)).parent_path();
  if (!fs::is_directory(folder, ec)) throw Failure{"cannot write " + path + ": no folder " + folder.string(), 1, "io"};
  if (fs::is_directory(path, ec)) throw Failure{path + " is a directory, not a file", 1, "invalid_argument"};
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw Failure{"cannot write " + path, 1, "io"};
}

void run_export(const ExportOptions& o) {
  if (o.format == "markdown" && !o.conversation)
    fail("--format markdown exports one conversation: add --conversation ID");
  auto s = open_database(o.db, Access::kRead);
  std::string text;
  if (o.format == "markdown") {
    text = unwrap(s->export_markdown(*o.conversation));
  } else {
    store::ExportOptions eo;
    eo.conversation_id = o.conversation;
    text = unwrap(s->export_json(eo));
  }
  write_file(o.output, text);
  if (o.output == "-") return;
  if (o.db.json) {
    std::cout << json{{"file", o.output}, {"format", o.format}, {"bytes", text.size()}}.dump() << "\n";
  } else {
    std::fprintf(stderr, "wrote %s (%zu bytes)\n", o.output.c_str(), text.size());
  }
}

struct ImportOptions {
  DatabaseOptions db;
  std::string file;
};

void run_import(const ImportOptions& o) {
  const std::string text = read_text_file(o.file);
  auto s = open_database(o.db, Access::kWrite);
  const store::ImportSummary r = unwrap(s->import_json(text));
  const json out{{"file", o.file},
                 {"prompts", r.prompts},
                 {"prompts_reused", r.prompts_reused},
                 {"prompt_versions", r.prompt_versions},
                 {"conversations", r.conversations},
                 {"messages", r.messages},
                 {"generations", r.generations},
                 {"ratings", r.ratings},
                 {"experiments", r.experiments},
                 {"ids_remapped", r.ids_remapped},
                 {"renamed_prompts", r.renamed_prompts}};
  if (o.db.json) {
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf("imported %d conversations (%d messages), %d prompts (%d versions), %d prompts already here%s\n",
              r.conversations, r.messages, r.prompts, r.prompt_versions, r.prompts_reused,
              r.ids_remapped ? "; ids already taken here were renumbered" : "");
  for (const auto& [from, to] : r.renamed_prompts) {
    std::printf("prompt \"%s\" exists here: imported as \"%s\"\n", from.c_str(), to.c_str());
  }
}

}  // namespace

void add_export_commands(CLI::App& app) {
  auto e = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Export the database or one conversation (JSON or Markdown)");
  cmd->add_option("--conversation", e->conversation, "Only this conversation (and the prompts it uses)");
  cmd->add_option("--format", e->format, "json or markdown")->required()->check(CLI::IsMember({"json", "markdown"}));
  cmd->add_option("-o,--output", e->output, "Output file (- for stdout)")->required();
  add_database_options(cmd, e->db);
  cmd->callback([e] { run_export(*e); });

  auto i = std::make_shared<ImportOptions>();
  cmd = app.add_subcommand("import", "Import an export's JSON (ids remapped where taken)");
  cmd->add_option("FILE", i->file, "The JSON file")->required();
  add_database_options(cmd, i->db);
  cmd->callback([i] { run_import(*i); });
}

}  // namespace hearth::cli
