// Labels (movable names for prompt versions), prompt references
// ("NAME[@VERSION|@LABEL]") and conversation pins. `latest` is moved by the
// schema's trigger on every new version, never through this API.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

StoreResult<void> check_user_label(std::string_view label) {
  const auto bad = [&](const std::string& why) {
    return make_store_error(StoreErrorCode::kInvalidArgument, "label \"" + std::string(label) + "\" " + why);
  };
  if (label.empty()) return make_store_error(StoreErrorCode::kInvalidArgument, "a label cannot be empty");
  if (label == kLatestLabel) return bad("is kept on the newest version by Hearth and cannot be set");
  if (all_digits(label)) return bad("is a number (NAME@3 means version 3)");
  for (const char c : label) {
    if (c == '@' || std::isspace(static_cast<unsigned char>(c)) != 0) return bad("contains '@' or a space");
  }
  return {};
}

StoreResult<Prompt> prompt_by_name(sql::Db& db, std::string_view name) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                         db.prepare("SELECT " + std::string(kPromptColumns) + " FROM prompts WHERE name = ?"));
  stmt.bind(1, name);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) return make_store_error(StoreErrorCode::kNotFound, "no prompt named \"" + std::string(name) + "\"");
  return read_prompt(stmt);
}

// "NAME", "NAME@3", "NAME@label". A whole reference that is a prompt's name
// wins (names of schema 1 could hold '@').
StoreResult<ResolvedPrompt> resolve_reference(sql::Db& db, std::string_view reference) {
  std::string_view name = reference;
  std::string_view suffix;
  auto whole = prompt_by_name(db, reference);
  if (!whole && whole.error().code != StoreErrorCode::kNotFound) return std::move(whole).error();
  if (!whole) {
    const std::size_t at = reference.rfind('@');
    if (at == std::string_view::npos) return std::move(whole).error();
    name = reference.substr(0, at);
    suffix = reference.substr(at + 1);
    if (suffix.empty()) {
      return make_store_error(StoreErrorCode::kInvalidArgument,
                              "\"" + std::string(reference) + "\" names no version or label after '@'");
    }
  }
  ResolvedPrompt out;
  if (whole) {
    out.prompt = std::move(whole).value();
  } else {
    STORE_ASSIGN_OR_RETURN(out.prompt, prompt_by_name(db, name));
  }
  int number = 0;
  if (all_digits(suffix)) {
    const auto [end, ec] = std::from_chars(suffix.data(), suffix.data() + suffix.size(), number);
    if (ec != std::errc() || end != suffix.data() + suffix.size()) number = -1;  // too large: no such version
    STORE_ASSIGN_OR_RETURN(out.version, load_version_number(db, out.prompt, number));
    return out;
  }
  out.label = suffix.empty() ? std::string(kLatestLabel) : std::string(suffix);
  STORE_ASSIGN_OR_RETURN(out.version, load_label(db, out.prompt, out.label));
  return out;
}

}  // namespace

StoreResult<PromptVersion> load_label(sql::Db& db, const Prompt& prompt, std::string_view label) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                         db.prepare("SELECT version_id FROM prompt_labels WHERE prompt_id = ? AND label = ?"));
  stmt.bind(1, prompt.id).bind(2, label);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) {
    if (label == kLatestLabel) {
      return make_store_error(StoreErrorCode::kNotFound, "prompt \"" + prompt.name + "\" has no versions");
    }
    return make_store_error(StoreErrorCode::kNotFound,
                            "prompt \"" + prompt.name + "\" has no label \"" + std::string(label) + "\"");
  }
  return load_version(db, stmt.int64(0));
}

StoreResult<void> Store::set_prompt_label(Id prompt_id, std::string_view label, Id version_id) {
  return impl_->write(
      "labelling version " + std::to_string(version_id) + " \"" + std::string(label) + "\"",
      [&]() -> StoreResult<void> {
        STORE_TRY(check_user_label(label));
        STORE_ASSIGN_OR_RETURN(const Prompt p, load_prompt(impl_->db, prompt_id));
        STORE_ASSIGN_OR_RETURN(const PromptVersion v, load_version(impl_->db, version_id));
        if (v.prompt_id != p.id) {
          return make_store_error(
              StoreErrorCode::kInvalidArgument,
              "prompt version " + std::to_string(version_id) + " belongs to another prompt than \"" + p.name + "\"");
        }
        STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                               impl_->db.prepare("INSERT INTO prompt_labels (prompt_id, label, version_id, updated_ms) "
                                                 "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (prompt_id, label) DO UPDATE SET "
                                                 "version_id = excluded.version_id, updated_ms = excluded.updated_ms"));
        stmt.bind(1, prompt_id).bind(2, label).bind(3, version_id).bind(4, impl_->now());
        return stmt.run();
      });
}

StoreResult<void> Store::remove_prompt_label(Id prompt_id, std::string_view label) {
  return impl_->write("removing label \"" + std::string(label) + "\"", [&]() -> StoreResult<void> {
    if (label == kLatestLabel) STORE_TRY(check_user_label(label));
    STORE_ASSIGN_OR_RETURN(const Prompt p, load_prompt(impl_->db, prompt_id));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("DELETE FROM prompt_labels WHERE prompt_id = ? AND label = ?"));
    stmt.bind(1, prompt_id).bind(2, label);
    STORE_TRY(stmt.run());
    if (impl_->db.changes() == 0) {
      return make_store_error(StoreErrorCode::kNotFound,
                              "prompt \"" + p.name + "\" has no label \"" + std::string(label) + "\"");
    }
    return {};
  });
}

StoreResult<std::vector<PromptLabel>> Store::list_prompt_labels(Id prompt_id) {
  return impl_->read(
      "listing labels of prompt " + std::to_string(prompt_id), [&]() -> StoreResult<std::vector<PromptLabel>> {
        STORE_TRY(load_prompt(impl_->db, prompt_id));
        STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                               impl_->db.prepare("SELECT l.prompt_id, l.label, l.version_id, v.version, l.updated_ms "
                                                 "FROM prompt_labels l JOIN prompt_versions v ON v.id = l.version_id "
                                                 "WHERE l.prompt_id = ? ORDER BY l.label"));
        stmt.bind(1, prompt_id);
        std::vector<PromptLabel> out;
        for (;;) {
          STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
          if (!row) return out;
          out.push_back(
              PromptLabel{stmt.int64(0), stmt.text(1), stmt.int64(2), static_cast<int>(stmt.int64(3)), stmt.int64(4)});
        }
      });
}

StoreResult<PromptVersion> Store::resolve_prompt_label(Id prompt_id, std::string_view label) {
  return impl_->read("resolving label \"" + std::string(label) + "\"", [&]() -> StoreResult<PromptVersion> {
    STORE_ASSIGN_OR_RETURN(const Prompt p, load_prompt(impl_->db, prompt_id));
    return load_label(impl_->db, p, label);
  });
}

StoreResult<ResolvedPrompt> Store::resolve_prompt(std::string_view reference) {
  return impl_->read("resolving prompt \"" + std::string(reference) + "\"",
                     [&] { return resolve_reference(impl_->db, reference); });
}

StoreResult<void> Store::pin_prompt_label(Id id, Id prompt_id, std::string_view label) {
  return impl_->write("pinning a prompt label to conversation " + std::to_string(id), [&]() -> StoreResult<void> {
    if (label.empty()) return make_store_error(StoreErrorCode::kInvalidArgument, "a label cannot be empty");
    STORE_TRY(load_prompt(impl_->db, prompt_id));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("UPDATE conversations SET prompt_version_id = NULL, label_prompt_id = ?, "
                                             "prompt_label = ? WHERE id = ?"));
    stmt.bind(1, prompt_id).bind(2, label).bind(3, id);
    STORE_TRY(stmt.run());
    if (impl_->db.changes() == 0) {
      return make_store_error(StoreErrorCode::kNotFound, "no conversation " + std::to_string(id));
    }
    return {};
  });
}

StoreResult<std::optional<ResolvedPrompt>> Store::resolve_conversation_prompt(Id id) {
  return impl_->read("resolving the prompt of conversation " + std::to_string(id),
                     [&]() -> StoreResult<std::optional<ResolvedPrompt>> {
                       STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                                              impl_->db.prepare("SELECT prompt_version_id, label_prompt_id, "
                                                                "prompt_label FROM conversations WHERE id = ?"));
                       stmt.bind(1, id);
                       STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
                       if (!row) {
                         return make_store_error(StoreErrorCode::kNotFound, "no conversation " + std::to_string(id));
                       }
                       const std::optional<Id> version_id = stmt.optional_int64(0);
                       const std::optional<Id> label_prompt = stmt.optional_int64(1);
                       const std::string label = stmt.text(2);
                       ResolvedPrompt out;
                       if (version_id) {
                         STORE_ASSIGN_OR_RETURN(out.version, load_version(impl_->db, *version_id));
                         STORE_ASSIGN_OR_RETURN(out.prompt, load_prompt(impl_->db, out.version.prompt_id));
                       } else if (label_prompt && !label.empty()) {
                         STORE_ASSIGN_OR_RETURN(out.prompt, load_prompt(impl_->db, *label_prompt));
                         STORE_ASSIGN_OR_RETURN(out.version, load_label(impl_->db, out.prompt, label));
                         out.label = label;
                       } else {
                         return std::optional<ResolvedPrompt>();
                       }
                       return std::optional<ResolvedPrompt>(std::move(out));
                     });
}

}  // namespace hearth::store
