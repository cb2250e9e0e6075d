// Memory this process has used, as the kernel reports it (/proc/self/status).
#pragma once

#include <cstdint>

namespace seer {

// Peak resident set size of this process in bytes (VmHWM), or -1 if unknown.
int64_t PeakRssBytes();
// Resident set size now (VmRSS) in bytes, or -1 if unknown.
int64_t ResidentBytesNow();

}  // namespace seer
