// Edge-list readers for `seer prep`, as restartable EdgeSources for the CSC builder:
//   text   one edge "src dst" per line, separated by whitespace and/or one comma;
//          blank lines and lines starting with '#' or '%' are skipped; a first data
//          line with a non-numeric token is taken as a header; ".gz" paths are
//          decompressed with zlib (storage/prep/text_reader.h); or a CSV/TSV table
//          whose endpoint columns are chosen by name or index (TextColumns);
//   bin32  raw little-endian int32 pairs (src, dst); bin64: int64 pairs;
//   npy    an integer edge_index of shape (2, E) (PyG) or (E, 2), C or Fortran order.
// Ids must be >= 0 and, when num_nodes >= 0 is given, < num_nodes; otherwise <=
// kMaxNodeId (the builder keeps a dense table indexed by id: sparse ids such as hashes
// need --remap-ids). Every error is one
// line naming the file and the position: "edges.txt:17: ..." (line number) for text,
// "edge #k at byte offset B" for binary, "edge #k (element i)" for npy.
// Each source is single-threaded and owns its file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/prep/csc_builder.h"
#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

// The largest node id (and so 2^40 nodes at most): a dense per-node table up to it
// takes 8 TiB. Larger ids are refused naming the file and line or offset.
inline constexpr int64_t kMaxNodeId = (int64_t{1} << 40) - 1;

enum class EdgeListFormat { kAuto, kText, kBin32, kBin64, kNpy };
inline constexpr NameValue<EdgeListFormat> kEdgeListFormatNames[] = {
    {"auto", EdgeListFormat::kAuto},   {"text", EdgeListFormat::kText}, {"bin32", EdgeListFormat::kBin32},
    {"bin64", EdgeListFormat::kBin64}, {"npy", EdgeListFormat::kNpy}};

// "auto" | "text" | "bin32" | "bin64" | "npy"; anything else is kInvalidArgument.
Result<EdgeListFormat> ParseEdgeListFormat(const std::string& text);
// kAuto resolved by the file name: *.npy -> npy, *.bin32/*.bin64 -> binary, else text.
EdgeListFormat ResolveEdgeListFormat(EdgeListFormat format, const std::string& path);

// Which columns of a text edge list hold the endpoints (`--src-col`, `--dst-col`): a
// header name, or a 0-based field index (all digits). Empty: today's "src dst" lines.
// With columns the file is a delimited table: the delimiter is found on the first
// non-comment line (',' if it has one, else a tab, else runs of blanks); fields are
// trimmed and one pair of surrounding double quotes removed (no delimiters inside
// quotes); other columns are ignored. A name needs the first non-comment line to be the
// header; with two indices that line is a header when both selected fields are
// non-numeric.
struct TextColumns {
  std::string src, dst;
  bool empty() const { return src.empty() && dst.empty(); }
};

// Opens (and, for binary/npy, size-checks) the file; errors name the path. Columns are
// only for text (kInvalidArgument otherwise).
Result<std::unique_ptr<EdgeSource>> OpenEdgeList(const std::string& path, EdgeListFormat format,
                                                 int64_t num_nodes, const TextColumns& columns = {});

// The (src, dst) tokens of a text edge list as strings, one line at a time, for id
// remapping (storage/prep/id_remap.h): the same line syntax and columns as above, but
// ids are not parsed, so a header is only recognised through a named column (comment
// out the header line of a plain "src dst" list). Not thread-safe.
class TextPairReader {
 public:
  static Result<std::unique_ptr<TextPairReader>> Open(const std::string& path, const TextColumns& columns);
  ~TextPairReader();
  // The next pair; false at the end. The views are valid until the next call.
  Result<bool> Next(std::string_view* src, std::string_view* dst);
  // "path:line" of the last line read.
  std::string Where() const;

 private:
  struct State;
  explicit TextPairReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace seer
