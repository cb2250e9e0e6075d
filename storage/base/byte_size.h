// Byte sizes as people write them: FormatBytes for messages ("1.5 GiB") and
// ParseBytes for flags and configs ("512M", "2G", "1.5GiB"; powers of 1024).
#pragma once

#include <cstdint>
#include <string>

#include "storage/base/status.h"

namespace seer {

// "1.5 GiB", "512 MiB", "17 B".
std::string FormatBytes(int64_t bytes);
// Parses "4096", "512K", "512M", "2G", "1.5GiB", "1T" (powers of 1024) into bytes.
// Errors are kInvalidArgument naming the text.
Result<int64_t> ParseBytes(const std::string& text);

}  // namespace seer
