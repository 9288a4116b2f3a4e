// Schema migrations: a database at every earlier version opens and migrates to
// the latest, keeping its rows; newer databases and failed steps are refused
// without damage.
#include <functional>
#include <vector>

#include "store/schema.h"
#include "store/sqlite_db.h"
#include "tests/store/store_test_util.h"

namespace hearth::store {
namespace {

using testing::TempDir;

// Per version k: rows written with version k's schema, and a check, run on the
// migrated store, that they survived. Adding schema version N: append an entry
// for version N-1 (written with raw SQL of that version), so every old version
// keeps being migrated in this test.
struct Fixture {
  std::function<void(sql::Db&)> seed;
  std::function<void(Store&)> check;
};

std::vector<Fixture> fixtures() {
  std::vector<Fixture> f;
  // Version 0: a new, empty file.
  f.push_back({[](sql::Db&) {}, [](Store& s) { EXPECT_TRUE(s.list_conversations()->empty()); }});
  return f;
}

TEST(StoreMigration, EveryEarlierVersionMigratesToTheLatest) {
  const int latest = latest_schema_version();
  const std::vector<Fixture> all = fixtures();
  ASSERT_EQ(static_cast<int>(all.size()), latest) << "add a fixture for each schema version before the latest";
  for (int from = 0; from < latest; ++from) {
    SCOPED_TRACE("from schema version " + std::to_string(from));
    TempDir dir;
    const std::string path = dir.file("hearth.db");
    {
      auto db = sql::Db::open(path, {});
      ASSERT_TRUE(db.ok()) << db.error().describe();
      ASSERT_TRUE(migrate(*db, from).ok());
      ASSERT_EQ(*db->query_int("PRAGMA user_version"), from);
      all[static_cast<std::size_t>(from)].seed(*db);
    }
    auto store = testing::open_store(testing::options_for(path));
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), latest);
    all[static_cast<std::size_t>(from)].check(*store);
    // The migrated schema works: a conversation with a message, found by search.
    auto conv = store->create_conversation("Migrated");
    ASSERT_TRUE(conv.ok());
    ASSERT_TRUE(store->add_message({*conv, std::nullopt, Role::kUser, "hello migration"}).ok());
    EXPECT_EQ(store->search("migration")->size(), 1u);
    store.reset();
    auto db = sql::Db::open(path, {});
    EXPECT_EQ(*db->query_int("PRAGMA user_version"), latest);
  }
}

TEST(StoreMigration, OpensInWalModeWithTheLatestVersion) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  ASSERT_NE(testing::open_store(testing::options_for(path)), nullptr);
  auto db = sql::Db::open(path, {});
  ASSERT_TRUE(db.ok());
  auto mode = db->prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  ASSERT_TRUE(*mode->step());
  EXPECT_EQ(mode->text(0), "wal");
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), latest_schema_version());
}

TEST(StoreMigration, NewerDatabaseIsRefusedAndLeftAlone) {
  TempDir dir;
  const std::string path = dir.file("hearth.db");
  const int newer = latest_schema_version() + 1;
  {
    auto db = sql::Db::open(path, {});
    ASSERT_TRUE(db->exec("CREATE TABLE future (x); PRAGMA user_version = " + std::to_string(newer)).ok());
  }
  auto store = Store::open(testing::options_for(path));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, StoreErrorCode::kUnsupported);
  EXPECT_NE(store.error().message.find("newer"), std::string::npos) << store.error().message;
  auto db = sql::Db::open(path, {});
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), newer);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'conversations'"), 0);
}

TEST(StoreMigration, FailedStepKeepsThePreviousVersion) {
  TempDir dir;
  auto db = sql::Db::open(dir.file("x.db"), {});
  ASSERT_TRUE(db.ok());
  const Migration steps[] = {{1, "CREATE TABLE a (x)"}, {2, "CREATE TABLE b (x); CREATE TABLE a (y)"}};
  auto r = migrate(*db, 2, steps);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema version 2"), std::string::npos) << r.error().message;
  EXPECT_EQ(*db->query_int("PRAGMA user_version"), 1);
  EXPECT_EQ(*db->query_int("SELECT count(*) FROM sqlite_master WHERE name IN ('a', 'b')"), 1);
}

}  // namespace
}  // namespace hearth::store
