#include "storage/prep/edge_list.h"

#include <fcntl.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/prep/npy.h"
#include "storage/prep/text_reader.h"

namespace seer {
namespace {


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

std::optional<int64_t> ParseInt(std::string_view token) {
  if (!token.empty() && token[0] == '+') token.remove_prefix(1);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || ptr != token.data() + token.size()) return std::nullopt;
  return value;
}

class TextEdgeSource : public EdgeSource {
 public:
  TextEdgeSource(std::string path, int64_t num_nodes) : path_(std::move(path)), num_nodes_(num_nodes) {}
  Status Rewind() override {
    SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(path_));
    reader_ = std::make_unique<TextLineReader>(std::move(reader));
    seen_data_ = false;
    return Status::Ok();
  }
  Result<int64_t> Read(Edge* out, int64_t max_edges) override {
    if (!reader_) SEER_RETURN_IF_ERROR(Rewind());
    int64_t n = 0;
    std::string_view line;
    while (n < max_edges) {
      SEER_ASSIGN_OR_RETURN(bool more, reader_->NextLine(&line));
      if (!more) break;
      size_t first = line.find_first_not_of(" \t\r");
      if (first == std::string_view::npos || line[first] == '#' || line[first] == '%') continue;
      std::string_view tokens[3];
      int count = Tokenize(line, tokens);
      const std::string where = path_ + ":" + std::to_string(reader_->line_number());
      std::optional<int64_t> src = count >= 1 ? ParseInt(tokens[0]) : std::nullopt;
      std::optional<int64_t> dst = count >= 2 ? ParseInt(tokens[1]) : std::nullopt;
      if (!seen_data_ && count == 2 && !src && !dst) {  // a header such as "src,dst"
        seen_data_ = true;
        continue;
      }
      seen_data_ = true;
      if (count != 2) {
        return InvalidArgument(where + ": malformed line (expected 2 fields 'src dst', got " +
                               std::to_string(count) + "): '" + std::string(line.substr(0, 80)) + "'");
      }
      if (!src || !dst) {
        return InvalidArgument(where + ": non-numeric node id '" +
                               std::string(!src ? tokens[0] : tokens[1]) + "'");
      }
      SEER_RETURN_IF_ERROR(CheckId(*src, num_nodes_, where));
      SEER_RETURN_IF_ERROR(CheckId(*dst, num_nodes_, where));
      out[n++] = Edge{*src, *dst};
    }
    return n;
  }
  int64_t num_nodes() const override { return num_nodes_; }
  std::string name() const override { return path_; }

 private:
  std::string path_;
  int64_t num_nodes_;
  std::unique_ptr<TextLineReader> reader_;
  bool seen_data_ = false;
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
    buffer_.resize(static_cast<size_t>(2 * n));
    const int64_t offset = first * kPairBytes;
    SEER_RETURN_IF_ERROR(PreadFull(fd_.get(), buffer_.data(), n * kPairBytes, offset, path_));
    for (int64_t i = 0; i < n; ++i) {
      int64_t src = buffer_[2 * i], dst = buffer_[2 * i + 1];
      if (src < 0 || dst < 0 || (num_nodes_ >= 0 && (src >= num_nodes_ || dst >= num_nodes_))) {
        const std::string where = path_ + ": edge #" + std::to_string(first + i) +
                                  " at byte offset " + std::to_string(offset + i * kPairBytes);
        SEER_RETURN_IF_ERROR(CheckId(src, num_nodes_, where));
        SEER_RETURN_IF_ERROR(CheckId(dst, num_nodes_, where));
      }
      out[i] = Edge{src, dst};
    }
    return Status::Ok();
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

Result<std::unique_ptr<EdgeSource>> OpenEdgeList(const std::string& path, EdgeListFormat format,
                                                 int64_t num_nodes) {
  format = ResolveEdgeListFormat(format, path);
  switch (format) {
    case EdgeListFormat::kAuto:
    case EdgeListFormat::kText: {
      // Fail now if the file is missing; the (gzip) stream starts at the first Rewind/Read.
      SEER_RETURN_IF_ERROR(UniqueFd::Open(path, O_RDONLY).status());
      return std::unique_ptr<EdgeSource>(new TextEdgeSource(path, num_nodes));
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

}  // namespace seer
