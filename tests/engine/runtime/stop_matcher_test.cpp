#include "engine/runtime/stop_matcher.h"

#include <gtest/gtest.h>

namespace hearth::runtime {
namespace {

// Feeds pieces; returns the emitted text and whether a stop matched.
std::pair<std::string, bool> feed(std::vector<std::string> stops, const std::vector<std::string>& pieces) {
  StopMatcher m(std::move(stops));
  std::string out;
  for (const auto& p : pieces) {
    StopMatcher::Output o = m.push(p);
    out += o.text;
    if (o.stopped) return {out, true};
  }
  return {out + m.flush(), false};
}

TEST(StopMatcher, PassesTextThroughWithoutStops) {
  EXPECT_EQ(feed({}, {"ab", "cd"}), std::make_pair(std::string("abcd"), false));
}

TEST(StopMatcher, MatchSpanningPiecesIsNeverEmitted) {
  EXPECT_EQ(feed({"END"}, {"hello E", "N", "D world"}), std::make_pair(std::string("hello "), true));
  EXPECT_EQ(feed({"\n\n"}, {"a\n", "\nb"}), std::make_pair(std::string("a"), true));
}

TEST(StopMatcher, HoldsOnlyWhatCouldStillMatch) {
  StopMatcher m({"abc"});
  EXPECT_EQ(m.push("xxa").text, "xx");
  EXPECT_EQ(m.held_bytes(), 1u);
  EXPECT_EQ(m.push("b").text, "");
  EXPECT_EQ(m.push("x").text, "abx");  // "abx" can no longer become "abc"
  EXPECT_EQ(m.held_bytes(), 0u);
}

TEST(StopMatcher, EarliestOfSeveralStopsWins) {
  EXPECT_EQ(feed({"yz", "b"}, {"a", "byz"}), std::make_pair(std::string("a"), true));
  EXPECT_EQ(feed({"bc", "abcd"}, {"xab", "cd"}), std::make_pair(std::string("x"), true));  // "abcd" starts first
}

TEST(StopMatcher, FlushReturnsAPartialMatchAtTheEnd) {
  EXPECT_EQ(feed({"STOP"}, {"go ST"}), std::make_pair(std::string("go ST"), false));
}

TEST(StopMatcher, MultiByteCharactersStayWhole) {
  // "é" is C3 A9; the stop "éa" is held as a whole character, never split.
  StopMatcher m(
      {"\xC3\xA9"
       "a"});
  EXPECT_EQ(m.push("x\xC3\xA9").text, "x");
  EXPECT_EQ(m.push("b").text,
            "\xC3\xA9"
            "b");
}

}  // namespace
}  // namespace hearth::runtime
