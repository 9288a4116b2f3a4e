// One member of a zip file (a wheel) found and extracted with every size and
// offset checked against the file: the end-of-central-directory record (and
// its zip64 form), the central directory entry, the local header, the data.
// Members are stored or DEFLATE-compressed (zlib's raw inflate); the output's
// size and CRC-32 must be the headers'. Encrypted members are refused.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "hearth/result.h"

namespace hearth::models::install {

struct ZipMember {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflate
  std::uint32_t crc32 = 0;
  std::uint64_t compressed_size = 0;  // bytes in the zip
  std::uint64_t size = 0;             // bytes once extracted
  std::uint64_t data_offset = 0;      // where the compressed bytes start
};

// Finds `name` in the zip at `zip`. Errors name the zip, the member and the field that is wrong.
Result<ZipMember> find_zip_member(const std::filesystem::path& zip, std::string_view name);

// Receives the extracted bytes in order; an error stops the extraction.
using ChunkSink = std::function<Result<void>(const char* data, std::size_t size)>;

// Streams `member` out of `zip` into `sink`; `cancel` (may be null) is checked for each chunk.
Result<void> extract_zip_member(const std::filesystem::path& zip, const ZipMember& member, const ChunkSink& sink,
                                const std::atomic<bool>* cancel);

}  // namespace hearth::models::install
