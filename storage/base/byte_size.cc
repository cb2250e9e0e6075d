#include "storage/base/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace seer {

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

Result<int64_t> ParseBytes(const std::string& text) {
  auto bad = [&] {
    return InvalidArgument("invalid byte size '" + text +
                           "' (expected e.g. 4096, 512K, 512M, 2G, 1.5GiB)");
  };
  if (text.empty()) return bad();
  size_t pos = 0;
  double value;
  try {
    value = std::stod(text, &pos);
  } catch (...) {
    return bad();
  }
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
  return static_cast<int64_t>(value * mult);
}

}  // namespace seer
