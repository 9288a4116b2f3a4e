// Prompts and their immutable versions (the schema's triggers refuse UPDATE and
// DELETE of a version, so immutability holds even for SQL written elsewhere).
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

constexpr std::string_view kVersionColumns = "id, prompt_id, version, text, note, created_ms";

StoreResult<PromptVersion> load_version(sql::Db& db, Id id) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                         db.prepare("SELECT " + std::string(kVersionColumns) + " FROM prompt_versions WHERE id = ?"));
  stmt.bind(1, id);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) return make_store_error(StoreErrorCode::kNotFound, "no prompt version with id " + std::to_string(id));
  return read_prompt_version(stmt);
}

}  // namespace

StoreResult<Id> Store::create_prompt(std::string_view name) {
  return impl_->write("creating a prompt", [&]() -> StoreResult<Id> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("INSERT INTO prompts (name, created_ms) VALUES (?, ?)"));
    stmt.bind(1, name).bind(2, impl_->now());
    STORE_TRY(stmt.run());
    return impl_->db.last_insert_rowid();
  });
}

StoreResult<std::vector<Prompt>> Store::list_prompts() {
  return impl_->read("listing prompts", [&]() -> StoreResult<std::vector<Prompt>> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("SELECT id, name, created_ms FROM prompts ORDER BY name, id"));
    std::vector<Prompt> out;
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) return out;
      out.push_back(Prompt{stmt.int64(0), stmt.text(1), stmt.int64(2)});
    }
  });
}

StoreResult<PromptVersion> Store::add_prompt_version(Id prompt_id, std::string_view text, std::string_view note) {
  return impl_->write("saving a version of prompt " + std::to_string(prompt_id), [&]() -> StoreResult<PromptVersion> {
    STORE_ASSIGN_OR_RETURN(sql::Statement exists, impl_->db.prepare("SELECT 1 FROM prompts WHERE id = ?"));
    exists.bind(1, prompt_id);
    STORE_ASSIGN_OR_RETURN(const bool found, exists.step());
    if (!found) return make_store_error(StoreErrorCode::kNotFound, "no prompt with id " + std::to_string(prompt_id));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("INSERT INTO prompt_versions (prompt_id, version, text, note, created_ms) "
                                             "SELECT ?1, coalesce(max(version), 0) + 1, ?2, ?3, ?4 "
                                             "FROM prompt_versions WHERE prompt_id = ?1"));
    stmt.bind(1, prompt_id).bind(2, text).bind(3, note).bind(4, impl_->now());
    STORE_TRY(stmt.run());
    return load_version(impl_->db, impl_->db.last_insert_rowid());
  });
}

StoreResult<std::vector<PromptVersion>> Store::list_prompt_versions(Id prompt_id) {
  return impl_->read(
      "listing versions of prompt " + std::to_string(prompt_id), [&]() -> StoreResult<std::vector<PromptVersion>> {
        STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare("SELECT " + std::string(kVersionColumns) +
                                                                      " FROM prompt_versions WHERE prompt_id = ? "
                                                                      "ORDER BY version"));
        stmt.bind(1, prompt_id);
        std::vector<PromptVersion> out;
        for (;;) {
          STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
          if (!row) return out;
          out.push_back(read_prompt_version(stmt));
        }
      });
}

StoreResult<PromptVersion> Store::get_prompt_version(Id id) {
  return impl_->read("reading prompt version " + std::to_string(id), [&] { return load_version(impl_->db, id); });
}

}  // namespace hearth::store
