// Full-text search over message text and conversation titles (FTS5).
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

// Each whitespace-separated word becomes a quoted prefix term ("word"*), so
// user text is never parsed as FTS5 syntax. Terms are ANDed. Empty: no terms.
std::string fts_query(std::string_view text) {
  std::string query;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
    std::size_t end = i;
    while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end])) == 0) ++end;
    if (end == i) break;
    if (!query.empty()) query += ' ';
    query += '"';
    for (const char c : text.substr(i, end - i)) {
      if (c == '"') query += '"';  // a quote inside a string is doubled
      query += c;
    }
    query += "\"*";
    i = end;
  }
  return query;
}

namespace {

// Message hits rank before title hits; within each, bm25 (lower is better).
constexpr std::string_view kSearchSql =
    "SELECT c.id, c.title, c.updated_ms, hit.message_id, hit.snip FROM ("
    " SELECT m.conversation_id AS cid, m.id AS message_id,"
    "  snippet(messages_fts, 0, ?2, ?3, '...', ?4) AS snip, bm25(messages_fts) AS rank"
    "  FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?1"
    " UNION ALL"
    " SELECT conversations_fts.rowid, NULL, snippet(conversations_fts, 0, ?2, ?3, '...', ?4),"
    "  bm25(conversations_fts) + 1000000.0 FROM conversations_fts WHERE conversations_fts MATCH ?1"
    ") AS hit JOIN conversations c ON c.id = hit.cid"
    " WHERE c.deleted_ms IS NULL AND (?5 OR c.archived = 0)"
    " ORDER BY c.updated_ms DESC, c.id DESC, hit.rank";

}  // namespace

StoreResult<std::vector<SearchHit>> Store::search(std::string_view text, const SearchOptions& options) {
  const std::string query = fts_query(text);
  return impl_->read("searching for \"" + std::string(text) + "\"", [&]() -> StoreResult<std::vector<SearchHit>> {
    std::vector<SearchHit> hits;
    if (query.empty() || options.limit <= 0) return hits;
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare(kSearchSql));
    stmt.bind(1, std::string_view(query)).bind(2, std::string_view(options.open_mark));
    stmt.bind(3, std::string_view(options.close_mark));
    stmt.bind(4, std::int64_t{std::clamp(options.snippet_tokens, 1, 64)});
    stmt.bind(5, std::int64_t{options.include_archived ? 1 : 0});
    std::set<Id> seen;
    while (hits.size() < static_cast<std::size_t>(options.limit)) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) break;
      const Id id = stmt.int64(0);
      if (!seen.insert(id).second) continue;  // rows of one conversation are adjacent, best first
      hits.push_back(SearchHit{id, stmt.text(1), stmt.int64(2), stmt.optional_int64(3), stmt.text(4)});
    }
    return hits;
  });
}

}  // namespace hearth::store
