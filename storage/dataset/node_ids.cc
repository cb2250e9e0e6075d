#include "storage/dataset/node_ids.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "storage/base/file_io.h"

namespace seer {

void PutBigEndian(uint64_t v, char* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xffu);
    v >>= 8;
  }
}

uint64_t GetBigEndian(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}


bool CanonicalIntegerId(std::string_view id, int64_t* value) {
  if (id.empty() || id.size() > 19 || (id.size() > 1 && id[0] == '0')) return false;
  uint64_t v = 0;
  for (char c : id) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return false;
  *value = static_cast<int64_t>(v);
  return true;
}

namespace {

// The length of the valid UTF-8 sequence at s[0] (s[0] >= 0x80), or 0 (overlong forms,
// surrogates and code points above U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

const char* IdRoundTripProblem(std::string_view id) {
  if (id.empty()) return nullptr;
  if (id.front() == ' ' || id.back() == ' ') return "a blank at its start or end (line readers trim it)";
  // Eight bytes at a time while they are all printable ASCII or spaces (0x20..0x7e): a
  // byte below 0x20 borrows into its high bit, one at 0x7f..0xff has it after adding 1.
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  size_t start = 0;
  for (; start + 8 <= id.size(); start += 8) {
    uint64_t x;
    std::memcpy(&x, id.data() + start, 8);
    if ((((x - 0x20 * kOnes) & ~x) | x | (x + kOnes)) & kHigh) break;
  }
  for (size_t i = start; i < id.size();) {
    const unsigned char c = static_cast<unsigned char>(id[i]);
    if (c > 0x20 && c < 0x7f) {  // the common case: printable ASCII
      ++i;
      continue;
    }
    if (c == ' ') {
      ++i;
      continue;
    }
    if (c == '\n' || c == '\r') return "a line break (\\n or \\r)";
    if (c == 0) return "a NUL byte";
    if (c < 0x80) return "a control character (tabs and other C0 controls split fields or lines in readers)";
    const size_t n = Utf8SequenceLength(id.substr(i));
    if (n == 0) return "invalid UTF-8";
    // U+0085, U+2028, U+2029: line breaks to Python's str.splitlines and others.
    if ((n == 2 && c == 0xC2 && static_cast<unsigned char>(id[i + 1]) == 0x85) ||
        (n == 3 && c == 0xE2 && static_cast<unsigned char>(id[i + 1]) == 0x80 &&
         (static_cast<unsigned char>(id[i + 2]) == 0xA8 || static_cast<unsigned char>(id[i + 2]) == 0xA9))) {
      return "a Unicode line break (U+0085, U+2028 or U+2029)";
    }
    i += n;
  }
  return nullptr;
}

std::string EscapeId(std::string_view id, size_t max_chars) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < id.size() && i < max_chars; ++i) {
    const unsigned char c = static_cast<unsigned char>(id[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (id.size() > max_chars) out += "... (" + std::to_string(id.size()) + " bytes)";
  return out;
}

void IdSortKeyInto(std::string_view id, std::string* key) {
  int64_t v;
  if (CanonicalIntegerId(id, &v)) {
    key->assign(9, '\0');
    PutBigEndian(static_cast<uint64_t>(v), key->data() + 1);
    return;
  }
  key->assign(1, '\1');
  key->append(id);
}

std::string IdSortKey(std::string_view id) {
  std::string key;
  IdSortKeyInto(id, &key);
  return key;
}

std::string IdFromSortKey(std::string_view key) {
  if (key.size() == 9 && key[0] == '\0') return std::to_string(GetBigEndian(key.data() + 1));
  return std::string(key.substr(1));
}

Result<std::vector<std::string>> LoadNodeIds(const std::string& path, int64_t expected) {
  SEER_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  std::vector<std::string> ids;
  std::string previous_key;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) {
      return Corrupt(path + ":" + std::to_string(ids.size() + 1) + ": last line has no newline (truncated?)");
    }
    std::string id = text.substr(at, nl - at);
    const std::string where = path + ":" + std::to_string(ids.size() + 1);
    if (id.empty()) return Corrupt(where + ": empty node id");
    std::string key = IdSortKey(id);
    if (!ids.empty() && !(previous_key < key)) {
      return Corrupt(where + ": node id '" + id + "' is not after '" + ids.back() + "' (the file must be sorted, no repeats)");
    }
    previous_key = std::move(key);
    ids.push_back(std::move(id));
    at = nl + 1;
  }
  if (expected >= 0 && static_cast<int64_t>(ids.size()) != expected) {
    return Corrupt(path + ": " + std::to_string(ids.size()) + " node ids, but the dataset has " +
                   std::to_string(expected) + " nodes");
  }
  return ids;
}

Status CheckNodeIdsFile(const std::string& path, int64_t expected) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, path + ": cannot open the node-id mapping");
  std::string id, previous, previous_key;
  int64_t lines = 0;
  while (std::getline(in, id)) {
    ++lines;
    const std::string where = path + ":" + std::to_string(lines);
    if (in.eof()) return Corrupt(where + ": last line has no newline (truncated?)");
    if (id.empty()) return Corrupt(where + ": empty node id");
    if (const char* problem = IdRoundTripProblem(id)) {
      return Corrupt(where + ": node id '" + EscapeId(id) + "' has " + problem +
                     ": it cannot be read back as written (a line of this file is one id)");
    }
    std::string key = IdSortKey(id);
    if (lines > 1 && !(previous_key < key)) {
      return Corrupt(where + ": node id '" + id + "' is not after '" + previous + "' (the file must be sorted, no repeats)");
    }
    previous_key = std::move(key);
    previous = id;
  }
  if (in.bad()) return Corrupt(path + ": read error");
  if (expected >= 0 && lines != expected) {
    return Corrupt(path + ": " + std::to_string(lines) + " node ids, but the dataset has " + std::to_string(expected) +
                   " nodes");
  }
  return Status::Ok();
}

int64_t FindNodeId(const std::vector<std::string>& ids, std::string_view id) {
  const std::string key = IdSortKey(id);
  auto it = std::lower_bound(ids.begin(), ids.end(), key,
                             [](const std::string& a, const std::string& k) { return IdSortKey(a) < k; });
  if (it == ids.end() || *it != id) return -1;
  return it - ids.begin();
}

}  // namespace seer
