// The prompt history query: every user prompt sent, newest first, each with
// its newest answer's generation; every filter alone, search, sort, paging.
#include <algorithm>

#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

struct Turn {
  std::string text;
  std::string model;
  std::string quantization;
  std::string finish;
  std::optional<Id> version;
  double ttft = 0;
  Rating rating = Rating::kNone;
};

class StoreHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::open_store(testing::options_for(dir_.file("hearth.db")));
    ASSERT_NE(store_, nullptr);
    v1_ = store_->add_prompt("pirate", {"Arr.", "", {}})->id;
    v2_ = store_->add_prompt_version(store_->find_prompt("pirate")->id, "Arr!")->id;
    w1_ = store_->add_prompt("helper", {"Help.", "", {}})->id;
    chat_ = *store_->create_conversation("Sailing");
    other_ = *store_->create_conversation("Cooking");
    // Oldest first; the fake clock makes every created time distinct.
    ids_.push_back(turn(chat_, {"hoist the sails", "smol", "Q4_1", "stop", v1_, 30, Rating::kUp}));
    ids_.push_back(turn(chat_, {"where is the treasure", "smol", "Q4_K_M", "length", v2_, 10, Rating::kDown}));
    ids_.push_back(turn(other_, {"bake bread", "gemma", "Q4_K_M", "stop", w1_, 20}));
    ids_.push_back(turn(other_, {"bake a treasure cake", "gemma", "Q4_1", "stop", std::nullopt, 40}));
    // A prompt never answered.
    ids_.push_back(*store_->add_message({other_, std::nullopt, Role::kUser, "unanswered question"}));
  }

  Id turn(Id conversation, const Turn& t) {
    const Id u = *store_->add_message({conversation, std::nullopt, Role::kUser, t.text});
    const Id a = *store_->begin_answer(conversation, u);
    GenerationRecord g;
    g.model_path = "/models/" + t.model + ".gguf";
    g.quantization = t.quantization;
    g.finish_reason = t.finish;
    g.prompt_version_id = t.version;
    g.ttft_ms = t.ttft;
    g.generated_tokens = static_cast<std::int64_t>(t.ttft);
    EXPECT_TRUE(store_->finish_message(a, {.tail = "answer to " + t.text, .generation = g}).ok());
    if (t.rating != Rating::kNone) {
      EXPECT_TRUE(store_->set_rating(a, t.rating).ok());
    }
    return u;
  }

  // The user message ids history(q) returns, in order.
  std::vector<Id> ids(const HistoryQuery& q) {
    auto rows = store_->history(q);
    EXPECT_TRUE(rows.ok()) << rows.error().describe();
    std::vector<Id> out;
    if (rows.ok()) {
      for (const HistoryEntry& e : *rows) out.push_back(e.message_id);
      EXPECT_EQ(*store_->history_count(q), static_cast<std::int64_t>(out.size()));
    }
    return out;
  }
  std::vector<Id> expect(std::initializer_list<int> indexes) {
    std::vector<Id> out;
    for (const int i : indexes) out.push_back(ids_[static_cast<std::size_t>(i)]);
    return out;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  Id v1_ = 0, v2_ = 0, w1_ = 0, chat_ = 0, other_ = 0;
  std::vector<Id> ids_;  // user messages, oldest first
};

TEST_F(StoreHistory, NewestFirstWithEverythingARowShows) {
  auto rows = store_->history({});
  ASSERT_TRUE(rows.ok()) << rows.error().describe();
  ASSERT_EQ(rows->size(), 5u);
  EXPECT_EQ(ids({}), expect({4, 3, 2, 1, 0}));
  const HistoryEntry& unanswered = (*rows)[0];
  EXPECT_FALSE(unanswered.answer_message_id.has_value());
  EXPECT_FALSE(unanswered.generation.has_value());
  const HistoryEntry& e = (*rows)[3];  // "where is the treasure"
  EXPECT_EQ(e.text, "where is the treasure");
  EXPECT_EQ(e.conversation_id, chat_);
  EXPECT_EQ(e.conversation_title, "Sailing");
  ASSERT_TRUE(e.generation.has_value());
  EXPECT_EQ(e.generation->model_name, "smol");  // the file name without .gguf
  EXPECT_EQ(e.generation->quantization, "Q4_K_M");
  EXPECT_EQ(e.prompt_name, "pirate");
  EXPECT_EQ(e.prompt_version, 2);
  EXPECT_EQ(e.rating, Rating::kDown);
  EXPECT_EQ(e.answer_message_id, e.generation->message_id);
}

TEST_F(StoreHistory, EachFilterAlone) {
  EXPECT_EQ(ids({.prompt_id = store_->find_prompt("pirate")->id}), expect({1, 0}));
  EXPECT_EQ(ids({.prompt_version_id = v1_}), expect({0}));
  EXPECT_EQ(ids({.model = "gemma"}), expect({3, 2}));
  EXPECT_EQ(ids({.model = "/models/smol.gguf"}), expect({1, 0}));  // the path works too
  EXPECT_EQ(ids({.quantization = "Q4_1"}), expect({3, 0}));
  EXPECT_EQ(ids({.finish_reason = "length"}), expect({1}));
  EXPECT_EQ(ids({.rating = Rating::kUp}), expect({0}));
  EXPECT_EQ(ids({.rating = Rating::kDown}), expect({1}));
  EXPECT_EQ(ids({.rating = Rating::kNone}), expect({3, 2}));  // answered, not rated
  EXPECT_EQ(ids({.conversation_id = other_}), expect({4, 3, 2}));
  const TimeMs t1 = store_->get_message(ids_[1])->created_ms;
  const TimeMs t3 = store_->get_message(ids_[3])->created_ms;
  EXPECT_EQ(ids({.since_ms = t1}), expect({4, 3, 2, 1}));
  EXPECT_EQ(ids({.until_ms = t3}), expect({2, 1, 0}));
  EXPECT_EQ(ids({.since_ms = t1, .until_ms = t3}), expect({2, 1}));
  EXPECT_TRUE(ids({.model = "nothing"}).empty());
  // Filters combine.
  EXPECT_EQ(ids({.model = "gemma", .quantization = "Q4_1"}), expect({3}));
}

TEST_F(StoreHistory, FullTextSearchOverPromptText) {
  EXPECT_EQ(ids({.search = "treasure"}), expect({3, 1}));
  EXPECT_EQ(ids({.search = "bake trea"}), expect({3}));         // every word, as a prefix
  EXPECT_EQ(ids({.search = "answer"}), expect({}));             // answers are not prompts
  EXPECT_TRUE(ids({.search = "\"unbalanced OR NOT"}).empty());  // FTS syntax taken literally: no error
  EXPECT_EQ(ids({.search = "   "}), expect({4, 3, 2, 1, 0}));   // no words: no filter
  EXPECT_EQ(ids({.search = "treasure", .conversation_id = chat_}), expect({1}));
}

TEST_F(StoreHistory, SortAndPage) {
  EXPECT_EQ(ids({.sort = HistorySort::kTtft, .descending = false}), expect({1, 2, 0, 3, 4}));  // NULL last
  EXPECT_EQ(ids({.sort = HistorySort::kTtft}), expect({3, 0, 2, 1, 4}));
  EXPECT_EQ(ids({.sort = HistorySort::kConversation, .descending = false}), expect({4, 3, 2, 1, 0}));
  EXPECT_EQ(ids({.sort = HistorySort::kRating}), expect({0, 4, 3, 2, 1}));
  EXPECT_EQ(ids({.descending = false}), expect({0, 1, 2, 3, 4}));
  auto page = store_->history({.limit = 2, .offset = 1});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].message_id, ids_[3]);
  EXPECT_EQ(*store_->history_count({.limit = 2, .offset = 1}), 5);  // limit and offset ignored
}

// Every sort column, both directions: pages of 2 put together are the whole
// list (the measurement sorts read their rows in two parts, schema 3's index
// order then the unanswered prompts).
TEST_F(StoreHistory, EverySortPagesConsistently) {
  for (int column = 0; column <= static_cast<int>(HistorySort::kCachedTokens); ++column) {
    for (const bool descending : {true, false}) {
      const auto sort = static_cast<HistorySort>(column);
      const std::vector<Id> all = ids({.sort = sort, .descending = descending});
      ASSERT_EQ(all.size(), 5u) << column;
      std::vector<Id> paged;
      for (int offset = 0; offset < 6; offset += 2) {
        auto page = store_->history({.limit = 2, .offset = offset, .sort = sort, .descending = descending});
        ASSERT_TRUE(page.ok()) << page.error().describe();
        for (const HistoryEntry& e : *page) paged.push_back(e.message_id);
      }
      EXPECT_EQ(paged, all) << "sort " << column << (descending ? " descending" : " ascending");
    }
  }
  EXPECT_EQ(ids({.sort = HistorySort::kText, .descending = false}), expect({3, 2, 0, 4, 1}));
  EXPECT_EQ(ids({.sort = HistorySort::kPromptVersion, .descending = true}), expect({1, 0, 2, 4, 3}));
  EXPECT_EQ(ids({.sort = HistorySort::kGeneratedTokens, .descending = false}), expect({1, 2, 0, 3, 4}));
  EXPECT_EQ(ids({.sort = HistorySort::kModel, .descending = false}), expect({3, 2, 1, 0, 4}));  // NULL last too
  // With a generation filter there are no unanswered rows to add.
  EXPECT_EQ(ids({.model = "smol", .sort = HistorySort::kTtft}), expect({0, 1}));
  auto past = store_->history({.limit = 2, .offset = 4, .sort = HistorySort::kTtft});
  ASSERT_TRUE(past.ok());
  ASSERT_EQ(past->size(), 1u);
  EXPECT_EQ(past->front().message_id, ids_[4]);  // the unanswered prompt, after the 4 measured ones
}

// A measurement sort with a filter that keeps many rows walks the
// measurement's index; with one that keeps few it sorts them: the same pages.
TEST_F(StoreHistory, AFilteredMeasurementSortGivesTheSamePagesEitherWay) {
  std::vector<std::pair<double, Id>> big;  // (ttft, user message) of model "big"
  for (int i = 0; i < 60; ++i) {
    const double ttft = static_cast<double>((i * 37) % 23);  // ties too: the newest of equals first
    big.emplace_back(ttft, turn(chat_, {"question " + std::to_string(i), "big", "Q8_0", "stop", std::nullopt, ttft}));
  }
  const Id rare = turn(other_, {"the rare one", "rare", "Q8_0", "stop", std::nullopt, 5});
  // Ids grow with time here: descending TTFT, then newest first.
  std::sort(big.begin(), big.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second > b.second; });
  std::vector<Id> want;
  for (const auto& [ttft, id] : big) want.push_back(id);
  for (const int limit : {5, 100}) {
    std::vector<Id> paged;
    for (int offset = 0; offset < 60; offset += limit) {
      auto page = store_->history({.model = "big", .limit = limit, .offset = offset, .sort = HistorySort::kTtft});
      ASSERT_TRUE(page.ok()) << page.error().describe();
      for (const HistoryEntry& e : *page) paged.push_back(e.message_id);
    }
    EXPECT_EQ(paged, want) << "pages of " << limit;
  }
  EXPECT_EQ(ids({.model = "rare", .sort = HistorySort::kTtft}), std::vector<Id>{rare});
  EXPECT_EQ(ids({.model = "none", .sort = HistorySort::kTtft}), std::vector<Id>{});
  auto top = store_->history({.model = "big", .finish_reason = "stop", .limit = 3, .sort = HistorySort::kTtft});
  ASSERT_TRUE(top.ok()) << top.error().describe();
  std::vector<Id> top_ids;
  for (const HistoryEntry& e : *top) top_ids.push_back(e.message_id);
  EXPECT_EQ(top_ids, std::vector<Id>(want.begin(), want.begin() + 3));
}

TEST_F(StoreHistory, FacetsListWhatAnswersRecorded) {
  ASSERT_STORE_OK_AND_ASSIGN(const HistoryFacets f, store_->history_facets());
  EXPECT_EQ(f.models, (std::vector<std::string>{"gemma", "smol"}));
  EXPECT_EQ(f.quantizations, (std::vector<std::string>{"Q4_1", "Q4_K_M"}));
  EXPECT_EQ(f.finish_reasons, (std::vector<std::string>{"length", "stop"}));
}

TEST_F(StoreHistory, NewestAnswerAndTrash) {
  // A regenerated answer replaces the row's generation.
  const Id old_answer = *store_->history({.limit = 1, .offset = 4})->front().answer_message_id;
  const Id again = *store_->regenerate(old_answer);
  GenerationRecord g;
  g.model_path = "/models/other.gguf";
  g.finish_reason = "stop";
  ASSERT_STORE_OK(store_->finish_message(again, {.tail = "x", .generation = g}));
  auto oldest = store_->history({.limit = 1, .descending = false});
  ASSERT_TRUE(oldest.ok());
  EXPECT_EQ(oldest->front().answer_message_id, again);
  EXPECT_EQ(oldest->front().generation->model_name, "other");
  EXPECT_EQ(oldest->front().rating, Rating::kNone);  // the new answer is not rated

  ASSERT_STORE_OK(store_->delete_conversation(other_));
  EXPECT_EQ(ids({}), expect({1, 0}));
  EXPECT_EQ(ids({.include_deleted = true}).size(), 5u);
}

}  // namespace
}  // namespace hearth::store
