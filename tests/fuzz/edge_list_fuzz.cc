// Fuzz target: the text edge-list parser of `seer prep` (storage/prep/edge_list.h) —
// plain "src dst" lines and CSV/TSV tables by column, read through OpenEdgeList (ids
// parsed, twice: Rewind must give the same edges) and TextPairReader (tokens only, for
// --remap-ids). The first input byte picks the columns and the node count; the rest is
// the file.
#include <vector>

#include "storage/prep/edge_list.h"
#include "fuzz_support.h"

namespace {

using seer::fuzz::CheckRefusal;

void ReadAll(const std::string& path, const seer::TextColumns& columns, int64_t num_nodes) {
  auto source = seer::OpenEdgeList(path, seer::EdgeListFormat::kText, num_nodes, columns);
  if (!source.ok()) return CheckRefusal(source.status(), "edges.txt");
  std::vector<seer::Edge> edges(64);
  int64_t first_pass = -1;
  for (int pass = 0; pass < 2; ++pass) {
    int64_t total = 0;
    for (;;) {
      auto n = (*source)->Read(edges.data(), static_cast<int64_t>(edges.size()));
      if (!n.ok()) return CheckRefusal(n.status(), "edges.txt");
      if (*n < 0 || *n > static_cast<int64_t>(edges.size())) std::abort();
      if (*n == 0) break;
      for (int64_t i = 0; i < *n; ++i) {
        const seer::Edge& e = edges[static_cast<size_t>(i)];
        if (e.src < 0 || e.dst < 0) std::abort();
        if (num_nodes >= 0 && (e.src >= num_nodes || e.dst >= num_nodes)) std::abort();
      }
      total += *n;
    }
    if (pass == 0) {
      first_pass = total;
      seer::Status s = (*source)->Rewind();
      if (!s.ok()) return CheckRefusal(s, "edges.txt");
    } else if (total != first_pass) {
      std::abort();  // a rewound source must hand out the same edges
    }
  }
}

void ReadPairs(const std::string& path, const seer::TextColumns& columns) {
  auto reader = seer::TextPairReader::Open(path, columns);
  if (!reader.ok()) return CheckRefusal(reader.status(), "edges.txt");
  std::string_view src, dst;
  for (;;) {
    auto more = (*reader)->Next(&src, &dst);
    if (!more.ok()) return CheckRefusal(more.status(), "edges.txt");
    if (!*more) break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1 << 16)) return 0;
  const uint8_t mode = data[0];
  const std::string path = seer::fuzz::WriteInput(data + 1, size - 1, "edges.txt");
  seer::TextColumns columns;
  switch (mode & 3) {
    case 0: break;
    case 1: columns = {"src", "dst"}; break;
    case 2: columns = {"0", "1"}; break;
    case 3: columns = {"2", "target"}; break;
  }
  const int64_t num_nodes = (mode & 4) != 0 ? 1000 : -1;
  ReadAll(path, columns, num_nodes);
  if ((mode & 8) != 0) ReadPairs(path, columns);
  return 0;
}
