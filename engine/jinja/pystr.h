// Python str semantics over UTF-8 std::strings: Python strings are sequences
// of code points, so lengths, indices and slices count code points, and
// whitespace is what str.isspace() accepts (Unicode spaces included).
// Bytes that are not valid UTF-8 decode to U+DC80 + byte (Python's
// surrogateescape) and encode back to the same byte: nothing is lost.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::jinja::pystr {

std::u32string decode(std::string_view utf8);
std::string encode(std::u32string_view cps);
void append_utf8(std::string& out, char32_t cp);

std::size_t length(std::string_view utf8);  // in code points

bool is_space(char32_t cp);  // Python str.isspace()

// strip / lstrip / rstrip: removes the code points in `chars`, or whitespace when it is null.
std::string strip(std::string_view s, bool left, bool right, const std::u32string* chars);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);
std::string title_jinja(std::string_view s);  // jinja2's `title` filter word rule

// str.split(sep, maxsplit); sep null splits on whitespace runs.
std::vector<std::string> split(std::string_view s, const std::string* sep, long maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::string* sep, long maxsplit);
std::vector<std::string> splitlines(std::string_view s, bool keepends);
std::string replace(std::string_view s, std::string_view old_s, std::string_view new_s, long count);
long count(std::string_view s, std::string_view sub);
long find(std::string_view s, std::string_view sub, bool reverse);  // code point index or -1

}  // namespace hearth::jinja::pystr
