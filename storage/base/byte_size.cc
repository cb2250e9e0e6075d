#include "storage/base/byte_size.h"
#include "storage/base/parse_number.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace seer {

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

Result<int64_t> ParseBytes(const std::string& text) {
  auto bad = [&] {
    return InvalidArgument("invalid byte size '" + Excerpt(text) +
                           "' (expected e.g. 4096, 512K, 512M, 2G, 1.5GiB)");
  };
  if (text.empty()) return bad();
  const size_t pos = std::min(text.find_first_not_of("0123456789."), text.size());
  const std::optional<double> number = ParseNumber<double>(std::string_view(text).substr(0, pos));
  if (!number) return bad();
  const double value = *number;
  if (value < 0 || !std::isfinite(value)) return bad();
  std::string suffix = text.substr(pos);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double mult = 1;
  if (suffix.empty() || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") mult = 1024.0;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB") mult = 1024.0 * 1024 * 1024 * 1024;
  else return bad();
  // 2^63 bytes and more do not fit the int64 every size is held in (the cast would wrap).
  if (value * mult >= 9.2e18) return InvalidArgument("byte size '" + Excerpt(text) + "' is too large (at most 8 EiB)");
  return static_cast<int64_t>(value * mult);
}

}  // namespace seer
