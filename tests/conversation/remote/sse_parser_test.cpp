// The SSE parser on tiny inputs with exact expectations, and the same inputs
// fed in every split (one byte at a time, two pieces at each offset): events
// must not depend on where the network cut the bytes.
#include "conversation/remote/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hearth::remote {
namespace {

using Events = std::vector<std::string>;

Events whole(std::string_view bytes, SseLimits limits = {}) {
  SseParser p(limits);
  Events out;
  EXPECT_TRUE(p.feed(bytes, out)) << *p.error();
  return out;
}

// Every two-piece split, then byte by byte: the same events as in one piece.
void expect_split_invariant(std::string_view bytes) {
  const Events one = whole(bytes);
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    SseParser p;
    Events out;
    ASSERT_TRUE(p.feed(bytes.substr(0, cut), out));
    ASSERT_TRUE(p.feed(bytes.substr(cut), out));
    EXPECT_EQ(out, one) << "cut at " << cut;
  }
  SseParser p;
  Events out;
  for (const char c : bytes) ASSERT_TRUE(p.feed(std::string_view(&c, 1), out));
  EXPECT_EQ(out, one) << "byte by byte";
}

struct Case {
  const char* what;
  std::string bytes;
  Events events;
};

TEST(SseParser, TableOfStreams) {
  const std::vector<Case> cases = {
      {"one event", "data: a\n\n", {"a"}},
      {"no space after the colon", "data:a\n\n", {"a"}},
      {"only one space is dropped", "data:  a\n\n", {" a"}},
      {"two data lines join with LF", "data: a\ndata: b\n\n", {"a\nb"}},
      {"CRLF endings", "data: a\r\n\r\ndata: b\r\n\r\n", {"a", "b"}},
      {"CR endings", "data: a\r\rdata: b\r\r", {"a", "b"}},
      {"comments and other fields ignored", ": ping\nevent: x\nid: 3\nretry: 10\ndata: a\n\n", {"a"}},
      {"unknown field and a field without colon", "foo: 1\ndata\n\n", {""}},
      {"an event with no data is not dispatched", "event: x\n\n\n\n", {}},
      {"unfinished event at the end is held", "data: a\n\ndata: b\n", {"a"}},
      {"a BOM opens the stream",
       "\xEF\xBB\xBF"
       "data: a\n\n",
       {"a"}},
      {"a BOM later is data", "data: \xEF\xBB\xBF\n\n", {"\xEF\xBB\xBF"}},
      {"binary bytes pass through", std::string("data: \x01\x00\xff\n\n", 11), {std::string("\x01\x00\xff", 3)}},
      {"[DONE] is data like any other", "data: x\n\ndata: [DONE]\n\n", {"x", "[DONE]"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(whole(c.bytes), c.events);
    expect_split_invariant(c.bytes);
  }
}

TEST(SseParser, PendingSaysAnEventWasCut) {
  SseParser p;
  Events out;
  ASSERT_TRUE(p.feed("data: a\n\n", out));
  EXPECT_FALSE(p.pending());
  ASSERT_TRUE(p.feed("data: {\"cho", out));
  EXPECT_TRUE(p.pending());
  ASSERT_TRUE(p.feed("\n", out));
  EXPECT_TRUE(p.pending());  // a data line without the blank line that ends its event
}

TEST(SseParser, LongLineFailsAndStaysFailed) {
  SseLimits limits;
  limits.max_line_bytes = 16;
  SseParser p(limits);
  Events out;
  EXPECT_TRUE(p.feed("data: 0123456789\n\n", out));  // exactly 16 bytes: allowed
  ASSERT_EQ(out.size(), 1u);
  // A line that never ends: fed in pieces, it fails once it passes the limit.
  bool ok = true;
  for (int i = 0; i < 10 && ok; ++i) ok = p.feed("xxxx", out);
  EXPECT_FALSE(ok);
  ASSERT_TRUE(p.error());
  EXPECT_NE(p.error()->find("longer than 16 bytes"), std::string::npos) << *p.error();
  EXPECT_FALSE(p.feed("\n\ndata: b\n\n", out));
  EXPECT_EQ(out.size(), 1u);
}

TEST(SseParser, LongEventFails) {
  SseLimits limits;
  limits.max_line_bytes = 64;
  limits.max_event_bytes = 20;
  SseParser p(limits);
  Events out;
  std::string many;
  for (int i = 0; i < 10; ++i) many += "data: abcd\n";  // 10 short lines, one event of 49 bytes
  EXPECT_FALSE(p.feed(many, out));
  EXPECT_NE(p.error()->find("event of the event stream is longer than 20"), std::string::npos);
  EXPECT_TRUE(out.empty());
}

TEST(SseParser, MemoryStaysBoundedOnEndlessBlankLinesAndComments) {
  SseParser p;
  Events out;
  const std::string noise(4096, '\n');
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(p.feed(noise, out));  // 1 MiB of blank lines: nothing held
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(p.feed(": keep-alive\n", out));
  EXPECT_FALSE(p.pending());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace hearth::remote
