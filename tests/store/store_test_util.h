// Helpers shared by the store tests: a temporary directory and a store on a
// fake clock (strictly increasing milliseconds, so recency order is exact).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "store/store.h"

namespace hearth::store::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hearth-store-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline StoreOptions options_for(const std::string& path) {
  StoreOptions o;
  o.path = path;
  auto t = std::make_shared<TimeMs>(1'700'000'000'000);
  o.clock = [t] { return ++*t; };
  return o;
}

// Opens or fails the test.
inline std::unique_ptr<Store> open_store(const StoreOptions& options) {
  auto s = Store::open(options);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().describe());
  return s.ok() ? std::move(s).value() : nullptr;
}

// The value of a StoreResult, failing the test (and aborting it) on error.
#define ASSERT_STORE_OK_AND_ASSIGN(lhs, expr)                                                                        \
  auto STORE_CONCAT_(store_test_, __LINE__) = (expr);                                                                \
  ASSERT_TRUE(STORE_CONCAT_(store_test_, __LINE__).ok()) << STORE_CONCAT_(store_test_, __LINE__).error().describe(); \
  lhs = std::move(STORE_CONCAT_(store_test_, __LINE__)).value()

#define ASSERT_STORE_OK(expr)                                    \
  do {                                                           \
    auto store_ok_ = (expr);                                     \
    ASSERT_TRUE(store_ok_.ok()) << store_ok_.error().describe(); \
  } while (0)

}  // namespace hearth::store::testing
