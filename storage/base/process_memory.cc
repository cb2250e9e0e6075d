#include "storage/base/process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace seer {
namespace {

// The value of `key` ("VmHWM:", "VmRSS:") in /proc/self/status, in bytes, or -1.
int64_t StatusBytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      std::istringstream fields(line.substr(std::string(key).size()));
      int64_t kb = -1;
      fields >> kb;
      return kb < 0 ? -1 : kb * 1024;
    }
  }
  return -1;
}

}  // namespace

int64_t PeakRssBytes() { return StatusBytes("VmHWM:"); }

int64_t ResidentBytesNow() { return StatusBytes("VmRSS:"); }

}  // namespace seer
