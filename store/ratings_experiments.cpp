// Ratings of answers, and experiments (past prompts run against two versions).
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

StoreResult<void> require_assistant(sql::Db& db, Id message_id) {
  STORE_ASSIGN_OR_RETURN(const Message m, load_message(db, message_id));
  if (m.role != Role::kAssistant) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "message " + std::to_string(message_id) + " is not an answer (only answers are rated)");
  }
  return {};
}

Experiment read_experiment(const sql::Statement& s) {
  Experiment e;
  e.id = s.int64(0);
  e.name = s.text(1);
  e.version_a_id = s.int64(2);
  e.version_b_id = s.int64(3);
  e.created_ms = s.int64(4);
  e.settings_json = s.text(5);
  return e;
}

constexpr std::string_view kExperimentColumns = "id, name, version_a_id, version_b_id, created_ms, settings_json";

}  // namespace

StoreResult<void> Store::set_rating(Id message_id, Rating rating) {
  return impl_->write("rating message " + std::to_string(message_id), [&]() -> StoreResult<void> {
    STORE_TRY(require_assistant(impl_->db, message_id));
    if (rating == Rating::kNone) {
      STORE_ASSIGN_OR_RETURN(sql::Statement del, impl_->db.prepare("DELETE FROM ratings WHERE message_id = ?"));
      del.bind(1, message_id);
      return del.run();
    }
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("INSERT INTO ratings (message_id, rating, updated_ms) VALUES (?1, ?2, ?3) "
                                             "ON CONFLICT (message_id) DO UPDATE SET rating = excluded.rating, "
                                             "updated_ms = excluded.updated_ms"));
    stmt.bind(1, message_id).bind(2, std::int64_t{static_cast<int>(rating)}).bind(3, impl_->now());
    return stmt.run();
  });
}

StoreResult<Rating> Store::get_rating(Id message_id) {
  return impl_->read("reading the rating of message " + std::to_string(message_id), [&]() -> StoreResult<Rating> {
    STORE_TRY(load_message(impl_->db, message_id));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare("SELECT rating FROM ratings WHERE message_id = ?"));
    stmt.bind(1, message_id);
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    if (!row) return Rating::kNone;
    return stmt.int64(0) > 0 ? Rating::kUp : Rating::kDown;
  });
}

StoreResult<Id> Store::create_experiment(const NewExperiment& e) {
  return impl_->write("creating experiment \"" + e.name + "\"", [&]() -> StoreResult<Id> {
    STORE_TRY(load_version(impl_->db, e.version_a_id));
    STORE_TRY(load_version(impl_->db, e.version_b_id));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("INSERT INTO experiments (name, version_a_id, version_b_id, created_ms, "
                                             "settings_json) VALUES (?, ?, ?, ?, ?)"));
    stmt.bind(1, std::string_view(e.name)).bind(2, e.version_a_id).bind(3, e.version_b_id).bind(4, impl_->now());
    stmt.bind(5, std::string_view(e.settings_json));
    STORE_TRY(stmt.run());
    return impl_->db.last_insert_rowid();
  });
}

StoreResult<Id> Store::add_experiment_result(Id experiment_id, const ExperimentResult& r) {
  return impl_->write("saving a result of experiment " + std::to_string(experiment_id), [&]() -> StoreResult<Id> {
    STORE_ASSIGN_OR_RETURN(sql::Statement exists, impl_->db.prepare("SELECT 1 FROM experiments WHERE id = ?"));
    exists.bind(1, experiment_id);
    STORE_ASSIGN_OR_RETURN(const bool found, exists.step());
    if (!found) {
      return make_store_error(StoreErrorCode::kNotFound, "no experiment with id " + std::to_string(experiment_id));
    }
    STORE_TRY(load_message(impl_->db, r.source_message_id));
    STORE_TRY(load_version(impl_->db, r.version_id));
    if (r.answer_message_id) STORE_TRY(require_assistant(impl_->db, *r.answer_message_id));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("INSERT INTO experiment_results (experiment_id, source_message_id, "
                                             "version_id, answer_message_id) VALUES (?, ?, ?, ?)"));
    stmt.bind(1, experiment_id).bind(2, r.source_message_id).bind(3, r.version_id).bind(4, r.answer_message_id);
    STORE_TRY(stmt.run());
    return impl_->db.last_insert_rowid();
  });
}

StoreResult<Experiment> Store::get_experiment(Id experiment_id) {
  return impl_->read("reading experiment " + std::to_string(experiment_id), [&]() -> StoreResult<Experiment> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare("SELECT " + std::string(kExperimentColumns) +
                                                                  " FROM experiments WHERE id = ?"));
    stmt.bind(1, experiment_id);
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    if (!row) {
      return make_store_error(StoreErrorCode::kNotFound, "no experiment with id " + std::to_string(experiment_id));
    }
    Experiment e = read_experiment(stmt);
    STORE_ASSIGN_OR_RETURN(sql::Statement rows,
                           impl_->db.prepare("SELECT id, source_message_id, version_id, answer_message_id FROM "
                                             "experiment_results WHERE experiment_id = ? ORDER BY id"));
    rows.bind(1, experiment_id);
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool more, rows.step());
      if (!more) return e;
      e.results.push_back(ExperimentResult{rows.int64(0), rows.int64(1), rows.int64(2), rows.optional_int64(3)});
    }
  });
}

StoreResult<std::vector<Experiment>> Store::list_experiments() {
  return impl_->read("listing experiments", [&]() -> StoreResult<std::vector<Experiment>> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("SELECT " + std::string(kExperimentColumns) +
                                             " FROM experiments ORDER BY created_ms DESC, id DESC"));
    std::vector<Experiment> out;
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) return out;
      out.push_back(read_experiment(stmt));
    }
  });
}

}  // namespace hearth::store
