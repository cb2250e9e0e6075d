#include "storage/prep/edge_list.h"
#include "storage/base/parse_number.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include <tbb/blocked_range.h>
#include "storage/base/parallel.h"
#include <tbb/task_arena.h>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/prep/npy.h"
#include "storage/prep/text_reader.h"
#include "storage/prep/text_table.h"

namespace seer {
namespace {

constexpr int64_t kParallelEdges = 16384;

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

Status CheckId(int64_t id, int64_t num_nodes, const std::string& where) {
  if (id < 0) return InvalidArgument(where + ": negative node id " + std::to_string(id));
  if (num_nodes >= 0 && id >= num_nodes) {
    return InvalidArgument(where + ": node id " + std::to_string(id) + " >= num_nodes " +
                           std::to_string(num_nodes));
  }
  if (id > kMaxNodeId) {
    return InvalidArgument(where + ": node id " + std::to_string(id) + " is above the largest supported id " +
                           std::to_string(kMaxNodeId) + " (2^40 - 1; ids index a dense table: use --remap-ids "
                           "for sparse ids)");
  }
  return Status::Ok();
}

// Splits on runs of spaces, tabs and commas. Returns the number of tokens (up to 3
// kept; a 3rd token only matters to report "too many fields").
int Tokenize(std::string_view line, std::string_view tokens[3]) {
  int count = 0;
  size_t i = 0;
  auto is_sep = [](char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r'; };
  while (i < line.size()) {
    while (i < line.size() && is_sep(line[i])) ++i;
    if (i >= line.size()) break;
    size_t start = i;
    while (i < line.size() && !is_sep(line[i])) ++i;
    if (count < 3) tokens[count] = line.substr(start, i - start);
    ++count;
  }
  return count;
}

std::optional<int64_t> ParseInt(std::string_view token) { return ParseNumber<int64_t>(token); }

// One data line as the original sequential reader saw it: kSkip (blank or comment),
// kEdge, kHeader (only possible while no data line was seen), or an error message
// naming `where`. `line` has no '\n' and no trailing '\r'.
enum class LineKind { kSkip, kEdge, kHeader, kError };
LineKind ParseLineSlow(std::string_view line, bool first_data, int64_t num_nodes,
                       const std::string& path, int64_t line_number, Edge* edge, Status* error) {
  size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos || line[first] == '#' || line[first] == '%') return LineKind::kSkip;
  std::string_view tokens[3];
  int count = Tokenize(line, tokens);
  const std::string where = path + ":" + std::to_string(line_number);
  std::optional<int64_t> src = count >= 1 ? ParseInt(tokens[0]) : std::nullopt;
  std::optional<int64_t> dst = count >= 2 ? ParseInt(tokens[1]) : std::nullopt;
  if (first_data && count == 2 && !src && !dst) return LineKind::kHeader;  // e.g. "src,dst"
  if (count != 2) {
    *error = InvalidArgument(where + ": malformed line (expected 2 fields 'src dst', got " +
                             std::to_string(count) + "): '" + std::string(line.substr(0, 80)) + "'");
    return LineKind::kError;
  }
  if (!src || !dst) {
    *error = InvalidArgument(where + ": non-numeric node id '" + std::string(!src ? tokens[0] : tokens[1]) + "'");
    return LineKind::kError;
  }
  *error = CheckId(*src, num_nodes, where);
  if (error->ok()) *error = CheckId(*dst, num_nodes, where);
  if (!error->ok()) return LineKind::kError;
  *edge = Edge{*src, *dst};
  return LineKind::kEdge;
}

inline bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
inline bool IsSep(char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r'; }
inline bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// How many of the 8 bytes in `x` (little-endian: the first character in the low byte)
// are decimal digits before the first non-digit, 0..8. SWAR: a byte is a digit iff its
// high nibble is 3 and its low nibble + 6 does not carry into the high nibble (text bytes
// below 0x80 cannot carry across bytes; a byte >= 0x80 is not a digit either way).
inline int LeadingDigits(uint64_t x) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  const uint64_t high = (x & (0xF0 * kOnes)) ^ (0x30 * kOnes);
  const uint64_t carry = (((x & (0x7F * kOnes)) + 0x06 * kOnes) & (0xF0 * kOnes)) ^ (0x30 * kOnes);
  const uint64_t bad = high | carry | (x & (0x80 * kOnes));  // non-zero byte: not a digit
  const uint64_t flags = ((((bad & (0x7F * kOnes)) + 0x7F * kOnes) | bad) & (0x80 * kOnes));
  return flags == 0 ? 8 : __builtin_ctzll(flags) / 8;
}

// The value of the first `len` (1..8) digit characters of `x` (LeadingDigits(x) >= len).
inline uint64_t DigitsValue(uint64_t x, int len) {
  uint64_t d = (x - 0x3030303030303030ULL) << (8 * (8 - len));  // the digits, right-aligned as 8
  d = (d * 10) + (d >> 8);
  d = (((d & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
       (((d >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
  return d;
}

// Parses one unsigned decimal of 1..18 digits at *p; false (p unchanged) otherwise.
// Eight characters at a time where 8 bytes remain before `end` (SWAR), else one by one.
inline bool ParseDigits(const char*& p, const char* end, int64_t* out) {
  const char* q = p;
  int64_t v = 0;
  if (end - q >= 8) {
    uint64_t x;
    std::memcpy(&x, q, 8);
    const int len = LeadingDigits(x);
    if (len == 0) return false;
    v = static_cast<int64_t>(DigitsValue(x, len));
    q += len;
    if (len < 8) {
      *out = v;
      p = q;
      return true;
    }
  }
  while (q < end && IsDigit(*q)) {
    if (q - p == 18) return false;  // 19+ digits: the exact slow path (v * 10 would overflow)
    v = v * 10 + (*q - '0');
    ++q;
  }
  if (q == p) return false;
  *out = v;
  p = q;
  return true;
}

// The common line "src<sep>dst" (plain digits, separators, optional blanks): kEdge or
// kSkip for a blank/comment line; anything else (signs, long numbers, a bad line, an
// id >= num_nodes) returns kError so the caller takes the exact slow path.
// `end` is the end of the piece: the line ends at the first '\n' before it, which is
// found while parsing (no separate search); on kEdge/kSkip *line_end is set to it.
inline LineKind ParseLineFast(const char* p, const char* end, int64_t num_nodes, Edge* edge,
                              const char** line_end) {
  while (p < end && IsBlank(*p)) ++p;
  if (p == end || *p == '\n') {
    *line_end = p;
    return LineKind::kSkip;
  }
  if (*p == '#' || *p == '%') {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    *line_end = nl == nullptr ? end : nl;
    return LineKind::kSkip;
  }
  int64_t src, dst;
  if (!ParseDigits(p, end, &src)) return LineKind::kError;
  const char* sep = p;
  while (p < end && IsSep(*p)) ++p;
  if (p == sep || !ParseDigits(p, end, &dst)) return LineKind::kError;
  while (p < end && IsSep(*p)) ++p;
  if (p != end && *p != '\n') return LineKind::kError;
  if (num_nodes >= 0 ? (src >= num_nodes || dst >= num_nodes) : (src > kMaxNodeId || dst > kMaxNodeId)) {
    return LineKind::kError;
  }
  *edge = Edge{src, dst};
  *line_end = p;
  return LineKind::kEdge;
}

// A delimited table (TextColumns): index[0] is the source column, index[1] the
// destination's (storage/prep/text_table.h).
using ColumnLayout = TableLayout;

LineKind ParseLineColumns(std::string_view line, const ColumnLayout& layout, int64_t num_nodes,
                          const std::string& path, int64_t line_number, Edge* edge, Status* error) {
  if (SkippedTableLine(line, layout)) return LineKind::kSkip;
  const int src_col = layout.index[0], dst_col = layout.index[1];
  const int last = layout.last;
  std::string_view fields[kMaxTableFields];
  const int count = SplitFields(line, layout.delimiter, last, fields);
  if (count <= last) {
    *error = InvalidArgument(path + ":" + std::to_string(line_number) + ": " + std::to_string(count) +
                             " fields, but column " + std::to_string(last) + " is needed: '" +
                             std::string(line.substr(0, 80)) + "'");
    return LineKind::kError;
  }
  std::optional<int64_t> src = ParseInt(fields[src_col]);
  std::optional<int64_t> dst = ParseInt(fields[dst_col]);
  if (!src || !dst) {
    *error = InvalidArgument(path + ":" + std::to_string(line_number) + ": non-numeric node id '" +
                             std::string(!src ? fields[src_col] : fields[dst_col]) + "'");
    return LineKind::kError;
  }
  const std::string where = path + ":" + std::to_string(line_number);
  *error = CheckId(*src, num_nodes, where);
  if (error->ok()) *error = CheckId(*dst, num_nodes, where);
  if (!error->ok()) return LineKind::kError;
  *edge = Edge{*src, *dst};
  return LineKind::kEdge;
}

// The endpoint columns as text_table.h columns (numeric: integer ids).
std::vector<TableColumn> EndpointColumns(const TextColumns& columns, bool numeric) {
  return {TableColumn{columns.src.empty() ? "0" : columns.src, numeric},
          TableColumn{columns.dst.empty() ? "1" : columns.dst, numeric}};
}

// Text edge list. Lines up to the first data line are read one at a time (that line may
// be a header); after it the file is read in blocks of whole lines, each block cut into
// pieces at line boundaries that all threads parse at once, every piece knowing its
// first line number, so errors name the exact line and the first error in file order
// is the one reported.
class TextEdgeSource : public EdgeSource {
 public:
  TextEdgeSource(std::string path, int64_t num_nodes, TextColumns columns)
      : path_(std::move(path)), num_nodes_(num_nodes), columns_(std::move(columns)) {}
  Status Rewind() override {
    SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(path_));
    reader_ = std::make_unique<TextLineReader>(std::move(reader));
    seen_data_ = false;
    table_ = false;
    return Status::Ok();
  }
  Result<int64_t> Read(Edge* out, int64_t max_edges) override {
    if (!reader_) SEER_RETURN_IF_ERROR(Rewind());
    int64_t n = 0;
    std::string_view line;
    while (!seen_data_ && n < max_edges) {
      SEER_ASSIGN_OR_RETURN(bool more, reader_->NextLine(&line));
      if (!more) return n;
      Status error;
      Edge edge;
      if (!columns_.empty()) {
        SEER_ASSIGN_OR_RETURN(LineKind kind, FirstTableLine(line, &edge));
        if (kind == LineKind::kEdge) out[n++] = edge;
        continue;
      }
      if (columns_.header == HeaderRule::kYes && !IsCommentOrBlank(line)) {  // declared: skipped whatever it holds
        seen_data_ = true;
        continue;
      }
      const bool may_be_header = columns_.header == HeaderRule::kAuto;
      switch (ParseLineSlow(line, may_be_header, num_nodes_, path_, reader_->line_number(), &edge, &error)) {
        case LineKind::kSkip: continue;
        case LineKind::kHeader: seen_data_ = true; continue;
        case LineKind::kError: return error;
        case LineKind::kEdge: seen_data_ = true; out[n++] = edge; break;
      }
    }
    while (n == 0 && max_edges > 0) {
      int64_t first_line = 0, num_lines = 0;
      SEER_ASSIGN_OR_RETURN(std::string_view block,
                            reader_->NextLines(BlockBytes(max_edges), max_edges, &first_line, &num_lines));
      if (block.empty()) break;
      SEER_ASSIGN_OR_RETURN(n, ParseBlock(block, first_line, out));
    }
    return n;
  }
  int64_t num_nodes() const override { return num_nodes_; }
  std::string name() const override { return path_; }
  bool CostlyToReread() const override { return true; }  // parsing (and inflating .gz)
  void ReleaseBuffers() override {
    reader_.reset();
    std::vector<size_t>().swap(starts_);
  }
  // The line reader's buffer: at least its initial 1 MiB, grown to the block.
  int64_t BufferBytes(int64_t max_edges) const override {
    return static_cast<int64_t>(std::max<size_t>(BlockBytes(max_edges), 1 << 20));
  }

 private:
  // About 8 bytes of text per edge handed out (short lines are cut by the line count).
  static size_t BlockBytes(int64_t max_edges) {
    return static_cast<size_t>(std::clamp<int64_t>(max_edges * 8, 64 << 10, 16 << 20));
  }

  // Parses a block of whole lines (at most as many as `out` holds) into out; returns the
  // number of edges.
  Result<int64_t> ParseBlock(std::string_view block, int64_t first_line, Edge* out) {
    // Pieces of ~64 KiB, cut after a '\n'.
    constexpr size_t kPieceBytes = 64 << 10;
    starts_.clear();
    for (size_t at = 0; at < block.size();) {
      starts_.push_back(at);
      size_t next = at + kPieceBytes;
      if (next >= block.size()) break;
      const void* nl = std::memchr(block.data() + next, '\n', block.size() - next);
      at = nl == nullptr ? block.size() : static_cast<const char*>(nl) - block.data() + 1;
    }
    const size_t pieces = starts_.size();
    starts_.push_back(block.size());
    // Lines per piece (newlines, plus an unterminated last line), then prefix sums: the
    // first line number and the first output slot of every piece.
    lines_.assign(pieces + 1, 0);
    ParallelFor(size_t{0}, pieces, [&](size_t i) {
      const char* b = block.data() + starts_[i];
      const char* e = block.data() + starts_[i + 1];
      int64_t lines = std::count(b, e, '\n');
      if (e > b && e[-1] != '\n') ++lines;
      lines_[i + 1] = lines;
    });
    for (size_t i = 0; i < pieces; ++i) lines_[i + 1] += lines_[i];
    edges_.assign(pieces, 0);
    bad_line_.assign(pieces, -1);
    ParallelFor(size_t{0}, pieces, [&](size_t i) {
      const char* p = block.data() + starts_[i];
      const char* end = block.data() + starts_[i + 1];
      Edge* dst = out + lines_[i];
      int64_t k = 0;
      for (int64_t line = 0; p < end; ++line) {
        const char* line_end = end;
        switch (table_ ? LineKind::kError : ParseLineFast(p, end, num_nodes_, dst + k, &line_end)) {
          case LineKind::kEdge: ++k; break;
          case LineKind::kSkip: break;
          default: {  // the exact reader decides
            const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
            line_end = nl == nullptr ? end : nl;
            Edge edge;
            Status error;
            LineKind kind = ParseExact(Strip(p, line_end), 0, &edge, &error);
            if (kind == LineKind::kEdge) {
              dst[k++] = edge;
            } else if (kind == LineKind::kError) {
              bad_line_[i] = line;
              edges_[i] = k;
              return;
            }
          }
        }
        p = line_end + 1;
      }
      edges_[i] = k;
    });
    for (size_t i = 0; i < pieces; ++i) {
      if (bad_line_[i] < 0) continue;
      // Re-parse the bad line alone for the message with its line number.
      const char* p = block.data() + starts_[i];
      for (int64_t skip = 0; skip < bad_line_[i]; ++skip) p = static_cast<const char*>(std::memchr(p, '\n', block.data() + starts_[i + 1] - p)) + 1;
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', block.data() + starts_[i + 1] - p));
      const char* line_end = nl == nullptr ? block.data() + starts_[i + 1] : nl;
      Edge edge;
      Status error;
      ParseExact(Strip(p, line_end), first_line + lines_[i] + bad_line_[i], &edge, &error);
      return error;
    }
    // Close the gaps left by skipped lines.
    int64_t n = 0;
    for (size_t i = 0; i < pieces; ++i) {
      if (n != lines_[i]) std::memmove(out + n, out + lines_[i], static_cast<size_t>(edges_[i]) * sizeof(Edge));
      n += edges_[i];
    }
    return n;
  }

  LineKind ParseExact(std::string_view line, int64_t line_number, Edge* edge, Status* error) const {
    if (table_) return ParseLineColumns(line, layout_, num_nodes_, path_, line_number, edge, error);
    return ParseLineSlow(line, false, num_nodes_, path_, line_number, edge, error);
  }

  // The first non-comment line of a table: fixes the delimiter and the columns; a header
  // (needed when a column is named) gives kSkip.
  Result<LineKind> FirstTableLine(std::string_view line, Edge* edge) {
    if (IsCommentOrBlank(line)) return LineKind::kSkip;
    const std::string where = path_ + ":" + std::to_string(reader_->line_number());
    SEER_ASSIGN_OR_RETURN(layout_, ResolveTableLayout(line, EndpointColumns(columns_, true), where));
    if (!columns_.named() && columns_.header != HeaderRule::kAuto) layout_.header = columns_.header == HeaderRule::kYes;
    table_ = true;
    seen_data_ = true;
    if (layout_.header) return LineKind::kSkip;
    Status error;
    LineKind kind = ParseLineColumns(line, layout_, num_nodes_, path_, reader_->line_number(), edge, &error);
    if (kind == LineKind::kError) return error;
    return kind;
  }

  // The line as TextLineReader::NextLine hands it out: without one trailing '\r'.
  static std::string_view Strip(const char* b, const char* e) {
    if (e > b && e[-1] == '\r') --e;
    return std::string_view(b, static_cast<size_t>(e - b));
  }

  std::string path_;
  int64_t num_nodes_;
  TextColumns columns_;
  std::unique_ptr<TextLineReader> reader_;
  bool seen_data_ = false;
  bool table_ = false;  // columns given: lines are parsed as table rows
  ColumnLayout layout_;
  std::vector<size_t> starts_;
  std::vector<int64_t> lines_, edges_, bad_line_;
};

// A source of a known number of edges read by position (binary and .npy layouts):
// Read hands out the next chunk, Rewind starts over.
class CountedEdgeSource : public EdgeSource {
 public:
  CountedEdgeSource(int64_t num_edges, int64_t num_nodes)
      : num_edges_(num_edges), num_nodes_(num_nodes) {}
  Status Rewind() override {
    next_ = 0;
    return Status::Ok();
  }
  Result<int64_t> Read(Edge* out, int64_t max_edges) final {
    const int64_t n = std::min(max_edges, num_edges_ - next_);
    if (n <= 0) return int64_t{0};
    SEER_RETURN_IF_ERROR(ReadEdges(next_, n, out));
    next_ += n;
    return n;
  }
  int64_t num_nodes() const override { return num_nodes_; }
  int64_t num_edges_hint() const override { return num_edges_; }

 protected:
  // Reads edges [first, first + n) into `out`, checking their node ids.
  virtual Status ReadEdges(int64_t first, int64_t n, Edge* out) = 0;

  const int64_t num_edges_;
  const int64_t num_nodes_;

 private:
  int64_t next_ = 0;
};

template <typename T>
class BinaryEdgeSource : public CountedEdgeSource {
 public:
  BinaryEdgeSource(std::string path, UniqueFd fd, int64_t num_edges, int64_t num_nodes)
      : CountedEdgeSource(num_edges, num_nodes), path_(std::move(path)), fd_(std::move(fd)) {}
  std::string name() const override { return path_; }

 private:
  static constexpr int64_t kPairBytes = 2 * static_cast<int64_t>(sizeof(T));

  Status ReadEdges(int64_t first, int64_t n, Edge* out) override {
    const int64_t offset = first * kPairBytes;
    const T* pairs;
    if constexpr (sizeof(T) == sizeof(int64_t)) {  // int64 pairs are Edges: read in place
      static_assert(sizeof(Edge) == 2 * sizeof(int64_t));
      SEER_RETURN_IF_ERROR(PreadFull(fd_.get(), out, n * kPairBytes, offset, path_));
      pairs = reinterpret_cast<const T*>(out);
    } else {
      buffer_.resize(static_cast<size_t>(2 * n));
      SEER_RETURN_IF_ERROR(PreadFull(fd_.get(), buffer_.data(), n * kPairBytes, offset, path_));
      pairs = buffer_.data();
    }
    // Widen and check in parallel; the first bad edge (in file order) is reported.
    std::atomic<int64_t> first_bad{n};
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        int64_t src = pairs[2 * i], dst = pairs[2 * i + 1];
        if (src < 0 || dst < 0 ||
            (num_nodes_ >= 0 ? (src >= num_nodes_ || dst >= num_nodes_) : (src > kMaxNodeId || dst > kMaxNodeId))) {
          int64_t cur = first_bad.load();
          while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
          }
          return;
        }
        if constexpr (sizeof(T) != sizeof(int64_t)) out[i] = Edge{src, dst};  // int64: already in place
      }
    };
    if (n <= kParallelEdges) {
      body(0, n);
    } else {
      ParallelFor(tbb::blocked_range<int64_t>(0, n, kParallelEdges),
                        [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
    }
    if (const int64_t i = first_bad.load(); i < n) {
      const int64_t src = pairs[2 * i], dst = pairs[2 * i + 1];
      const std::string where = path_ + ": edge #" + std::to_string(first + i) +
                                " at byte offset " + std::to_string(offset + i * kPairBytes);
      SEER_RETURN_IF_ERROR(CheckId(src, num_nodes_, where));
      SEER_RETURN_IF_ERROR(CheckId(dst, num_nodes_, where));
    }
    return Status::Ok();
  }
  int64_t BufferBytes(int64_t max_edges) const override {
    return sizeof(T) == sizeof(int64_t) ? 0 : max_edges * kPairBytes;
  }

  std::string path_;
  UniqueFd fd_;
  std::vector<T> buffer_;
};

class NpyEdgeSource : public CountedEdgeSource {
 public:
  // interleaved: element 2k is src k, 2k+1 dst k; else src k at k, dst k at E + k.
  NpyEdgeSource(NpyFile file, int64_t num_edges, bool interleaved, int64_t num_nodes)
      : CountedEdgeSource(num_edges, num_nodes), file_(std::move(file)), interleaved_(interleaved) {}
  std::string name() const override { return file_.path(); }
  int64_t BufferBytes(int64_t max_edges) const override { return max_edges * 16; }

 private:
  Status ReadEdges(int64_t first, int64_t n, Edge* out) override {
    buffer_.resize(static_cast<size_t>(2 * n));
    if (interleaved_) {
      SEER_RETURN_IF_ERROR(file_.ReadAsInt64(2 * first, 2 * n, buffer_.data()));
    } else {
      SEER_RETURN_IF_ERROR(file_.ReadAsInt64(first, n, buffer_.data()));
      SEER_RETURN_IF_ERROR(file_.ReadAsInt64(num_edges_ + first, n, buffer_.data() + n));
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t si = interleaved_ ? 2 * (first + i) : first + i;
      int64_t di = interleaved_ ? si + 1 : num_edges_ + first + i;
      int64_t src = interleaved_ ? buffer_[2 * i] : buffer_[i];
      int64_t dst = interleaved_ ? buffer_[2 * i + 1] : buffer_[n + i];
      SEER_RETURN_IF_ERROR(CheckId(src, num_nodes_, Where(first + i, si)));
      SEER_RETURN_IF_ERROR(CheckId(dst, num_nodes_, Where(first + i, di)));
      out[i] = Edge{src, dst};
    }
    return Status::Ok();
  }
  std::string Where(int64_t edge, int64_t element) const {
    return file_.path() + ": edge #" + std::to_string(edge) + " (element " + std::to_string(element) + ")";
  }

  NpyFile file_;
  bool interleaved_;
  std::vector<int64_t> buffer_;
};

}  // namespace

Result<EdgeListFormat> ParseEdgeListFormat(const std::string& text) {
  return ParseName(kEdgeListFormatNames, text, "edge list format");
}

EdgeListFormat ResolveEdgeListFormat(EdgeListFormat format, const std::string& path) {
  if (format != EdgeListFormat::kAuto) return format;
  if (EndsWith(path, ".npy")) return EdgeListFormat::kNpy;
  if (EndsWith(path, ".bin32")) return EdgeListFormat::kBin32;
  if (EndsWith(path, ".bin64")) return EdgeListFormat::kBin64;
  return EdgeListFormat::kText;
}

bool TextColumns::named() const {
  return (!src.empty() && !IsColumnIndex(src)) || (!dst.empty() && !IsColumnIndex(dst));
}

namespace {

Status CheckHeaderRule(const std::string& path, const TextColumns& columns) {
  if (columns.named() && columns.header == HeaderRule::kNo) {
    return InvalidArgument(path + ": --edges-header no, but a column named by --src-col/--dst-col is found in the "
                           "header line (give column indices for a table without a header)");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<EdgeSource>> OpenEdgeList(const std::string& path, EdgeListFormat format,
                                                 int64_t num_nodes, const TextColumns& columns) {
  format = ResolveEdgeListFormat(format, path);
  SEER_RETURN_IF_ERROR(CheckHeaderRule(path, columns));
  if (!columns.empty() && format != EdgeListFormat::kText && format != EdgeListFormat::kAuto) {
    return InvalidArgument(path + ": --src-col/--dst-col need a text edge list");
  }
  switch (format) {
    case EdgeListFormat::kAuto:
    case EdgeListFormat::kText: {
      // Fail now if the file is missing; the (gzip) stream starts at the first Rewind/Read.
      SEER_RETURN_IF_ERROR(UniqueFd::Open(path, O_RDONLY).status());
      return std::unique_ptr<EdgeSource>(new TextEdgeSource(path, num_nodes, columns));
    }
    case EdgeListFormat::kBin32:
    case EdgeListFormat::kBin64: {
      const int64_t pair_bytes = format == EdgeListFormat::kBin32 ? 8 : 16;
      SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
      SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
      if (size % pair_bytes != 0) {
        return Status(StatusCode::kUnexpectedEof,
                      path + ": size " + std::to_string(size) + " bytes is not a multiple of " +
                          std::to_string(pair_bytes) + " (" +
                          (pair_bytes == 8 ? "int32" : "int64") + " pairs): truncated at byte offset " +
                          std::to_string(size - size % pair_bytes) + "?");
      }
      if (format == EdgeListFormat::kBin32) {
        return std::unique_ptr<EdgeSource>(
            new BinaryEdgeSource<int32_t>(path, std::move(fd), size / pair_bytes, num_nodes));
      }
      return std::unique_ptr<EdgeSource>(
          new BinaryEdgeSource<int64_t>(path, std::move(fd), size / pair_bytes, num_nodes));
    }
    case EdgeListFormat::kNpy: {
      SEER_ASSIGN_OR_RETURN(NpyFile file, NpyFile::Open(path));
      const NpyHeader& h = file.header();
      if (h.kind != 'i' && h.kind != 'u') {
        return InvalidArgument(path + ": edge_index dtype " + h.descr + " is not an integer type");
      }
      if (h.shape.size() != 2 || (h.shape[0] != 2 && h.shape[1] != 2)) {
        return InvalidArgument(path + ": edge_index must have shape (2, E) or (E, 2), got " + h.ShapeString());
      }
      // In memory order: C (2,E) or Fortran (E,2) are row blocks; otherwise interleaved.
      bool two_by_e = h.shape[0] == 2;
      bool interleaved = two_by_e == h.fortran_order;
      int64_t num_edges = two_by_e ? h.shape[1] : h.shape[0];
      return std::unique_ptr<EdgeSource>(new NpyEdgeSource(std::move(file), num_edges, interleaved, num_nodes));
    }
  }
  return InvalidArgument("unreachable edge list format");
}

struct TextPairReader::State {
  std::string path;
  std::unique_ptr<TextLineReader> reader;  // plain "src dst" lines
  std::unique_ptr<TextTableReader> table;  // columns given
  HeaderRule header = HeaderRule::kAuto;
  bool named = false;
  bool seen_data = false;                  // a data line (or the header) was handed out or skipped
  bool skipped_header = false;
  int64_t comments_after_data = 0;         // plain lists (tables count their own)
  std::string_view line;
};

TextPairReader::TextPairReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
TextPairReader::~TextPairReader() = default;

Result<std::unique_ptr<TextPairReader>> TextPairReader::Open(const std::string& path, const TextColumns& columns) {
  SEER_RETURN_IF_ERROR(CheckHeaderRule(path, columns));
  auto state = std::make_unique<State>();
  state->path = path;
  state->header = columns.header;
  state->named = columns.named();
  if (!columns.empty()) {
    // Ids are any tokens here: a header only through a named column (or declared).
    SEER_ASSIGN_OR_RETURN(TextTableReader table, TextTableReader::Open(path, EndpointColumns(columns, false)));
    state->table = std::make_unique<TextTableReader>(std::move(table));
  } else {
    SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(path));
    state->reader = std::make_unique<TextLineReader>(std::move(reader));
  }
  return std::unique_ptr<TextPairReader>(new TextPairReader(std::move(state)));
}

std::string TextPairReader::Where() const { return state_->path + ":" + std::to_string(line_number()); }

int64_t TextPairReader::line_number() const {
  return state_->table ? state_->table->line_number() : state_->reader->line_number();
}

std::string_view TextPairReader::line() const { return state_->table ? state_->table->line() : state_->line; }

int64_t TextPairReader::comments_after_data() const {
  return state_->table ? state_->table->comments_after_data() : state_->comments_after_data;
}

bool TextPairReader::skipped_header() const { return state_->skipped_header || (state_->table && state_->named); }

Result<bool> TextPairReader::Next(std::string_view* src, std::string_view* dst) {
  State& st = *state_;
  if (st.table) {
    std::string_view fields[2];
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, st.table->Next(fields));
      if (!more) return false;
      const bool first = !st.seen_data;
      st.seen_data = true;
      if (first && !st.named && st.header == HeaderRule::kYes) {  // a declared header
        st.skipped_header = true;
        continue;
      }
      break;
    }
    const int last = std::max(st.table->column_index(0), st.table->column_index(1));
    if (st.table->fields_in_line() <= last) {
      return InvalidArgument(Where() + ": " + std::to_string(st.table->fields_in_line()) + " fields, but column " +
                             std::to_string(last) + " is needed: '" + std::string(st.table->line().substr(0, 80)) + "'");
    }
    *src = fields[0];
    *dst = fields[1];
    if (src->empty() || dst->empty()) return InvalidArgument(Where() + ": empty node id");
    return true;
  }
  for (;;) {
    SEER_ASSIGN_OR_RETURN(bool more, st.reader->NextLine(&st.line));
    if (!more) return false;
    if (IsCommentOrBlank(st.line)) {
      if (st.seen_data && !IsBlankLine(st.line)) ++st.comments_after_data;
      continue;
    }
    const bool first = !st.seen_data;
    st.seen_data = true;
    if (first && st.header == HeaderRule::kYes) {
      st.skipped_header = true;
      continue;
    }
    std::string_view tokens[3];
    const int count = Tokenize(st.line, tokens);
    if (count != 2) {
      return InvalidArgument(Where() + ": malformed line (expected 2 fields 'src dst', got " + std::to_string(count) +
                             "): '" + std::string(st.line.substr(0, 80)) + "'");
    }
    *src = tokens[0];
    *dst = tokens[1];
    return true;
  }
}

}  // namespace seer
