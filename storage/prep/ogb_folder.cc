#include "storage/prep/ogb_folder.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "storage/base/parse_number.h"
#include "storage/prep/text_reader.h"
#include "storage/prep/text_table.h"

namespace seer {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// "dir/name.gz" if present, else "dir/name" if present, else "".
std::string FindCsv(const std::string& dir, const std::string& name) {
  if (Exists(dir + "/" + name + ".gz")) return dir + "/" + name + ".gz";
  if (Exists(dir + "/" + name)) return dir + "/" + name;
  return "";
}

}  // namespace

Result<OgbFolder> ResolveOgbFolder(const std::string& ogb_dir, const std::string& split_scheme, bool read_num_nodes) {
  OgbFolder folder;
  const std::string raw = ogb_dir + "/raw";
  folder.edges = FindCsv(raw, "edge.csv");
  if (folder.edges.empty()) {
    return Status(StatusCode::kNotFound,
                  raw + "/edge.csv[.gz]: not found (is " + ogb_dir + " an OGB node-property folder?)");
  }
  folder.features = FindCsv(raw, "node-feat.csv");
  folder.labels = FindCsv(raw, "node-label.csv");
  std::string count_path = FindCsv(raw, "num-node-list.csv");
  if (!count_path.empty() && read_num_nodes) {
    SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(count_path));
    std::string_view line;
    SEER_ASSIGN_OR_RETURN(bool any, reader.NextLine(&line));
    const std::optional<int64_t> n = any ? ParseNumber<int64_t>(TrimField(line)) : std::nullopt;
    if (!n || *n < 0) {
      return InvalidArgument(count_path + ":1: expected the node count, got '" + std::string(line) + "'");
    }
    folder.num_nodes = *n;
  }
  const std::string split_root = ogb_dir + "/split";
  std::string scheme = split_scheme;
  if (scheme.empty() && Exists(split_root)) {
    std::vector<std::string> schemes;
    if (DIR* d = ::opendir(split_root.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != ".." && Exists(split_root + "/" + name + "/")) schemes.push_back(name);
      }
      ::closedir(d);
    }
    std::sort(schemes.begin(), schemes.end());
    if (schemes.size() > 1) {
      std::string list;
      for (auto& s : schemes) list += (list.empty() ? "" : ", ") + s;
      return InvalidArgument(split_root + ": several split schemes (" + list + "); choose one with --ogb-split");
    }
    if (schemes.size() == 1) scheme = schemes[0];
  }
  if (!scheme.empty()) {
    const std::string dir = split_root + "/" + scheme;
    if (!Exists(dir)) return Status(StatusCode::kNotFound, dir + ": split scheme not found");
    folder.splits[0] = FindCsv(dir, "train.csv");
    folder.splits[1] = FindCsv(dir, "valid.csv");
    folder.splits[2] = FindCsv(dir, "test.csv");
  }
  return folder;
}

}  // namespace seer
