// Export of the store as JSON (everything, or one conversation with the
// prompts it refers to) and of one conversation as Markdown.
//
// Document format "hearth-export", version 1 (do not rename fields; a change
// bumps "version" and import_json keeps reading version 1):
//   {"format": "hearth-export", "version": 1,
//    "prompts": [{"id", "name", "created_ms", "archived",
//                 "versions": [{"id", "version", "text", "note", "created_ms", "source_version_id",
//                               "config": {"temperature", "top_p", "top_k", "min_p", "max_tokens", "stop"}}],
//                 "labels": [{"label", "version_id", "updated_ms"}]}],
//    "conversations": [{"id", "title", "created_ms", "updated_ms", "archived", "deleted_ms", "current_leaf_id",
//                       "prompt_version_id", "label_prompt_id", "prompt_label",
//                       "settings": {"sampling": {...}, "max_tokens", "system_prompt", "updated_ms"} | null
//                                   (the conversation's own generation settings; absent in older files),
//                       "messages": [{"id", "parent_id", "role", "content", "state", "created_ms", "updated_ms",
//                                     "rating": {"value": "up"|"down", "updated_ms"} | null,
//                                     "generation": {GenerationRecord's fields but message_id;
//                                                    "sampling": {...}, "variables": {...}, "stop": [...]} | null}]}],
//    "experiments": [{"id", "name", "version_a_id", "version_b_id", "created_ms", "settings_json",
//                     "results": [{"id", "source_message_id", "version_id", "answer_message_id"}]}]}
// Unset values are null; rows are in id order (versions in version order,
// labels by name), so exporting the same database twice gives the same text.
#include <set>
#include <string>

#include "store/export_format.h"
#include "store/store_impl.h"

namespace hearth::store {

namespace {

using nlohmann::json;

template <class T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json config_json(const PromptConfig& c) {
  return json{{"temperature", optional_json(c.temperature)},
              {"top_p", optional_json(c.top_p)},
              {"top_k", optional_json(c.top_k)},
              {"min_p", optional_json(c.min_p)},
              {"max_tokens", optional_json(c.max_tokens)},
              {"stop", optional_json(c.stop)}};
}

// Runs a query and hands each row to `each`.
template <class F>
StoreResult<void> for_rows(sql::Db& db, const std::string& sql, std::optional<Id> param, F&& each) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt, db.prepare(sql));
  if (param) stmt.bind(1, *param);
  for (;;) {
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    if (!row) return {};
    each(stmt);
  }
}

StoreResult<json> prompt_json(sql::Db& db, const Prompt& p) {
  json versions = json::array();
  STORE_TRY(for_rows(db,
                     "SELECT " + std::string(kVersionColumns) +
                         " FROM prompt_versions WHERE prompt_id = ? "
                         "ORDER BY version",
                     p.id, [&](const sql::Statement& s) {
                       const PromptVersion v = read_prompt_version(s);
                       versions.push_back(json{{"id", v.id},
                                               {"version", v.version},
                                               {"text", v.text},
                                               {"note", v.note},
                                               {"created_ms", v.created_ms},
                                               {"source_version_id", optional_json(v.source_version_id)},
                                               {"config", config_json(v.config)}});
                     }));
  json labels = json::array();
  STORE_TRY(
      for_rows(db, "SELECT label, version_id, updated_ms FROM prompt_labels WHERE prompt_id = ? ORDER BY label", p.id,
               [&](const sql::Statement& s) {
                 labels.push_back(json{{"label", s.text(0)}, {"version_id", s.int64(1)}, {"updated_ms", s.int64(2)}});
               }));
  return json{{"id", p.id},           {"name", p.name},  {"created_ms", p.created_ms}, {"archived", p.archived},
              {"versions", versions}, {"labels", labels}};
}

StoreResult<json> messages_json(sql::Db& db, Id conversation_id) {
  json messages = json::array();
  std::string columns;
  for (const std::string_view c : {"m.id", "m.conversation_id", "m.parent_id", "m.role", "m.content", "m.state",
                                   "m.created_ms", "m.updated_ms", "r.rating", "r.updated_ms"}) {
    columns += std::string(columns.empty() ? "" : ", ") + std::string(c);
  }
  const std::string sql = "SELECT " + columns + ", " + generation_columns("g.") +
                          " FROM messages m LEFT JOIN ratings r ON r.message_id = m.id"
                          " LEFT JOIN generations g ON g.message_id = m.id WHERE m.conversation_id = ? ORDER BY m.id";
  STORE_TRY(for_rows(db, sql, conversation_id, [&](const sql::Statement& s) {
    const Message m = read_message(s);
    json rating = nullptr;
    if (!s.is_null(8)) rating = json{{"value", s.int64(8) > 0 ? "up" : "down"}, {"updated_ms", s.int64(9)}};
    json generation = s.is_null(10) ? json(nullptr) : generation_to_json(read_generation(s, 10));
    messages.push_back(json{{"id", m.id},
                            {"parent_id", optional_json(m.parent_id)},
                            {"role", to_string(m.role)},
                            {"content", m.content},
                            {"state", to_string(m.state)},
                            {"created_ms", m.created_ms},
                            {"updated_ms", m.updated_ms},
                            {"rating", rating},
                            {"generation", generation}});
  }));
  return messages;
}

json conversation_json(const Conversation& c) {
  return json{{"id", c.id},
              {"title", c.title},
              {"created_ms", c.created_ms},
              {"updated_ms", c.updated_ms},
              {"archived", c.archived},
              {"deleted_ms", optional_json(c.deleted_ms)},
              {"current_leaf_id", optional_json(c.current_leaf_id)},
              {"prompt_version_id", optional_json(c.prompt_version_id)},
              {"label_prompt_id", optional_json(c.label_prompt_id)},
              {"prompt_label", c.prompt_label.empty() ? json(nullptr) : json(c.prompt_label)}};
}

// The conversation's own generation settings (schema 4), or null.
StoreResult<json> settings_json(sql::Db& db, Id conversation_id) {
  json out = nullptr;
  STORE_TRY(for_rows(db,
                     "SELECT " + std::string(kConversationSettingsColumns) +
                         ", updated_ms FROM conversation_settings WHERE conversation_id = ?",
                     conversation_id, [&](const sql::Statement& s) {
                       out = conversation_settings_to_json(read_conversation_settings(s), s.int64(11));
                     }));
  return out;
}

StoreResult<json> experiments_json(sql::Db& db) {
  json out = json::array();
  STORE_TRY(for_rows(db,
                     "SELECT id, name, version_a_id, version_b_id, created_ms, settings_json FROM experiments "
                     "ORDER BY id",
                     std::nullopt, [&](const sql::Statement& s) {
                       out.push_back(json{{"id", s.int64(0)},
                                          {"name", s.text(1)},
                                          {"version_a_id", s.int64(2)},
                                          {"version_b_id", s.int64(3)},
                                          {"created_ms", s.int64(4)},
                                          {"settings_json", s.text(5)},
                                          {"results", json::array()}});
                     }));
  for (json& e : out) {
    STORE_TRY(for_rows(db,
                       "SELECT id, source_message_id, version_id, answer_message_id FROM experiment_results "
                       "WHERE experiment_id = ? ORDER BY id",
                       e["id"].get<Id>(), [&](const sql::Statement& s) {
                         e["results"].push_back(json{{"id", s.int64(0)},
                                                     {"source_message_id", s.int64(1)},
                                                     {"version_id", s.int64(2)},
                                                     {"answer_message_id", optional_json(s.optional_int64(3))}});
                       }));
  }
  return out;
}

// The prompts one conversation refers to: its pins and its answers' versions.
StoreResult<std::set<Id>> prompts_of(sql::Db& db, Id conversation_id) {
  std::set<Id> ids;
  STORE_TRY(for_rows(db,
                     "SELECT v.prompt_id FROM conversations c JOIN prompt_versions v ON v.id = c.prompt_version_id "
                     "WHERE c.id = ?1 UNION SELECT label_prompt_id FROM conversations WHERE id = ?1 AND "
                     "label_prompt_id IS NOT NULL UNION SELECT v.prompt_id FROM generations g JOIN messages m ON "
                     "m.id = g.message_id JOIN prompt_versions v ON v.id = g.prompt_version_id WHERE "
                     "m.conversation_id = ?1",
                     conversation_id, [&](const sql::Statement& s) { ids.insert(s.int64(0)); }));
  return ids;
}

StoreResult<json> export_document(sql::Db& db, const ExportOptions& options) {
  json doc{{"format", kExportFormat}, {"version", kExportVersion}};
  std::vector<Conversation> conversations;
  std::string where = options.conversation_id ? " WHERE id = ?" : "";
  STORE_TRY(for_rows(db, "SELECT " + std::string(kConversationColumns) + " FROM conversations" + where + " ORDER BY id",
                     options.conversation_id,
                     [&](const sql::Statement& s) { conversations.push_back(read_conversation(s)); }));
  if (options.conversation_id && conversations.empty()) {
    return make_store_error(StoreErrorCode::kNotFound, "no conversation " + std::to_string(*options.conversation_id));
  }
  std::optional<std::set<Id>> wanted;
  if (options.conversation_id) {
    STORE_ASSIGN_OR_RETURN(wanted, prompts_of(db, *options.conversation_id));
  }
  std::vector<Prompt> prompts;
  STORE_TRY(for_rows(db, "SELECT " + std::string(kPromptColumns) + " FROM prompts ORDER BY id", std::nullopt,
                     [&](const sql::Statement& s) {
                       Prompt p = read_prompt(s);
                       if (!wanted || wanted->contains(p.id)) prompts.push_back(std::move(p));
                     }));
  doc["prompts"] = json::array();
  for (const Prompt& p : prompts) {
    STORE_ASSIGN_OR_RETURN(json pj, prompt_json(db, p));
    doc["prompts"].push_back(std::move(pj));
  }
  doc["conversations"] = json::array();
  for (const Conversation& c : conversations) {
    json cj = conversation_json(c);
    STORE_ASSIGN_OR_RETURN(cj["settings"], settings_json(db, c.id));
    STORE_ASSIGN_OR_RETURN(cj["messages"], messages_json(db, c.id));
    doc["conversations"].push_back(std::move(cj));
  }
  if (options.conversation_id) {
    doc["experiments"] = json::array();
  } else {
    STORE_ASSIGN_OR_RETURN(doc["experiments"], experiments_json(db));
  }
  return doc;
}

}  // namespace

StoreResult<std::string> Store::export_json(const ExportOptions& options) {
  const std::string what = options.conversation_id
                               ? "exporting conversation " + std::to_string(*options.conversation_id)
                               : std::string("exporting the database");
  return impl_->read(what, [&]() -> StoreResult<std::string> {
    // One read transaction: the document is one consistent snapshot.
    STORE_TRY(impl_->db.exec("BEGIN"));
    auto doc = export_document(impl_->db, options);
    (void)impl_->db.exec("COMMIT");  // a read transaction: nothing to lose
    if (!doc) return std::move(doc).error();
    return doc->dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  });
}

}  // namespace hearth::store
