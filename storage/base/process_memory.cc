#include "storage/base/process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace seer {

int64_t PeakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      int64_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  return -1;
}

}  // namespace seer
