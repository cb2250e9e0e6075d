// Edge-list readers for `seer prep`, as restartable EdgeSources for the CSC builder:
//   text   one edge "src dst" per line, separated by whitespace and/or one comma (a
//          plain list); blank lines and lines starting with '#' or '%' are skipped
//          (comments); ".gz" paths are decompressed with zlib
//          (storage/prep/text_reader.h); or a CSV/TSV table whose endpoint columns are
//          chosen by name or index (TextColumns);
//   bin32  raw little-endian int32 pairs (src, dst); bin64: int64 pairs;
//   npy    an integer edge_index of shape (2, E) (PyG) or (E, 2), C or Fortran order.
// The header rule (HeaderRule::kAuto), the same for integer ids and --remap-ids: a named
// column makes the first non-comment line the header; otherwise the first data line is
// a header when both its endpoint fields are not integers (with --remap-ids: and
// neither of them occurs on any other line, since string ids are not integers either).
// The comment rule: in a plain list and in a table without a named column, '#'/'%'
// lines are comments anywhere; in a table with a named column only before the header
// (a CSV has no comments: every line after its header is a row, so ids may start
// with '#').
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

// Whether the first data line of a text edge list is a header (`--edges-header`): kAuto
// by the rule above, kYes always (skipped), kNo never (a named column needs one: an
// error).
enum class HeaderRule { kAuto, kYes, kNo };
inline constexpr NameValue<HeaderRule> kHeaderRuleNames[] = {
    {"auto", HeaderRule::kAuto}, {"yes", HeaderRule::kYes}, {"no", HeaderRule::kNo}};

// Which columns of a text edge list hold the endpoints (`--src-col`, `--dst-col`): a
// header name, or a 0-based field index (all digits). Empty: today's "src dst" lines.
// With columns the file is a delimited table: the delimiter is found on the first
// non-comment line (',' if it has one, else a tab, else runs of blanks); fields are
// trimmed and one pair of surrounding double quotes removed (no delimiters inside
// quotes); other columns are ignored. A name needs the first non-comment line to be the
// header; with two indices the header rule above decides.
struct TextColumns {
  std::string src, dst;
  HeaderRule header = HeaderRule::kAuto;
  bool empty() const { return src.empty() && dst.empty(); }
  bool named() const;  // a column given by name (not an index)
};

// Opens (and, for binary/npy, size-checks) the file; errors name the path. Columns are
// only for text (kInvalidArgument otherwise).
Result<std::unique_ptr<EdgeSource>> OpenEdgeList(const std::string& path, EdgeListFormat format,
                                                 int64_t num_nodes, const TextColumns& columns = {});

// The (src, dst) tokens of a text edge list as strings, one line at a time, for id
// remapping (storage/prep/id_remap.h): the same line syntax, columns and comment rule as
// above, but ids are not parsed: a header is skipped here only through a named column
// (or HeaderRule::kYes); the rest of the header rule needs the whole file (IdRemap
// applies it). Not thread-safe.
class TextPairReader {
 public:
  static Result<std::unique_ptr<TextPairReader>> Open(const std::string& path, const TextColumns& columns);
  ~TextPairReader();
  // The next pair; false at the end. The views are valid until the next call.
  Result<bool> Next(std::string_view* src, std::string_view* dst);
  // "path:line" of the last line read.
  std::string Where() const;
  int64_t line_number() const;
  // The last line read, as in the file (for messages).
  std::string_view line() const;
  // Comment lines skipped after the first data line (a plain list, or a table without
  // a named column): ids that start with '#' or '%' would be among them.
  int64_t comments_after_data() const;
  // The first data line was skipped as a header (a named column, or HeaderRule::kYes).
  bool skipped_header() const;

 private:
  struct State;
  explicit TextPairReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace seer
