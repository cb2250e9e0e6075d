#include "storage/io/block_reader.h"

namespace seer {

Result<IoMode> ParseIoMode(const std::string& text) { return ParseName(kIoModeNames, text, "I/O mode"); }

const char* IoModeName(IoMode mode) { return NameOf(kIoModeNames, mode); }

}  // namespace seer
