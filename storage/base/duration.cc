#include "storage/base/duration.h"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace seer {

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0) || std::isinf(seconds) || seconds > 1e15) return "?";
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace seer
