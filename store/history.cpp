// Prompt history review: every user message sent, with the newest answer under
// it and that answer's generation record, filtered and sorted in SQL; and the
// per-version metrics. The indexes of schema 2 (messages_by_role_time,
// messages_children, generations_by_*) keep a page of 100,000 messages fast
// (docs/benchmarks.md).
#include <algorithm>
#include <string>
#include <variant>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

using Param = std::variant<std::int64_t, double, std::string>;

// The rows of one history query: FROM ... WHERE ..., and its parameters.
struct HistorySql {
  std::string from_where;
  std::vector<Param> params;
};

bool filters_generation(const HistoryQuery& q) {
  return q.prompt_id || q.prompt_version_id || !q.model.empty() || !q.quantization.empty() ||
         !q.finish_reason.empty() || q.rating;
}

// A filter on an indexed generation column: a count is cheaper walking the
// generations it selects than every user message.
bool indexed_generation_filter(const HistoryQuery& q) {
  return q.prompt_id || q.prompt_version_id || !q.model.empty() || !q.quantization.empty() || !q.finish_reason.empty();
}

// Joins only what the query reads (`full`: the page, which shows every
// column; a count joins what its filters need). With a generation filter the
// joins are inner; a count with an indexed one starts from generations
// (CROSS JOIN fixes SQLite's join order), the newest-answer test then being
// u.answer_id = a.id.
std::string history_from(const HistoryQuery& q, bool full) {
  std::string from;
  if (!full && indexed_generation_filter(q) && fts_query(q.search).empty()) {
    from =
        " FROM generations g CROSS JOIN messages a ON a.id = g.message_id"
        " CROSS JOIN messages u ON u.id = a.parent_id AND u.answer_id = a.id"
        " JOIN conversations c ON c.id = u.conversation_id";
  } else {
    const std::string join = filters_generation(q) ? " JOIN " : " LEFT JOIN ";
    from = " FROM messages u JOIN conversations c ON c.id = u.conversation_id";
    if (full || filters_generation(q)) {
      from += join + "messages a ON a.id = u.answer_id" + join + "generations g ON g.message_id = a.id";
    }
  }
  if (full) from += " LEFT JOIN prompt_versions pv ON pv.id = g.prompt_version_id";
  if (full) from += " LEFT JOIN prompts p ON p.id = pv.prompt_id";
  if (full || q.rating) from += " LEFT JOIN ratings r ON r.message_id = a.id";
  return from + " WHERE u.role = 'user'";
}

// A model is named by its name, or by its file's path (anything with a '/'
// or ending in .gguf): one indexed equality either way.
bool is_model_path(const std::string& model) {
  return model.find('/') != std::string::npos || model.ends_with(".gguf");
}

HistorySql history_sql(const HistoryQuery& q, bool full) {
  HistorySql out{history_from(q, full), {}};
  const auto add = [&](std::string_view clause, Param value) {
    out.from_where += " AND ";
    out.from_where += clause;
    out.params.push_back(std::move(value));
  };
  if (!q.include_deleted) out.from_where += " AND c.deleted_ms IS NULL";
  if (const std::string match = fts_query(q.search); !match.empty()) {
    add("u.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)", match);
  }
  if (q.conversation_id) add("u.conversation_id = ?", *q.conversation_id);
  if (q.prompt_id) add("g.prompt_version_id IN (SELECT id FROM prompt_versions WHERE prompt_id = ?)", *q.prompt_id);
  if (q.prompt_version_id) add("g.prompt_version_id = ?", *q.prompt_version_id);
  if (!q.model.empty()) add(is_model_path(q.model) ? "g.model_path = ?" : "g.model_name = ?", q.model);
  if (!q.quantization.empty()) add("g.quantization = ?", q.quantization);
  if (!q.finish_reason.empty()) add("g.finish_reason = ?", q.finish_reason);
  if (q.rating == Rating::kNone) out.from_where += " AND g.message_id IS NOT NULL AND r.rating IS NULL";
  if (q.rating == Rating::kUp || q.rating == Rating::kDown) {
    add("r.rating = ?", std::int64_t{static_cast<int>(*q.rating)});
  }
  if (q.since_ms) add("u.created_ms >= ?", *q.since_ms);
  if (q.until_ms) add("u.created_ms < ?", *q.until_ms);
  return out;
}

std::string_view sort_column(HistorySort sort) {
  switch (sort) {
    case HistorySort::kTime:
      return "u.created_ms";
    case HistorySort::kConversation:
      return "c.title COLLATE NOCASE";
    case HistorySort::kModel:
      return "g.model_name";
    case HistorySort::kTtft:
      return "g.ttft_ms";
    case HistorySort::kDecodeTps:
      return "g.decode_tok_s";
    case HistorySort::kPromptTokens:
      return "g.prompt_tokens";
    case HistorySort::kGeneratedTokens:
      return "g.generated_tokens";
    case HistorySort::kFinishReason:
      return "g.finish_reason";
    case HistorySort::kRating:
      return "coalesce(r.rating, 0)";
  }
  return "u.created_ms";
}

void bind_all(sql::Statement& stmt, const std::vector<Param>& params) {
  int index = 1;
  for (const Param& p : params) {
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
            stmt.bind(index, std::string_view(v));
          } else {
            stmt.bind(index, v);
          }
        },
        p);
    ++index;
  }
}

constexpr int kEntryColumns = 9;  // before the generation's

HistoryEntry read_entry(const sql::Statement& s) {
  HistoryEntry e;
  e.message_id = s.int64(0);
  e.conversation_id = s.int64(1);
  e.conversation_title = s.text(2);
  e.created_ms = s.int64(3);
  e.text = s.text(4);
  e.answer_message_id = s.optional_int64(5);
  if (!s.is_null(6)) e.rating = s.int64(6) > 0 ? Rating::kUp : Rating::kDown;
  e.prompt_name = s.text(7);
  e.prompt_version = static_cast<int>(s.int64(8));
  if (!s.is_null(kEntryColumns)) e.generation = read_generation(s, kEntryColumns);
  return e;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

}  // namespace

StoreResult<std::vector<HistoryEntry>> Store::history(const HistoryQuery& query) {
  const HistorySql parts = history_sql(query, true);
  const std::string direction = query.descending ? " DESC" : " ASC";
  // One conversation has few rows: sorting them beats walking the whole time
  // index for them ('+' keeps SQLite from choosing that index for ORDER BY).
  const std::string sort = query.conversation_id && query.sort == HistorySort::kTime
                               ? "+u.created_ms"
                               : std::string(sort_column(query.sort));
  std::string sql =
      "SELECT u.id, u.conversation_id, c.title, u.created_ms, u.content, a.id, r.rating, p.name, pv.version, " +
      generation_columns("g.") + parts.from_where + " ORDER BY " + sort + direction;
  if (query.sort != HistorySort::kTime) sql += ", u.created_ms DESC";
  sql += ", u.id" + direction + " LIMIT ? OFFSET ?";
  return impl_->read("reading the prompt history", [&]() -> StoreResult<std::vector<HistoryEntry>> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare(sql));
    bind_all(stmt, parts.params);
    const int n = static_cast<int>(parts.params.size());
    stmt.bind(n + 1, std::int64_t{std::clamp(query.limit, 0, 10000)});
    stmt.bind(n + 2, std::int64_t{std::max(query.offset, 0)});
    std::vector<HistoryEntry> out;
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) return out;
      out.push_back(read_entry(stmt));
    }
  });
}

StoreResult<std::int64_t> Store::history_count(const HistoryQuery& query) {
  const HistorySql parts = history_sql(query, false);
  return impl_->read("counting the prompt history", [&]() -> StoreResult<std::int64_t> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare("SELECT count(*)" + parts.from_where));
    bind_all(stmt, parts.params);
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    return row ? stmt.int64(0) : 0;
  });
}

StoreResult<VersionMetrics> Store::version_metrics(Id version_id) {
  return impl_->read("measuring prompt version " + std::to_string(version_id), [&]() -> StoreResult<VersionMetrics> {
    STORE_TRY(load_version(impl_->db, version_id));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("SELECT g.ttft_ms, g.decode_tok_s, g.generated_tokens, g.finish_reason, "
                                             "r.rating FROM generations g LEFT JOIN ratings r ON r.message_id = "
                                             "g.message_id WHERE g.prompt_version_id = ?"));
    stmt.bind(1, version_id);
    VersionMetrics m;
    m.version_id = version_id;
    std::vector<double> ttft, tps, length;
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) break;
      ++m.answers;
      ttft.push_back(stmt.real(0));
      tps.push_back(stmt.real(1));
      length.push_back(static_cast<double>(stmt.int64(2)));
      ++m.finish_reasons[stmt.text(3)];
      if (!stmt.is_null(4)) ++(stmt.int64(4) > 0 ? m.rated_up : m.rated_down);
    }
    m.median_ttft_ms = median(std::move(ttft));
    m.median_decode_tok_s = median(std::move(tps));
    m.median_generated_tokens = median(std::move(length));
    return m;
  });
}

}  // namespace hearth::store
