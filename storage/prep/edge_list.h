// Edge-list readers for `seer prep`, as restartable EdgeSources for the CSC builder:
//   text   one edge "src dst" per line, separated by whitespace and/or one comma;
//          blank lines and lines starting with '#' or '%' are skipped; a first data
//          line with a non-numeric token is taken as a header; ".gz" paths are
//          decompressed with zlib (storage/prep/text_reader.h);
//   bin32  raw little-endian int32 pairs (src, dst); bin64: int64 pairs;
//   npy    an integer edge_index of shape (2, E) (PyG) or (E, 2), C or Fortran order.
// Ids must be >= 0 and, when num_nodes >= 0 is given, < num_nodes. Every error is one
// line naming the file and the position: "edges.txt:17: ..." (line number) for text,
// "edge #k at byte offset B" for binary, "edge #k (element i)" for npy.
// Each source is single-threaded and owns its file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "storage/prep/csc_builder.h"
#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

enum class EdgeListFormat { kAuto, kText, kBin32, kBin64, kNpy };
inline constexpr NameValue<EdgeListFormat> kEdgeListFormatNames[] = {
    {"auto", EdgeListFormat::kAuto},   {"text", EdgeListFormat::kText}, {"bin32", EdgeListFormat::kBin32},
    {"bin64", EdgeListFormat::kBin64}, {"npy", EdgeListFormat::kNpy}};

// "auto" | "text" | "bin32" | "bin64" | "npy"; anything else is kInvalidArgument.
Result<EdgeListFormat> ParseEdgeListFormat(const std::string& text);
// kAuto resolved by the file name: *.npy -> npy, *.bin32/*.bin64 -> binary, else text.
EdgeListFormat ResolveEdgeListFormat(EdgeListFormat format, const std::string& path);

// Opens (and, for binary/npy, size-checks) the file; errors name the path.
Result<std::unique_ptr<EdgeSource>> OpenEdgeList(const std::string& path, EdgeListFormat format,
                                                 int64_t num_nodes);

}  // namespace seer
