// Prompt history review: every user message sent, with the newest answer under
// it and that answer's generation record, filtered and sorted in SQL; and the
// per-version metrics. The indexes of schema 2 (messages_by_role_time,
// messages_children, generations_by_*) keep a page of 100,000 messages fast
// (docs/benchmarks.md).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

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

// The rows of a page sorted by a measurement whose newest answer has a
// generation record: walked from generations in the order of that column's
// index (schema 3), so the page stops after `limit` rows.
std::string measured_from() {
  return " FROM generations g CROSS JOIN messages a ON a.id = g.message_id"
         " CROSS JOIN messages u ON u.id = a.parent_id AND u.answer_id = a.id"
         " JOIN conversations c ON c.id = u.conversation_id"
         " LEFT JOIN prompt_versions pv ON pv.id = g.prompt_version_id"
         " LEFT JOIN prompts p ON p.id = pv.prompt_id"
         " LEFT JOIN ratings r ON r.message_id = a.id WHERE u.role = 'user'";
}

// The rows whose newest answer has no generation record (or that have no answer).
std::string unmeasured_from() {
  return " FROM messages u JOIN conversations c ON c.id = u.conversation_id"
         " LEFT JOIN messages a ON a.id = u.answer_id LEFT JOIN generations g ON g.message_id = a.id"
         " LEFT JOIN prompt_versions pv ON pv.id = g.prompt_version_id"
         " LEFT JOIN prompts p ON p.id = pv.prompt_id"
         " LEFT JOIN ratings r ON r.message_id = a.id WHERE u.role = 'user' AND g.message_id IS NULL";
}

// The filters on indexed generation columns, as " AND ..." clauses on `g`
// (`g` is "g." or "+g.": a '+' keeps SQLite from starting at their indexes).
void add_generation_filters(const HistoryQuery& q, const std::string& g, HistorySql& out) {
  const auto add = [&](const std::string& clause, Param value) {
    out.from_where += " AND " + clause;
    out.params.push_back(std::move(value));
  };
  if (q.prompt_id) {
    add(g + "prompt_version_id IN (SELECT id FROM prompt_versions WHERE prompt_id = ?)", *q.prompt_id);
  }
  if (q.prompt_version_id) add(g + "prompt_version_id = ?", *q.prompt_version_id);
  if (!q.model.empty()) add(g + (is_model_path(q.model) ? "model_path = ?" : "model_name = ?"), q.model);
  if (!q.quantization.empty()) add(g + "quantization = ?", q.quantization);
  if (!q.finish_reason.empty()) add(g + "finish_reason = ?", q.finish_reason);
}

// `walk`: the query walks a measurement's index (measured_page), testing the
// generation filters on each row it meets instead of starting at their indexes.
HistorySql history_sql(const HistoryQuery& q, std::string from, bool walk = false) {
  HistorySql out{std::move(from), {}};
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
  add_generation_filters(q, walk ? "+g." : "g.", out);
  if (q.rating == Rating::kNone) out.from_where += " AND g.message_id IS NOT NULL AND r.rating IS NULL";
  if (q.rating == Rating::kUp || q.rating == Rating::kDown) {
    add("r.rating = ?", std::int64_t{static_cast<int>(*q.rating)});
  }
  if (q.since_ms) add("u.created_ms >= ?", *q.since_ms);
  if (q.until_ms) add("u.created_ms < ?", *q.until_ms);
  return out;
}

// The ORDER BY terms of a sort column, without their direction.
std::vector<std::string_view> sort_terms(HistorySort sort) {
  switch (sort) {
    case HistorySort::kTime:
      return {"u.created_ms"};
    case HistorySort::kConversation:
      return {"c.title COLLATE NOCASE"};
    case HistorySort::kModel:
      return {"g.model_name"};
    case HistorySort::kTtft:
      return {"g.ttft_ms"};
    case HistorySort::kDecodeTps:
      return {"g.decode_tok_s"};
    case HistorySort::kPromptTokens:
      return {"g.prompt_tokens"};
    case HistorySort::kGeneratedTokens:
      return {"g.generated_tokens"};
    case HistorySort::kFinishReason:
      return {"g.finish_reason"};
    case HistorySort::kRating:
      return {"coalesce(r.rating, 0)"};
    case HistorySort::kText:
      return {"u.content COLLATE NOCASE"};
    case HistorySort::kPromptVersion:
      return {"p.name COLLATE NOCASE", "pv.version"};
    case HistorySort::kQuantization:
      return {"g.quantization"};
    case HistorySort::kKvPrecision:
      return {"g.kv_precision"};
    case HistorySort::kDevice:
      return {"g.device"};
    case HistorySort::kTemperature:
      return {"g.temperature"};
    case HistorySort::kCachedTokens:
      return {"g.cached_tokens"};
  }
  return {"u.created_ms"};
}

// Sorts with an index of their own on generations (schema 3).
bool measurement_sort(HistorySort sort) {
  return sort == HistorySort::kTtft || sort == HistorySort::kDecodeTps || sort == HistorySort::kPromptTokens ||
         sort == HistorySort::kGeneratedTokens;
}

std::string order_by(const HistoryQuery& query, std::vector<std::string_view> terms) {
  const std::string direction = query.descending ? " DESC" : " ASC";
  std::string out = " ORDER BY ";
  // Rows without the value (no answer, no record) come last either way.
  for (const std::string_view term : terms) {
    out += std::string(term) + direction + " NULLS LAST, ";
  }
  if (query.sort != HistorySort::kTime) out += "u.created_ms DESC, ";
  return out + "u.id" + direction;
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

namespace {

const std::string& entry_columns() {
  static const std::string columns =
      "SELECT u.id, u.conversation_id, c.title, u.created_ms, u.content, a.id, r.rating, p.name, pv.version, " +
      generation_columns("g.");
  return columns;
}

// One page of `parts` in `order` (the caller holds the store's lock).
StoreResult<void> read_page(sql::Db& db, const HistorySql& parts, const std::string& order, std::int64_t limit,
                            std::int64_t offset, std::vector<HistoryEntry>& out) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                         db.prepare(entry_columns() + parts.from_where + order + " LIMIT ? OFFSET ?"));
  bind_all(stmt, parts.params);
  const int n = static_cast<int>(parts.params.size());
  stmt.bind(n + 1, limit);
  stmt.bind(n + 2, offset);
  for (;;) {
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    if (!row) return {};
    out.push_back(read_entry(stmt));
  }
}

StoreResult<std::int64_t> count_rows(sql::Db& db, const HistorySql& parts) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt, db.prepare("SELECT count(*)" + parts.from_where));
  bind_all(stmt, parts.params);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  return row ? stmt.int64(0) : 0;
}

// Whether a page sorted by a measurement walks that measurement's index,
// testing the generation filters on each row (it stops after `rows` matches:
// about rows x all / matching rows visited), rather than starts at a filter's
// own index and sorts every generation it selects (about matching rows).
// Walking wins when the filter keeps many rows (one model of three: 16,635
// rows sorted in 124 ms, against ~300 visited), sorting when it keeps few (a
// model with no answers: the walk would read the whole index). The counts are
// of the generations table's indexes alone: a few ms.
StoreResult<bool> walk_measure_index(sql::Db& db, const HistoryQuery& query, std::int64_t rows) {
  if (!indexed_generation_filter(query)) return true;
  HistorySql matching{" FROM generations g WHERE 1", {}};
  add_generation_filters(query, "g.", matching);
  STORE_ASSIGN_OR_RETURN(const std::int64_t selected, count_rows(db, matching));
  STORE_ASSIGN_OR_RETURN(const std::int64_t all, count_rows(db, HistorySql{" FROM generations", {}}));
  return static_cast<double>(selected) * static_cast<double>(selected) >=
         static_cast<double>(all) * static_cast<double>(std::max<std::int64_t>(rows, 1));
}

// A page sorted by a measurement: the measured rows in index order, then the
// unmeasured ones (NULLS LAST, as every sort) by time. Only a page that
// reaches past the measured rows counts them.
StoreResult<std::vector<HistoryEntry>> measured_page(sql::Db& db, const HistoryQuery& query) {
  const std::int64_t limit = std::clamp(query.limit, 0, 10000), offset = std::max(query.offset, 0);
  STORE_ASSIGN_OR_RETURN(const bool walk, walk_measure_index(db, query, offset + limit));
  const HistorySql measured = history_sql(query, measured_from(), walk);
  const std::optional<HistorySql> unmeasured =
      filters_generation(query) ? std::nullopt : std::optional<HistorySql>(history_sql(query, unmeasured_from()));
  const std::string by_measure = order_by(query, sort_terms(query.sort));
  const std::string by_time = order_by(query, {});
  std::vector<std::pair<const HistorySql*, const std::string*>> parts{{&measured, &by_measure}};
  if (unmeasured) parts.emplace_back(&*unmeasured, &by_time);
  std::vector<HistoryEntry> out;
  std::int64_t skip = offset;
  for (std::size_t i = 0; i < parts.size() && static_cast<std::int64_t>(out.size()) < limit; ++i) {
    const std::size_t before = out.size();
    STORE_TRY(read_page(db, *parts[i].first, *parts[i].second, limit - static_cast<std::int64_t>(before), skip, out));
    if (out.size() > before) {
      skip = 0;  // this part ended inside the page: the next one starts at its beginning
    } else if (i + 1 < parts.size()) {
      STORE_ASSIGN_OR_RETURN(const std::int64_t rows, count_rows(db, *parts[i].first));
      skip = std::max<std::int64_t>(skip - rows, 0);
    }
  }
  return out;
}

}  // namespace

StoreResult<std::vector<HistoryEntry>> Store::history(const HistoryQuery& query) {
  return impl_->read("reading the prompt history", [&]() -> StoreResult<std::vector<HistoryEntry>> {
    if (measurement_sort(query.sort) && fts_query(query.search).empty()) return measured_page(impl_->db, query);
    const HistorySql parts = history_sql(query, history_from(query, true));
    // One conversation has few rows: sorting them beats walking the whole time
    // index for them ('+' keeps SQLite from choosing that index for ORDER BY).
    const auto terms = query.conversation_id && query.sort == HistorySort::kTime
                           ? std::vector<std::string_view>{"+u.created_ms"}
                           : sort_terms(query.sort);
    std::vector<HistoryEntry> out;
    STORE_TRY(read_page(impl_->db, parts, order_by(query, terms), std::clamp(query.limit, 0, 10000),
                        std::max(query.offset, 0), out));
    return out;
  });
}

StoreResult<std::int64_t> Store::history_count(const HistoryQuery& query) {
  const HistorySql parts = history_sql(query, history_from(query, false));
  return impl_->read("counting the prompt history",
                     [&]() -> StoreResult<std::int64_t> { return count_rows(impl_->db, parts); });
}

StoreResult<HistoryFacets> Store::history_facets() {
  return impl_->read("reading the history's filter values", [&]() -> StoreResult<HistoryFacets> {
    HistoryFacets out;
    const auto distinct = [&](std::string_view column, std::vector<std::string>& values) -> StoreResult<void> {
      STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                             impl_->db.prepare("SELECT DISTINCT " + std::string(column) + " FROM generations WHERE " +
                                               std::string(column) + " <> '' ORDER BY 1"));
      for (;;) {
        STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
        if (!row) return {};
        values.push_back(stmt.text(0));
      }
    };
    STORE_TRY(distinct("model_name", out.models));
    STORE_TRY(distinct("quantization", out.quantizations));
    STORE_TRY(distinct("finish_reason", out.finish_reasons));
    return out;
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
