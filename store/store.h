// The conversation store: conversations, their message trees, prompts and
// their immutable versions, and per-answer generation records, in one SQLite
// file (WAL mode, foreign keys on, synchronous=FULL: a committed write survives
// a crash or power loss).
//
//   auto store = Store::open({.path = "/home/u/.local/share/hearth/hearth.db"});
//   Id conv = *store->create_conversation("New chat");
//   Id user = *store->add_message({.conversation_id = conv, .content = "Hi"});  // committed first
//   Id answer = *store->begin_answer(conv, user);                                // 'streaming'
//   store->append_streaming(answer, "Hel");  store->append_streaming(answer, "lo");  // every <= 0.5 s
//   store->finish_message(answer, {.tail = "!", .generation = record});
//
// Every write is one transaction: it happens entirely or not at all, so a full
// disk or a read-only file fails with a kIo error naming the operation and
// leaves what was stored before untouched. A process killed while an answer
// streams leaves the text of the last append_streaming; the next open marks
// that message kInterrupted.
//
// Thread-safety: every method locks one internal mutex, so one Store may be
// shared by the UI thread (reads) and a storage thread (writes).
//
// One writer per database file: a writable open takes an advisory lock on
// "<path>.lock" (released when the Store closes or its process dies). A second
// Store opened while the lock is held (another Hearth, or this process) opens
// read-only and says so (writer_elsewhere(), writer_pid()); only the lock's
// holder marks 'streaming' answers interrupted, so recovery never cuts off an
// answer a live process is still writing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/records.h"
#include "store/review_records.h"
#include "store/store_error.h"
#include "store/word_diff.h"

namespace hearth::store {

struct StoreOptions {
  std::string path{};          // the database file; created (with the schema) when missing
  bool read_only = false;      // reads only; every write fails with kIo "database is read-only"
  int busy_timeout_ms = 5000;  // wait this long for another process's lock
  // Limit on the database size in pages (SQLite's max_page_count); 0: none.
  // A write that would grow past it fails as a full disk would: tests and quotas.
  std::int64_t max_page_count = 0;
  // Milliseconds since the epoch for created/updated times; empty: the system clock.
  std::function<TimeMs()> clock{};
};

struct ListOptions {
  bool include_archived = false;
  bool only_deleted = false;  // the trash: soft-deleted conversations, newest deletion first
};

struct NewMessage {
  Id conversation_id = 0;
  std::optional<Id> parent_id{};  // nullopt: a root message
  Role role = Role::kUser;
  std::string content{};
};

struct FinishMessage {
  std::string tail{};                            // text after the last append_streaming
  MessageState state = MessageState::kComplete;  // kComplete or kInterrupted
  std::optional<GenerationRecord> generation{};  // recorded in the same transaction (message_id is set for you)
};

struct SearchOptions {
  int limit = 50;  // conversations at most
  bool include_archived = true;
  std::string open_mark = "[";  // wraps each matched term in the snippet
  std::string close_mark = "]";
  int snippet_tokens = 12;  // words of context in a snippet (1..64)
};

class Store {
 public:
  // Opens (creating when missing) and migrates to the latest schema, then marks
  // messages left 'streaming' by a crash as kInterrupted.
  static StoreResult<std::unique_ptr<Store>> open(StoreOptions options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int schema_version() const;
  bool read_only() const;
  // Messages open() found 'streaming' and marked kInterrupted.
  int recovered_messages() const;
  // Their ids, oldest first (the answers to link to after a crash).
  const std::vector<Id>& recovered_message_ids() const;
  // True when another Store held the writer lock at open(): this one is read-only.
  bool writer_elsewhere() const;
  // That writer's process id, when the lock file names it.
  std::optional<std::int64_t> writer_pid() const;

  // Conversations -----------------------------------------------------------
  StoreResult<Id> create_conversation(std::string_view title);
  StoreResult<Conversation> get_conversation(Id id);
  // Most recent activity first (ties: newest id first); soft-deleted ones only with only_deleted.
  StoreResult<std::vector<Conversation>> list_conversations(const ListOptions& options = {});
  StoreResult<void> rename_conversation(Id id, std::string_view title);
  StoreResult<void> set_archived(Id id, bool archived);
  // Pins a prompt version (nullopt: none) and clears a pinned label.
  StoreResult<void> set_prompt_version(Id id, std::optional<Id> prompt_version_id);
  // Pins a label of a prompt, resolved at each send; clears a pinned version.
  // The label need not exist yet (kNotFound for an unknown prompt).
  StoreResult<void> pin_prompt_label(Id id, Id prompt_id, std::string_view label);
  // The conversation's pin resolved now: its version, or its label's current
  // version (kNotFound naming the label when it no longer exists). nullopt: no pin.
  StoreResult<std::optional<ResolvedPrompt>> resolve_conversation_prompt(Id id);
  // The conversation's own generation settings (schema 3); nullopt: it has
  // none, the front end's defaults apply. Setting nullopt removes them.
  // kNotFound for an unknown conversation.
  StoreResult<std::optional<ConversationSettings>> conversation_settings(Id id);
  StoreResult<void> set_conversation_settings(Id id, const std::optional<ConversationSettings>& settings);
  // Soft delete (undo with restore_conversation); purge_deleted removes them for good.
  StoreResult<void> delete_conversation(Id id);
  StoreResult<void> restore_conversation(Id id);
  // Removes every soft-deleted conversation with its messages; returns how many.
  StoreResult<int> purge_deleted();

  // Messages ----------------------------------------------------------------
  // Adds a complete message under parent_id (which must be in the same
  // conversation) and makes it the current leaf.
  StoreResult<Id> add_message(const NewMessage& message);
  // A new version of a message: a sibling with the same parent and role,
  // complete, made the current leaf. The original stays.
  StoreResult<Id> edit_message(Id message_id, std::string_view content);
  // An empty 'streaming' assistant message under parent_id, the current leaf.
  StoreResult<Id> begin_answer(Id conversation_id, std::optional<Id> parent_id);
  // A new 'streaming' answer beside an existing one (same parent).
  StoreResult<Id> regenerate(Id assistant_message_id);
  // Appends text to a 'streaming' message (kInvalidArgument when it is not).
  StoreResult<void> append_streaming(Id message_id, std::string_view text);
  // Appends the tail, sets the final state, records the generation if given.
  StoreResult<void> finish_message(Id message_id, const FinishMessage& finish);
  StoreResult<Message> get_message(Id id);

  // Branches ----------------------------------------------------------------
  // Root to the current leaf: what the chat view shows.
  StoreResult<std::vector<Message>> current_path(Id conversation_id);
  StoreResult<Siblings> siblings(Id message_id);
  // Shows the branch through message_id: the current leaf becomes the newest
  // descendant reached by following the newest child at each step. Returns it.
  StoreResult<Id> switch_branch(Id message_id);

  // Prompts -----------------------------------------------------------------
  // Names are unique and not empty (kInvalidArgument naming a taken one).
  StoreResult<Id> create_prompt(std::string_view name);
  // A prompt and its version 1 in one transaction.
  StoreResult<PromptVersion> add_prompt(std::string_view name, const NewPromptVersion& first);
  // Sorted by name; archived ones only with include_archived.
  StoreResult<std::vector<Prompt>> list_prompts(bool include_archived = true);
  StoreResult<Prompt> get_prompt(Id prompt_id);
  StoreResult<Prompt> find_prompt(std::string_view name);  // kNotFound: "no prompt named ..."
  // Versions are never updated or deleted (API and SQL triggers): each edit
  // appends the next version, and `latest` moves to it.
  StoreResult<PromptVersion> add_prompt_version(Id prompt_id, std::string_view text, std::string_view note = {});
  StoreResult<PromptVersion> add_prompt_version(Id prompt_id, const NewPromptVersion& version);
  StoreResult<std::vector<PromptVersion>> list_prompt_versions(Id prompt_id);  // version 1 first
  StoreResult<PromptVersion> get_prompt_version(Id id);
  // kNotFound naming the prompt and version number.
  StoreResult<PromptVersion> find_prompt_version(Id prompt_id, int version);
  // A new version with the text, note and configuration of `version`
  // (source_version_id records it); `note` empty: "revert to version N".
  StoreResult<PromptVersion> revert_prompt(Id prompt_id, int version, std::string_view note = {});
  // Archiving hides a prompt from list_prompts(false); nothing is deleted.
  StoreResult<void> set_prompt_archived(Id prompt_id, bool archived);

  // Labels: movable names for versions. kInvalidArgument for `latest` (the
  // store moves it), an empty label, one with '@' or whitespace, or all digits
  // (NAME@3 means version 3); for a version of another prompt.
  StoreResult<void> set_prompt_label(Id prompt_id, std::string_view label, Id version_id);
  StoreResult<void> remove_prompt_label(Id prompt_id, std::string_view label);
  StoreResult<std::vector<PromptLabel>> list_prompt_labels(Id prompt_id);  // sorted by label
  StoreResult<PromptVersion> resolve_prompt_label(Id prompt_id, std::string_view label);
  // "NAME", "NAME@VERSION" or "NAME@LABEL" (NAME alone: its latest version).
  // The last '@' separates; kNotFound naming the prompt, version or label.
  StoreResult<ResolvedPrompt> resolve_prompt(std::string_view reference);

  // word_diff of two versions' texts (any two, of any prompts).
  StoreResult<std::vector<DiffOp>> diff_prompt_versions(Id old_version_id, Id new_version_id);
  // Over the generations recorded with the version.
  StoreResult<VersionMetrics> version_metrics(Id version_id);

  // Ratings -----------------------------------------------------------------
  // Thumbs up/down on an assistant message (kInvalidArgument for another
  // role); kNone removes it. Changeable at any time.
  StoreResult<void> set_rating(Id message_id, Rating rating);
  StoreResult<Rating> get_rating(Id message_id);

  // History -----------------------------------------------------------------
  // Every user message sent, filtered and sorted (newest first by default).
  StoreResult<std::vector<HistoryEntry>> history(const HistoryQuery& query);
  // How many rows history(query) has without limit and offset.
  StoreResult<std::int64_t> history_count(const HistoryQuery& query);
  // The distinct models, quantizations and finish reasons answers recorded.
  StoreResult<HistoryFacets> history_facets();

  // Experiments -------------------------------------------------------------
  StoreResult<Id> create_experiment(const NewExperiment& experiment);
  StoreResult<Id> add_experiment_result(Id experiment_id, const ExperimentResult& result);
  StoreResult<Experiment> get_experiment(Id experiment_id);  // with its results
  StoreResult<std::vector<Experiment>> list_experiments();   // newest first, without results

  // Export / import ---------------------------------------------------------
  // JSON documents: {"format": "hearth-export", "version": 1, "prompts": [...],
  // "conversations": [...], "experiments": [...]} (store/export_json.cpp
  // documents the fields). One conversation brings the prompts it refers to.
  StoreResult<std::string> export_json(const ExportOptions& options = {});
  // The conversation's current branch as Markdown, with each answer's model and timings.
  StoreResult<std::string> export_markdown(Id conversation_id);
  // Adds everything in an export document, in one transaction (all or
  // nothing). Ids taken here are remapped (and references with them); prompt
  // names taken here get a suffix. kInvalidArgument naming what is malformed.
  StoreResult<ImportSummary> import_json(std::string_view json);

  // Generations -------------------------------------------------------------
  // One per assistant message (kInvalidArgument for a second one).
  StoreResult<Id> record_generation(const GenerationRecord& record);
  StoreResult<std::optional<GenerationRecord>> get_generation(Id message_id);

  // Search ------------------------------------------------------------------
  // Conversations whose title or any message matches every word of `text`
  // (words are matched as prefixes; FTS syntax in `text` is taken literally),
  // most recent first. Soft-deleted conversations are never returned.
  StoreResult<std::vector<SearchHit>> search(std::string_view text, const SearchOptions& options = {});

  struct Impl;  // store/store_impl.h

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::store
