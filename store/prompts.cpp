// Prompts and their immutable versions (the schema's triggers refuse UPDATE and
// DELETE of a version, so immutability holds even for SQL written elsewhere).
// Labels are in prompt_labels.cpp.
#include <string>

#include "store/json_text.h"
#include "store/store_impl.h"

namespace hearth::store {

namespace {

std::string prompt_label_of(Id id) {
  return "prompt " + std::to_string(id);
}

StoreResult<void> check_prompt_name(std::string_view name) {
  if (name.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return make_store_error(StoreErrorCode::kInvalidArgument, "a prompt name cannot be empty");
  }
  if (name.find('@') != std::string_view::npos) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "prompt name \"" + std::string(name) + "\" contains '@' (NAME@VERSION names a version)");
  }
  return {};
}

StoreResult<Id> insert_prompt(Store::Impl& impl, std::string_view name) {
  STORE_TRY(check_prompt_name(name));
  STORE_ASSIGN_OR_RETURN(sql::Statement taken, impl.db.prepare("SELECT 1 FROM prompts WHERE name = ?"));
  taken.bind(1, name);
  STORE_ASSIGN_OR_RETURN(const bool found, taken.step());
  if (found) {
    return make_store_error(StoreErrorCode::kInvalidArgument, "a prompt named \"" + std::string(name) + "\" exists");
  }
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl.db.prepare("INSERT INTO prompts (name, created_ms) VALUES (?, ?)"));
  stmt.bind(1, name).bind(2, impl.now());
  STORE_TRY(stmt.run());
  return impl.db.last_insert_rowid();
}

// Appends the next version; the schema's trigger moves `latest` to it.
StoreResult<PromptVersion> insert_version(Store::Impl& impl, Id prompt_id, const NewPromptVersion& v,
                                          std::optional<Id> source) {
  STORE_TRY(load_prompt(impl.db, prompt_id));
  STORE_ASSIGN_OR_RETURN(
      sql::Statement stmt,
      impl.db.prepare("INSERT INTO prompt_versions (prompt_id, version, text, note, created_ms, temperature, top_p, "
                      "top_k, min_p, max_tokens, stop_json, source_version_id) "
                      "SELECT ?1, coalesce(max(version), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11 "
                      "FROM prompt_versions WHERE prompt_id = ?1"));
  const PromptConfig& c = v.config;
  stmt.bind(1, prompt_id).bind(2, std::string_view(v.text)).bind(3, std::string_view(v.note)).bind(4, impl.now());
  stmt.bind(5, c.temperature).bind(6, c.top_p).bind(7, c.top_k).bind(8, c.min_p).bind(9, c.max_tokens);
  if (c.stop) {
    stmt.bind(10, std::string_view(strings_to_json(*c.stop)));
  } else {
    stmt.bind_null(10);
  }
  stmt.bind(11, source);
  STORE_TRY(stmt.run());
  return load_version(impl.db, impl.db.last_insert_rowid());
}

}  // namespace

StoreResult<Prompt> load_prompt(sql::Db& db, Id id) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                         db.prepare("SELECT " + std::string(kPromptColumns) + " FROM prompts WHERE id = ?"));
  stmt.bind(1, id);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) return make_store_error(StoreErrorCode::kNotFound, "no prompt with id " + std::to_string(id));
  return read_prompt(stmt);
}

StoreResult<PromptVersion> load_version(sql::Db& db, Id id) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                         db.prepare("SELECT " + std::string(kVersionColumns) + " FROM prompt_versions WHERE id = ?"));
  stmt.bind(1, id);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) return make_store_error(StoreErrorCode::kNotFound, "no prompt version with id " + std::to_string(id));
  return read_prompt_version(stmt);
}

StoreResult<PromptVersion> load_version_number(sql::Db& db, const Prompt& prompt, int version) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt, db.prepare("SELECT " + std::string(kVersionColumns) +
                                                         " FROM prompt_versions WHERE prompt_id = ? AND version = ?"));
  stmt.bind(1, prompt.id).bind(2, std::int64_t{version});
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) {
    return make_store_error(StoreErrorCode::kNotFound, "prompt \"" + prompt.name + "\" has no version " +
                                                           std::to_string(version) + " (it has " +
                                                           std::to_string(prompt.latest_version) + ")");
  }
  return read_prompt_version(stmt);
}

StoreResult<Id> Store::create_prompt(std::string_view name) {
  return impl_->write("creating a prompt", [&] { return insert_prompt(*impl_, name); });
}

StoreResult<PromptVersion> Store::add_prompt(std::string_view name, const NewPromptVersion& first) {
  return impl_->write("creating prompt \"" + std::string(name) + "\"", [&]() -> StoreResult<PromptVersion> {
    STORE_ASSIGN_OR_RETURN(const Id id, insert_prompt(*impl_, name));
    return insert_version(*impl_, id, first, std::nullopt);
  });
}

StoreResult<std::vector<Prompt>> Store::list_prompts(bool include_archived) {
  std::string sql = "SELECT " + std::string(kPromptColumns) + " FROM prompts";
  if (!include_archived) sql += " WHERE archived = 0";
  sql += " ORDER BY name, id";
  return impl_->read("listing prompts", [&]() -> StoreResult<std::vector<Prompt>> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare(sql));
    std::vector<Prompt> out;
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) return out;
      out.push_back(read_prompt(stmt));
    }
  });
}

StoreResult<Prompt> Store::get_prompt(Id prompt_id) {
  return impl_->read("reading " + prompt_label_of(prompt_id), [&] { return load_prompt(impl_->db, prompt_id); });
}

StoreResult<Prompt> Store::find_prompt(std::string_view name) {
  return impl_->read("finding prompt \"" + std::string(name) + "\"", [&]() -> StoreResult<Prompt> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("SELECT " + std::string(kPromptColumns) + " FROM prompts WHERE name = ?"));
    stmt.bind(1, name);
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    if (!row) return make_store_error(StoreErrorCode::kNotFound, "no prompt named \"" + std::string(name) + "\"");
    return read_prompt(stmt);
  });
}

StoreResult<PromptVersion> Store::add_prompt_version(Id prompt_id, std::string_view text, std::string_view note) {
  return add_prompt_version(prompt_id, NewPromptVersion{std::string(text), std::string(note), {}});
}

StoreResult<PromptVersion> Store::add_prompt_version(Id prompt_id, const NewPromptVersion& version) {
  return impl_->write("saving a version of " + prompt_label_of(prompt_id),
                      [&] { return insert_version(*impl_, prompt_id, version, std::nullopt); });
}

StoreResult<std::vector<PromptVersion>> Store::list_prompt_versions(Id prompt_id) {
  return impl_->read(
      "listing versions of " + prompt_label_of(prompt_id), [&]() -> StoreResult<std::vector<PromptVersion>> {
        STORE_TRY(load_prompt(impl_->db, prompt_id));
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

StoreResult<PromptVersion> Store::find_prompt_version(Id prompt_id, int version) {
  return impl_->read("reading version " + std::to_string(version) + " of " + prompt_label_of(prompt_id),
                     [&]() -> StoreResult<PromptVersion> {
                       STORE_ASSIGN_OR_RETURN(const Prompt p, load_prompt(impl_->db, prompt_id));
                       return load_version_number(impl_->db, p, version);
                     });
}

StoreResult<PromptVersion> Store::revert_prompt(Id prompt_id, int version, std::string_view note) {
  return impl_->write("reverting " + prompt_label_of(prompt_id) + " to version " + std::to_string(version),
                      [&]() -> StoreResult<PromptVersion> {
                        STORE_ASSIGN_OR_RETURN(const Prompt p, load_prompt(impl_->db, prompt_id));
                        STORE_ASSIGN_OR_RETURN(const PromptVersion old, load_version_number(impl_->db, p, version));
                        NewPromptVersion copy{old.text, std::string(note), old.config};
                        if (copy.note.empty()) copy.note = "revert to version " + std::to_string(version);
                        return insert_version(*impl_, prompt_id, copy, old.id);
                      });
}

StoreResult<void> Store::set_prompt_archived(Id prompt_id, bool archived) {
  return impl_->write("archiving " + prompt_label_of(prompt_id), [&]() -> StoreResult<void> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare("UPDATE prompts SET archived = ? WHERE id = ?"));
    stmt.bind(1, std::int64_t{archived ? 1 : 0}).bind(2, prompt_id);
    STORE_TRY(stmt.run());
    if (impl_->db.changes() == 0)
      return make_store_error(StoreErrorCode::kNotFound, "no " + prompt_label_of(prompt_id));
    return {};
  });
}

StoreResult<std::vector<DiffOp>> Store::diff_prompt_versions(Id old_version_id, Id new_version_id) {
  return impl_->read(
      "comparing prompt versions " + std::to_string(old_version_id) + " and " + std::to_string(new_version_id),
      [&]() -> StoreResult<std::vector<DiffOp>> {
        STORE_ASSIGN_OR_RETURN(const PromptVersion a, load_version(impl_->db, old_version_id));
        STORE_ASSIGN_OR_RETURN(const PromptVersion b, load_version(impl_->db, new_version_id));
        return word_diff(a.text, b.text);
      });
}

}  // namespace hearth::store
