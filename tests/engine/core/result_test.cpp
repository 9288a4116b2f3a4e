#include "hearth/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace hearth {
namespace {

Result<int> parse_positive(int x) {
  if (x <= 0) return make_error(ErrorCode::kInvalidArgument, "x must be positive, got " + std::to_string(x));
  return x;
}

Result<int> doubled(int x) {
  HEARTH_ASSIGN_OR_RETURN(int v, parse_positive(x));
  return 2 * v;
}

Result<void> check(int x) {
  HEARTH_TRY(parse_positive(x));
  return {};
}

TEST(Result, HoldsValueOrError) {
  auto good = doubled(21);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  auto bad = doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message, "x must be positive, got -1");
  EXPECT_EQ(bad.error().describe(), "invalid argument: x must be positive, got -1");
}

TEST(Result, VoidPropagates) {
  EXPECT_TRUE(check(3).ok());
  auto r = check(0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST(Result, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r(std::make_unique<int>(7));
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

}  // namespace
}  // namespace hearth
