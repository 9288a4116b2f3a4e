// Import of a "hearth-export" document (export_json.cpp has the format), in
// one transaction. Ids: a table whose imported ids are all free here keeps
// them (so export -> import into an empty database -> export gives the same
// document); otherwise that table's rows get new ids, and every reference to
// them (parents, leaves, pins, generations, labels, experiments) follows.
#include <algorithm>
#include <map>
#include <string>

#include "store/export_format.h"
#include "store/json_text.h"
#include "store/store_impl.h"

namespace hearth::store {

namespace {

using nlohmann::json;

// The document's nesting is at most 7 deep; anything far deeper is hostile
// (and would cost stack in the recursive JSON destructor).
constexpr int kMaxDepth = 64;

std::string at(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

class Importer {
 public:
  Importer(Store::Impl& impl, const json& doc) : impl_(impl), doc_(doc) {}

  StoreResult<ImportSummary> run() {
    STORE_TRY(plan());
    for (std::size_t i = 0; i < doc_["prompts"].size(); ++i)
      STORE_TRY(add_prompt(doc_["prompts"][i], at("prompts", i)));
    const json& conversations = doc_["conversations"];
    for (std::size_t i = 0; i < conversations.size(); ++i) {
      STORE_TRY(add_conversation(conversations[i], at("conversations", i)));
    }
    STORE_TRY(add_experiments());
    return summary_;
  }

 private:
  // True when any of `ids` is already used in `table` (a cheap range test:
  // remapping when not strictly needed is harmless).
  StoreResult<bool> must_remap(const std::string& table, const std::vector<Id>& ids) {
    if (ids.empty()) return false;
    const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_.db.prepare("SELECT count(*) FROM " + table + " WHERE id BETWEEN ? AND ?"));
    stmt.bind(1, *lo).bind(2, *hi);
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    const bool taken = row && stmt.int64(0) > 0;
    summary_.ids_remapped = summary_.ids_remapped || taken;
    return taken;
  }

  // The "id" of each object in `rows`, checked.
  static void collect_ids(const json& rows, const std::string& path, std::vector<Id>& ids) {
    for (std::size_t i = 0; i < rows.size(); ++i) ids.push_back(get_int(rows[i], "id", at(path, i)));
  }

  StoreResult<void> plan() {
    std::vector<Id> ids;
    const json& prompts = get_array(doc_, "prompts", "document");
    collect_ids(prompts, "prompts", ids);
    STORE_ASSIGN_OR_RETURN(remap_prompts_, must_remap("prompts", ids));
    ids.clear();
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const std::string path = at("prompts", i);
      collect_ids(get_array(prompts[i], "versions", path), path + ".versions", ids);
    }
    STORE_ASSIGN_OR_RETURN(remap_versions_, must_remap("prompt_versions", ids));
    ids.clear();
    const json& conversations = get_array(doc_, "conversations", "document");
    collect_ids(conversations, "conversations", ids);
    STORE_ASSIGN_OR_RETURN(remap_conversations_, must_remap("conversations", ids));
    ids.clear();
    for (std::size_t i = 0; i < conversations.size(); ++i) {
      const std::string path = at("conversations", i);
      collect_ids(get_array(conversations[i], "messages", path), path + ".messages", ids);
    }
    STORE_ASSIGN_OR_RETURN(remap_messages_, must_remap("messages", ids));
    return {};
  }

  // The id to insert with: the document's, or NULL (a new one) when remapping.
  static std::optional<Id> keep(bool remap, Id id) { return remap ? std::nullopt : std::optional<Id>(id); }

  static Id mapped(const std::map<Id, Id>& map, std::optional<Id> id, const std::string& what) {
    const auto it = map.find(*id);
    if (it == map.end()) throw BadDocument{what + " " + std::to_string(*id) + " is not in the document"};
    return it->second;
  }
  static std::optional<Id> mapped_optional(const std::map<Id, Id>& map, std::optional<Id> id, const std::string& what) {
    return id ? std::optional<Id>(mapped(map, id, what)) : std::nullopt;
  }
  static void remember(std::map<Id, Id>& map, Id old_id, Id new_id, const std::string& path) {
    if (!map.emplace(old_id, new_id).second) throw BadDocument{path + ".id: " + std::to_string(old_id) + " twice"};
  }

  StoreResult<std::string> free_name(const std::string& name) {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_.db.prepare("SELECT 1 FROM prompts WHERE name = ?"));
    std::string candidate = name;
    for (int n = 1;; ++n) {
      stmt.reset();
      stmt.bind(1, std::string_view(candidate));
      STORE_ASSIGN_OR_RETURN(const bool taken, stmt.step());
      if (!taken) return candidate;
      candidate = name + (n == 1 ? " (imported)" : " (imported " + std::to_string(n) + ")");
    }
  }

  // The document's version as it would be stored (numbers and dates aside).
  static PromptVersion version_in_document(const json& v, const std::string& path) {
    PromptVersion out;
    out.version = static_cast<int>(get_int(v, "version", path));
    out.text = get_string(v, "text", path);
    out.note = get_string(v, "note", path);
    const json& c = get_object(v, "config", path);
    const std::string cpath = path + ".config";
    out.config.temperature = get_optional_real(c, "temperature", cpath);
    out.config.top_p = get_optional_real(c, "top_p", cpath);
    out.config.top_k = get_optional_int(c, "top_k", cpath);
    out.config.min_p = get_optional_real(c, "min_p", cpath);
    out.config.max_tokens = get_optional_int(c, "max_tokens", cpath);
    out.config.stop = stop_in_config(c, cpath);
    return out;
  }

  static std::optional<std::vector<std::string>> stop_in_config(const json& c, const std::string& cpath) {
    if (!c.contains("stop") || c["stop"].is_null()) return std::nullopt;
    if (!c["stop"].is_array()) throw BadDocument{cpath + ".stop: expected an array or null"};
    std::vector<std::string> stop;
    for (const json& s : c["stop"]) {
      if (!s.is_string()) throw BadDocument{cpath + ".stop: expected strings"};
      stop.push_back(s.get<std::string>());
    }
    return stop;
  }

  // The prompt here named like the document's when every version the
  // document has is here with the same number, text, note and configuration
  // (the same file imported again, or a copy of this library): it is reused
  // instead of added under another name. nullopt otherwise.
  // The names an earlier import gave it count too ("NAME (imported)", ...).
  StoreResult<std::optional<Id>> same_prompt_here(const json& p, const std::string& path) {
    const std::string name = get_string(p, "name", path);
    STORE_ASSIGN_OR_RETURN(sql::Statement find, impl_.db.prepare("SELECT id FROM prompts WHERE name = ?"));
    for (int n = 0;; ++n) {
      const std::string candidate = n == 0   ? name
                                    : n == 1 ? name + " (imported)"
                                             : name + " (imported " + std::to_string(n) + ")";
      find.reset();
      find.bind(1, std::string_view(candidate));
      STORE_ASSIGN_OR_RETURN(const bool found, find.step());
      if (!found) return std::optional<Id>();  // free_name() stops here too
      STORE_ASSIGN_OR_RETURN(const bool same, same_versions(find.int64(0), p, path));
      if (same) return std::optional<Id>(find.int64(0));
    }
  }

  StoreResult<bool> same_versions(Id here, const json& p, const std::string& path) {
    const json& versions = get_array(p, "versions", path);
    STORE_ASSIGN_OR_RETURN(sql::Statement load, impl_.db.prepare("SELECT " + std::string(kVersionColumns) +
                                                                 " FROM prompt_versions WHERE prompt_id = ? AND "
                                                                 "version = ?"));
    for (std::size_t i = 0; i < versions.size(); ++i) {
      const PromptVersion theirs = version_in_document(versions[i], at(path + ".versions", i));
      load.reset();
      load.bind(1, here).bind(2, std::int64_t{theirs.version});
      STORE_ASSIGN_OR_RETURN(const bool row, load.step());
      if (!row) return false;
      const PromptVersion ours = read_prompt_version(load);
      if (ours.text != theirs.text || ours.note != theirs.note || !(ours.config == theirs.config)) return false;
    }
    return true;
  }

  // A prompt already here (same_prompt_here): the document's ids map to it
  // and its versions; its labels here stay, the document's new ones are added.
  StoreResult<void> reuse_prompt(Id here, const json& p, const std::string& path) {
    remember(prompts_, get_int(p, "id", path), here, path);
    ++summary_.prompts_reused;
    const json& versions = get_array(p, "versions", path);
    STORE_ASSIGN_OR_RETURN(sql::Statement load,
                           impl_.db.prepare("SELECT id FROM prompt_versions WHERE prompt_id = ? AND version = ?"));
    for (std::size_t i = 0; i < versions.size(); ++i) {
      const std::string vpath = at(path + ".versions", i);
      load.reset();
      load.bind(1, here).bind(2, get_int(versions[i], "version", vpath));
      STORE_ASSIGN_OR_RETURN(const bool row, load.step());
      if (!row) throw BadDocument{vpath + ": version vanished during import"};
      remember(versions_, get_int(versions[i], "id", vpath), load.int64(0), vpath);
    }
    const json& labels = get_array(p, "labels", path);
    for (std::size_t i = 0; i < labels.size(); ++i) {
      STORE_TRY(add_label(here, labels[i], at(path + ".labels", i), /*keep_existing=*/true));
    }
    return {};
  }

  StoreResult<void> add_prompt(const json& p, const std::string& path) {
    STORE_ASSIGN_OR_RETURN(const std::optional<Id> same, same_prompt_here(p, path));
    if (same) return reuse_prompt(*same, p, path);
    const std::string name = get_string(p, "name", path);
    STORE_ASSIGN_OR_RETURN(const std::string given, free_name(name));
    if (given != name) summary_.renamed_prompts[name] = given;
    STORE_ASSIGN_OR_RETURN(
        sql::Statement stmt,
        impl_.db.prepare("INSERT INTO prompts (id, name, created_ms, archived) VALUES (?, ?, ?, ?)"));
    stmt.bind(1, keep(remap_prompts_, get_int(p, "id", path))).bind(2, std::string_view(given));
    stmt.bind(3, get_int(p, "created_ms", path)).bind(4, std::int64_t{get_bool(p, "archived", path) ? 1 : 0});
    STORE_TRY(stmt.run());
    const Id id = impl_.db.last_insert_rowid();
    remember(prompts_, get_int(p, "id", path), id, path);
    ++summary_.prompts;
    const json& versions = get_array(p, "versions", path);
    for (std::size_t i = 0; i < versions.size(); ++i)
      STORE_TRY(add_version(id, versions[i], at(path + ".versions", i)));
    const json& labels = get_array(p, "labels", path);
    for (std::size_t i = 0; i < labels.size(); ++i) STORE_TRY(add_label(id, labels[i], at(path + ".labels", i)));
    return {};
  }

  StoreResult<void> add_version(Id prompt_id, const json& v, const std::string& path) {
    const json& c = get_object(v, "config", path);
    const std::string cpath = path + ".config";
    STORE_ASSIGN_OR_RETURN(
        sql::Statement stmt,
        impl_.db.prepare("INSERT INTO prompt_versions (id, prompt_id, version, text, note, created_ms, temperature, "
                         "top_p, top_k, min_p, max_tokens, stop_json, source_version_id) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    stmt.bind(1, keep(remap_versions_, get_int(v, "id", path))).bind(2, prompt_id).bind(3, get_int(v, "version", path));
    stmt.bind(4, std::string_view(get_string(v, "text", path))).bind(5, std::string_view(get_string(v, "note", path)));
    stmt.bind(6, get_int(v, "created_ms", path)).bind(7, get_optional_real(c, "temperature", cpath));
    stmt.bind(8, get_optional_real(c, "top_p", cpath)).bind(9, get_optional_int(c, "top_k", cpath));
    stmt.bind(10, get_optional_real(c, "min_p", cpath)).bind(11, get_optional_int(c, "max_tokens", cpath));
    if (const auto stop = stop_in_config(c, cpath)) {
      stmt.bind(12, std::string_view(strings_to_json(*stop)));
    } else {
      stmt.bind_null(12);
    }
    stmt.bind(13, mapped_optional(versions_, get_optional_int(v, "source_version_id", path), path + ": version"));
    STORE_TRY(stmt.run());
    remember(versions_, get_int(v, "id", path), impl_.db.last_insert_rowid(), path);
    ++summary_.prompt_versions;
    return {};
  }

  // keep_existing: a label this prompt already has here stays where it points.
  StoreResult<void> add_label(Id prompt_id, const json& l, const std::string& path, bool keep_existing = false) {
    STORE_ASSIGN_OR_RETURN(
        sql::Statement stmt,
        impl_.db.prepare(keep_existing ? "INSERT INTO prompt_labels (prompt_id, label, version_id, "
                                         "updated_ms) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING"
                                       : "INSERT INTO prompt_labels (prompt_id, label, version_id, "
                                         "updated_ms) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (prompt_id, "
                                         "label) DO UPDATE SET version_id = excluded.version_id, "
                                         "updated_ms = excluded.updated_ms"));
    stmt.bind(1, prompt_id).bind(2, std::string_view(get_string(l, "label", path)));
    stmt.bind(3, mapped(versions_, get_int(l, "version_id", path), path + ": version"));
    stmt.bind(4, get_int(l, "updated_ms", path));
    return stmt.run();
  }

  StoreResult<void> add_conversation(const json& c, const std::string& path) {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_.db.prepare("INSERT INTO conversations (id, title, created_ms, updated_ms, archived, "
                                            "deleted_ms, prompt_version_id, label_prompt_id, prompt_label) "
                                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    stmt.bind(1, keep(remap_conversations_, get_int(c, "id", path)));
    stmt.bind(2, std::string_view(get_string(c, "title", path))).bind(3, get_int(c, "created_ms", path));
    stmt.bind(4, get_int(c, "updated_ms", path)).bind(5, std::int64_t{get_bool(c, "archived", path) ? 1 : 0});
    stmt.bind(6, get_optional_int(c, "deleted_ms", path));
    stmt.bind(7, mapped_optional(versions_, get_optional_int(c, "prompt_version_id", path), path + ": version"));
    stmt.bind(8, mapped_optional(prompts_, get_optional_int(c, "label_prompt_id", path), path + ": prompt"));
    const auto label = get_optional_string(c, "prompt_label", path);
    if (label) {
      stmt.bind(9, std::string_view(*label));
    } else {
      stmt.bind_null(9);
    }
    STORE_TRY(stmt.run());
    const Id id = impl_.db.last_insert_rowid();
    remember(conversations_, get_int(c, "id", path), id, path);
    ++summary_.conversations;
    STORE_TRY(add_settings(id, c, path));
    const json& messages = get_array(c, "messages", path);
    for (std::size_t i = 0; i < messages.size(); ++i)
      STORE_TRY(add_message(id, messages[i], at(path + ".messages", i)));
    if (const auto leaf = get_optional_int(c, "current_leaf_id", path)) {
      STORE_ASSIGN_OR_RETURN(sql::Statement set,
                             impl_.db.prepare("UPDATE conversations SET current_leaf_id = ? WHERE id = ?"));
      set.bind(1, mapped(messages_, leaf, path + ".current_leaf_id: message")).bind(2, id);
      STORE_TRY(set.run());
    }
    return {};
  }

  // The conversation's own generation settings ("settings"; absent in files from before schema 4).
  StoreResult<void> add_settings(Id conversation_id, const json& c, const std::string& path) {
    const auto found = c.find("settings");
    if (found == c.end() || found->is_null()) return {};
    const ConversationSettings settings = conversation_settings_from_json(*found, path + ".settings");
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_.db.prepare("INSERT INTO conversation_settings (conversation_id, " +
                                            std::string(kConversationSettingsColumns) +
                                            ", updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    stmt.bind(1, conversation_id);
    bind_conversation_settings(stmt, 2, settings);
    stmt.bind(13, get_int(*found, "updated_ms", path + ".settings"));
    return stmt.run();
  }

  StoreResult<void> add_message(Id conversation_id, const json& m, const std::string& path) {
    const std::string role = get_string(m, "role", path);
    const std::string state = get_string(m, "state", path);
    if (role != "system" && role != "user" && role != "assistant")
      throw BadDocument{path + ".role: unknown role " + role};
    if (state != "complete" && state != "streaming" && state != "interrupted") {
      throw BadDocument{path + ".state: unknown state " + state};
    }
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_.db.prepare("INSERT INTO messages (id, conversation_id, parent_id, role, content, "
                                            "state, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    stmt.bind(1, keep(remap_messages_, get_int(m, "id", path))).bind(2, conversation_id);
    const auto parent = mapped_optional(messages_, get_optional_int(m, "parent_id", path), path + ": parent message");
    if (parent && message_conversation_[*parent] != conversation_id) {
      throw BadDocument{path + ".parent_id: a message of another conversation"};
    }
    stmt.bind(3, parent).bind(4, std::string_view(role)).bind(5, std::string_view(get_string(m, "content", path)));
    stmt.bind(6, std::string_view(state))
        .bind(7, get_int(m, "created_ms", path))
        .bind(8, get_int(m, "updated_ms", path));
    STORE_TRY(stmt.run());
    const Id id = impl_.db.last_insert_rowid();
    remember(messages_, get_int(m, "id", path), id, path);
    message_conversation_[id] = conversation_id;
    ++summary_.messages;
    if (m.contains("generation") && !m["generation"].is_null()) {
      GenerationRecord g = generation_from_json(m["generation"], path + ".generation");
      g.message_id = id;
      g.prompt_version_id = mapped_optional(versions_, g.prompt_version_id, path + ".generation: version");
      STORE_TRY(insert_generation(impl_.db, g));
      ++summary_.generations;
    }
    if (m.contains("rating") && !m["rating"].is_null()) STORE_TRY(add_rating(id, m["rating"], path + ".rating"));
    return {};
  }

  StoreResult<void> add_rating(Id message_id, const json& r, const std::string& path) {
    const std::string value = get_string(r, "value", path);
    if (value != "up" && value != "down") throw BadDocument{path + ".value: expected \"up\" or \"down\""};
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_.db.prepare("INSERT INTO ratings (message_id, rating, updated_ms) VALUES (?, ?, ?)"));
    stmt.bind(1, message_id).bind(2, std::int64_t{value == "up" ? 1 : -1}).bind(3, get_int(r, "updated_ms", path));
    STORE_TRY(stmt.run());
    ++summary_.ratings;
    return {};
  }

  StoreResult<void> add_experiments() {
    if (!doc_.contains("experiments")) return {};
    const json& experiments = get_array(doc_, "experiments", "document");
    std::vector<Id> ids;
    collect_ids(experiments, "experiments", ids);
    STORE_ASSIGN_OR_RETURN(const bool remap, must_remap("experiments", ids));
    for (std::size_t i = 0; i < experiments.size(); ++i) {
      const json& e = experiments[i];
      const std::string path = at("experiments", i);
      STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                             impl_.db.prepare("INSERT INTO experiments (id, name, version_a_id, version_b_id, "
                                              "created_ms, settings_json) VALUES (?, ?, ?, ?, ?, ?)"));
      stmt.bind(1, keep(remap, get_int(e, "id", path))).bind(2, std::string_view(get_string(e, "name", path)));
      stmt.bind(3, mapped(versions_, get_int(e, "version_a_id", path), path + ": version"));
      stmt.bind(4, mapped(versions_, get_int(e, "version_b_id", path), path + ": version"));
      stmt.bind(5, get_int(e, "created_ms", path)).bind(6, std::string_view(get_string(e, "settings_json", path)));
      STORE_TRY(stmt.run());
      const Id id = impl_.db.last_insert_rowid();
      ++summary_.experiments;
      const json& results = get_array(e, "results", path);
      for (std::size_t k = 0; k < results.size(); ++k) STORE_TRY(add_result(id, results[k], at(path + ".results", k)));
    }
    return {};
  }

  // Result rows always get new ids: nothing refers to them.
  StoreResult<void> add_result(Id experiment_id, const json& r, const std::string& path) {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_.db.prepare("INSERT INTO experiment_results (experiment_id, source_message_id, "
                                            "version_id, answer_message_id) VALUES (?, ?, ?, ?)"));
    stmt.bind(1, experiment_id).bind(2, mapped(messages_, get_int(r, "source_message_id", path), path + ": message"));
    stmt.bind(3, mapped(versions_, get_int(r, "version_id", path), path + ": version"));
    stmt.bind(4, mapped_optional(messages_, get_optional_int(r, "answer_message_id", path), path + ": message"));
    return stmt.run();
  }

  Store::Impl& impl_;
  const json& doc_;
  ImportSummary summary_;
  bool remap_prompts_ = false;
  bool remap_versions_ = false;
  bool remap_conversations_ = false;
  bool remap_messages_ = false;
  std::map<Id, Id> prompts_, versions_, conversations_, messages_;  // document id -> id here
  std::map<Id, Id> message_conversation_;                           // id here -> its conversation
};

StoreResult<json> parse_document(std::string_view text) {
  bool too_deep = false;
  const json::parser_callback_t cap = [&too_deep](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  json doc = json::parse(text, cap, /*allow_exceptions=*/false);
  if (too_deep) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "the import is nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  if (doc.is_discarded()) return make_store_error(StoreErrorCode::kInvalidArgument, "the import is not valid JSON");
  if (!doc.is_object() || doc.value("format", "") != kExportFormat) {
    return make_store_error(
        StoreErrorCode::kInvalidArgument,
        std::string("the import is not a Hearth export (no \"format\": \"") + kExportFormat + "\")");
  }
  if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"].get<int>() > kExportVersion) {
    return make_store_error(StoreErrorCode::kUnsupported, "the import's format version is newer than this program's (" +
                                                              std::to_string(kExportVersion) + ")");
  }
  return doc;
}

}  // namespace

StoreResult<ImportSummary> Store::import_json(std::string_view text) {
  STORE_ASSIGN_OR_RETURN(const json doc, parse_document(text));
  return impl_->write("importing", [&]() -> StoreResult<ImportSummary> {
    try {
      return Importer(*impl_, doc).run();
    } catch (const BadDocument& bad) {
      return make_store_error(StoreErrorCode::kInvalidArgument, "the import is malformed: " + bad.message);
    } catch (const json::exception& e) {
      return make_store_error(StoreErrorCode::kInvalidArgument, std::string("the import is malformed: ") + e.what());
    }
  });
}

}  // namespace hearth::store
