#include "store/schema.h"

#include <array>
#include <string>

namespace hearth::store {

namespace {

// Version 1. Times are milliseconds since the Unix epoch (UTC). Enumerations
// are stored as text ('user', 'streaming', ...): do not rename their values.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE prompts (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  created_ms  INTEGER NOT NULL
);

-- Immutable: every edit of a prompt is a new row with the next version number.
CREATE TABLE prompt_versions (
  id          INTEGER PRIMARY KEY,
  prompt_id   INTEGER NOT NULL REFERENCES prompts(id),
  version     INTEGER NOT NULL CHECK (version >= 1),
  text        TEXT NOT NULL,
  note        TEXT NOT NULL DEFAULT '',
  created_ms  INTEGER NOT NULL,
  UNIQUE (prompt_id, version)
);
CREATE TRIGGER prompt_versions_no_update BEFORE UPDATE ON prompt_versions
BEGIN SELECT RAISE(ABORT, 'prompt versions are immutable'); END;
CREATE TRIGGER prompt_versions_no_delete BEFORE DELETE ON prompt_versions
BEGIN SELECT RAISE(ABORT, 'prompt versions are immutable'); END;

CREATE TABLE conversations (
  id                 INTEGER PRIMARY KEY,
  title              TEXT NOT NULL,
  created_ms         INTEGER NOT NULL,
  updated_ms         INTEGER NOT NULL,  -- last message activity: the list's sort key
  archived           INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  deleted_ms         INTEGER,           -- soft delete (undo-able); NULL: live
  current_leaf_id    INTEGER REFERENCES messages(id) ON DELETE SET NULL,
  prompt_version_id  INTEGER REFERENCES prompt_versions(id)
);
CREATE INDEX conversations_by_recency ON conversations(updated_ms DESC, id DESC);

-- A tree per conversation: an edit or a regeneration is a sibling (same parent).
CREATE TABLE messages (
  id               INTEGER PRIMARY KEY,
  conversation_id  INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  parent_id        INTEGER REFERENCES messages(id) ON DELETE CASCADE,
  role             TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content          TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('complete', 'streaming', 'interrupted')),
  created_ms       INTEGER NOT NULL,
  updated_ms       INTEGER NOT NULL
);
CREATE INDEX messages_by_parent ON messages(conversation_id, parent_id);
CREATE INDEX messages_streaming ON messages(state) WHERE state = 'streaming';

-- One per assistant message: what produced it and how fast.
CREATE TABLE generations (
  id                 INTEGER PRIMARY KEY,
  message_id         INTEGER NOT NULL UNIQUE REFERENCES messages(id) ON DELETE CASCADE,
  prompt_version_id  INTEGER REFERENCES prompt_versions(id),
  model_path         TEXT NOT NULL,
  model_sha256       TEXT NOT NULL,
  quantization       TEXT NOT NULL,
  kv_precision       TEXT NOT NULL,
  device             TEXT NOT NULL,
  temperature        REAL NOT NULL,
  top_k              INTEGER NOT NULL,
  top_p              REAL NOT NULL,
  min_p              REAL NOT NULL,
  repeat_penalty     REAL NOT NULL,
  frequency_penalty  REAL NOT NULL,
  presence_penalty   REAL NOT NULL,
  penalty_last_n     INTEGER NOT NULL,
  seed               INTEGER NOT NULL,  -- the u64 seed's bits, as a signed 64-bit integer
  prompt_tokens      INTEGER NOT NULL,
  cached_tokens      INTEGER NOT NULL,
  generated_tokens   INTEGER NOT NULL,
  ttft_ms            REAL NOT NULL,
  prefill_tok_s      REAL NOT NULL,
  decode_tok_s       REAL NOT NULL,
  itl_p50_ms         REAL NOT NULL,
  itl_p95_ms         REAL NOT NULL,
  peak_memory_bytes  INTEGER NOT NULL,
  finish_reason      TEXT NOT NULL,
  started_ms         INTEGER NOT NULL,
  finished_ms        INTEGER NOT NULL
);

-- Full-text indexes kept in step with their tables by triggers (external content).
CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE VIRTUAL TABLE conversations_fts USING fts5(
  title, content = 'conversations', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER conversations_fts_insert AFTER INSERT ON conversations BEGIN
  INSERT INTO conversations_fts(rowid, title) VALUES (new.id, new.title);
END;
CREATE TRIGGER conversations_fts_delete AFTER DELETE ON conversations BEGIN
  INSERT INTO conversations_fts(conversations_fts, rowid, title) VALUES ('delete', old.id, old.title);
END;
CREATE TRIGGER conversations_fts_update AFTER UPDATE OF title ON conversations BEGIN
  INSERT INTO conversations_fts(conversations_fts, rowid, title) VALUES ('delete', old.id, old.title);
  INSERT INTO conversations_fts(rowid, title) VALUES (new.id, new.title);
END;
)sql";

// Version 2 (issue 15): versioned prompt configuration, labels, archived
// prompts, label pins, richer generation records, ratings, experiments, and
// the indexes the history view needs.
constexpr const char* kSchemaV2 = R"sql(
-- Version 1 allowed two prompts of one name; names are unique from now on.
UPDATE prompts SET name = name || ' (' || id || ')'
  WHERE id NOT IN (SELECT min(id) FROM prompts GROUP BY name);
CREATE UNIQUE INDEX prompts_by_name ON prompts(name);
ALTER TABLE prompts ADD COLUMN archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1));

-- The model configuration versioned with the text; NULL: not set by the prompt.
ALTER TABLE prompt_versions ADD COLUMN temperature REAL;
ALTER TABLE prompt_versions ADD COLUMN top_p REAL;
ALTER TABLE prompt_versions ADD COLUMN top_k INTEGER;
ALTER TABLE prompt_versions ADD COLUMN min_p REAL;
ALTER TABLE prompt_versions ADD COLUMN max_tokens INTEGER;
ALTER TABLE prompt_versions ADD COLUMN stop_json TEXT;  -- a JSON array of strings
ALTER TABLE prompt_versions ADD COLUMN source_version_id INTEGER REFERENCES prompt_versions(id);  -- a revert's original

-- Movable names for versions. 'latest' follows the newest version (trigger).
CREATE TABLE prompt_labels (
  prompt_id   INTEGER NOT NULL REFERENCES prompts(id),
  label       TEXT NOT NULL CHECK (label <> ''),
  version_id  INTEGER NOT NULL REFERENCES prompt_versions(id),
  updated_ms  INTEGER NOT NULL,
  PRIMARY KEY (prompt_id, label)
) WITHOUT ROWID;
CREATE TRIGGER prompt_labels_same_prompt_insert BEFORE INSERT ON prompt_labels
WHEN (SELECT prompt_id FROM prompt_versions WHERE id = new.version_id) IS NOT new.prompt_id
BEGIN SELECT RAISE(ABORT, 'a label points at a version of its own prompt'); END;
CREATE TRIGGER prompt_labels_same_prompt_update BEFORE UPDATE ON prompt_labels
WHEN (SELECT prompt_id FROM prompt_versions WHERE id = new.version_id) IS NOT new.prompt_id
BEGIN SELECT RAISE(ABORT, 'a label points at a version of its own prompt'); END;
CREATE TRIGGER prompt_versions_latest AFTER INSERT ON prompt_versions BEGIN
  INSERT INTO prompt_labels (prompt_id, label, version_id, updated_ms)
    VALUES (new.prompt_id, 'latest', new.id, new.created_ms)
    ON CONFLICT (prompt_id, label) DO UPDATE SET version_id = excluded.version_id, updated_ms = excluded.updated_ms
    WHERE excluded.version_id > version_id;
END;
INSERT INTO prompt_labels (prompt_id, label, version_id, updated_ms)
  SELECT v.prompt_id, 'latest', v.id, v.created_ms FROM prompt_versions v
  WHERE v.version = (SELECT max(version) FROM prompt_versions w WHERE w.prompt_id = v.prompt_id);

-- A conversation pins a version (prompt_version_id) or a label, resolved at send time.
ALTER TABLE conversations ADD COLUMN label_prompt_id INTEGER REFERENCES prompts(id);
ALTER TABLE conversations ADD COLUMN prompt_label TEXT;

ALTER TABLE generations ADD COLUMN system_text TEXT NOT NULL DEFAULT '';
ALTER TABLE generations ADD COLUMN variables_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE generations ADD COLUMN prompt_label TEXT NOT NULL DEFAULT '';
ALTER TABLE generations ADD COLUMN itl_p99_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE generations ADD COLUMN max_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE generations ADD COLUMN stop_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE generations ADD COLUMN model_name TEXT NOT NULL DEFAULT '';
UPDATE generations SET model_name = model_path;
CREATE INDEX generations_by_version ON generations(prompt_version_id);
CREATE INDEX generations_by_model ON generations(model_name);
CREATE INDEX generations_by_model_path ON generations(model_path);
CREATE INDEX generations_by_quantization ON generations(quantization);
CREATE INDEX generations_by_finish ON generations(finish_reason);

-- History: user messages newest first, each with its newest answer, kept in
-- answer_id by a trigger (a regeneration moves it), so a history row joins by
-- primary keys only.
CREATE INDEX messages_by_role_time ON messages(role, created_ms DESC, id DESC);
CREATE INDEX messages_children ON messages(parent_id, role, id);
ALTER TABLE messages ADD COLUMN answer_id INTEGER;
UPDATE messages SET answer_id =
  (SELECT max(x.id) FROM messages x WHERE x.parent_id = messages.id AND x.role = 'assistant')
  WHERE role = 'user';
CREATE TRIGGER messages_newest_answer AFTER INSERT ON messages
WHEN new.role = 'assistant' AND new.parent_id IS NOT NULL BEGIN
  UPDATE messages SET answer_id = new.id WHERE id = new.parent_id AND (answer_id IS NULL OR answer_id < new.id);
END;

-- One thumb per assistant message: 1 up, -1 down (no row: not rated).
CREATE TABLE ratings (
  message_id  INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
  rating      INTEGER NOT NULL CHECK (rating IN (-1, 1)),
  updated_ms  INTEGER NOT NULL
);
CREATE INDEX ratings_by_rating ON ratings(rating);

-- Past prompts run against two prompt versions; one result row per (prompt, version).
CREATE TABLE experiments (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,
  version_a_id   INTEGER NOT NULL REFERENCES prompt_versions(id),
  version_b_id   INTEGER NOT NULL REFERENCES prompt_versions(id),
  created_ms     INTEGER NOT NULL,
  settings_json  TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE experiment_results (
  id                 INTEGER PRIMARY KEY,
  experiment_id      INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  source_message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  version_id         INTEGER NOT NULL REFERENCES prompt_versions(id),
  answer_message_id  INTEGER REFERENCES messages(id) ON DELETE SET NULL
);
CREATE INDEX experiment_results_by_experiment ON experiment_results(experiment_id, id);
)sql";

// Version 3: indexes on the measurement columns the history view sorts by,
// so a page sorted by TTFT (tok/s, tokens) walks the index and stops after
// the page instead of sorting every answer (history.cpp, measurement_sort).
constexpr const char* kSchemaV3 = R"sql(
CREATE INDEX generations_by_ttft ON generations(ttft_ms);
CREATE INDEX generations_by_decode_tps ON generations(decode_tok_s);
CREATE INDEX generations_by_prompt_tokens ON generations(prompt_tokens);
CREATE INDEX generations_by_generated_tokens ON generations(generated_tokens);
)sql";

// Version 4 (issue 17): a conversation's own generation settings, as the
// user set them in the app (no row: the app-wide defaults apply). Typed
// columns, as the generations table records them; the seed is the unsigned
// value's bits (0: a fresh seed per answer).
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE conversation_settings (
  conversation_id    INTEGER PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
  temperature        REAL NOT NULL,
  top_k              INTEGER NOT NULL,
  top_p              REAL NOT NULL,
  min_p              REAL NOT NULL,
  repeat_penalty     REAL NOT NULL,
  frequency_penalty  REAL NOT NULL,
  presence_penalty   REAL NOT NULL,
  penalty_last_n     INTEGER NOT NULL,
  seed               INTEGER NOT NULL,
  max_tokens         INTEGER NOT NULL,
  system_prompt      TEXT NOT NULL,
  updated_ms         INTEGER NOT NULL
);
)sql";

// Version 5 (issue 18): why an answer failed part-way (finish_reason
// 'error'): the engine's or the remote endpoint's message, naming the
// endpoint and the cause. '' for every other answer and for older rows.
constexpr const char* kSchemaV5 = R"sql(
ALTER TABLE generations ADD COLUMN error TEXT NOT NULL DEFAULT '';
)sql";

constexpr std::array kMigrations{
    Migration{1, kSchemaV1}, Migration{2, kSchemaV2}, Migration{3, kSchemaV3},
    Migration{4, kSchemaV4}, Migration{5, kSchemaV5},
};

}  // namespace

std::span<const Migration> migrations() {
  return kMigrations;
}

int latest_schema_version() {
  return kMigrations.back().to_version;
}

StoreResult<void> migrate(sql::Db& db, int target_version, std::span<const Migration> steps) {
  STORE_ASSIGN_OR_RETURN(const std::int64_t current, db.query_int("PRAGMA user_version"));
  if (current > target_version) {
    return make_store_error(StoreErrorCode::kUnsupported, "database schema version " + std::to_string(current) +
                                                              " is newer than this program's (" +
                                                              std::to_string(target_version) + ")");
  }
  for (const Migration& step : steps) {
    if (step.to_version <= current || step.to_version > target_version) continue;
    const std::string what = "migrating the database to schema version " + std::to_string(step.to_version);
    auto tx = sql::Transaction::begin(db);
    if (!tx) return sql::with_context(std::move(tx).error(), what);
    auto done = db.exec(std::string(step.sql) + ";\nPRAGMA user_version = " + std::to_string(step.to_version) + ";");
    if (!done) return sql::with_context(std::move(done).error(), what);
    auto committed = tx->commit();
    if (!committed) return sql::with_context(std::move(committed).error(), what);
  }
  return {};
}

}  // namespace hearth::store
