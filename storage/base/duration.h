// Durations for people: "42s", "3m07s", "2h05m" (rounded to the second; "?" for a
// negative, NaN or infinite value, e.g. an ETA before any progress).
#pragma once

#include <string>

namespace seer {

std::string FormatDuration(double seconds);

}  // namespace seer
