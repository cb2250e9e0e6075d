#include "storage/dataset/node_ids.h"

#include <algorithm>
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
