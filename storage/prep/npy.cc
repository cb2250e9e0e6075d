#include "storage/prep/npy.h"

#include <fcntl.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <vector>

#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"
#include "storage/dataset/float16.h"

namespace seer {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr int64_t kMagicBytes = 6;

// Header text quoted in an error, with control and non-ASCII bytes as \xNN, so the
// message stays one line whatever the file holds.
std::string Printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// Scanner over the header's Python dict literal. pos_ is the offset inside the header
// text; errors report it as an absolute file offset.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text, int64_t base)
      : path_(path), text_(text), base_(base) {}

  Status Parse(NpyHeader* out) {
    bool have_descr = false, have_order = false, have_shape = false;
    SkipSpace();
    SEER_RETURN_IF_ERROR(Expect('{'));
    for (;;) {
      SkipSpace();
      if (Peek() == '}') break;
      std::string key;
      SEER_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      SEER_RETURN_IF_ERROR(Expect(':'));
      SkipSpace();
      if (key == "descr") {
        if (Peek() != '\'' && Peek() != '"') return Error("structured dtypes are not supported");
        SEER_RETURN_IF_ERROR(ParseString(&out->descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        if (text_.compare(pos_, 4, "True") == 0) out->fortran_order = true, pos_ += 4;
        else if (text_.compare(pos_, 5, "False") == 0) out->fortran_order = false, pos_ += 5;
        else return Error("fortran_order must be True or False");
        have_order = true;
      } else if (key == "shape") {
        SEER_RETURN_IF_ERROR(ParseShape(&out->shape));
        have_shape = true;
      } else {
        return Error("unexpected header key '" + key + "'");
      }
      SkipSpace();
      if (Peek() == ',') ++pos_;
    }
    if (!have_descr || !have_order || !have_shape) {
      return Error("header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    ++pos_;  // '}'
    // The header runs exactly to the data: the dict, space padding, then '\n' as its last
    // byte. A header length that stops early (or late) shifts every element.
    while (pos_ + 1 < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    if (pos_ + 1 != text_.size() || text_.back() != '\n') {
      return Error("the header must end with space padding and a newline at byte offset " +
                   std::to_string(base_ + static_cast<int64_t>(text_.size()) - 1) +
                   " (its recorded length does not reach the data start)");
    }
    return Status::Ok();
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  Status Error(const std::string& what) const {
    return Corrupt(path_ + ": bad .npy header at byte offset " +
                   std::to_string(base_ + static_cast<int64_t>(pos_)) + ": " + Printable(what));
  }
  Status Expect(char c) {
    if (Peek() != c) return Error(std::string("expected '") + c + "'");
    ++pos_;
    return Status::Ok();
  }
  Status ParseString(std::string* out) {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return Error("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) return Error("unterminated string");
    *out = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return Status::Ok();
  }
  Status ParseShape(std::vector<int64_t>* shape) {
    SEER_RETURN_IF_ERROR(Expect('('));
    for (;;) {
      SkipSpace();
      if (Peek() == ')') {
        ++pos_;
        return Status::Ok();
      }
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) return Error("expected a dimension");
      int64_t dim = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        if (dim > (INT64_MAX - 9) / 10) return Error("dimension too large");
        dim = dim * 10 + (text_[pos_++] - '0');
      }
      if (Peek() == 'L') ++pos_;  // Python 2 longs
      shape->push_back(dim);
      SkipSpace();
      if (Peek() == ',') ++pos_;
      else if (Peek() != ')') return Error("expected ',' or ')' in shape");
    }
  }

  const std::string& path_;
  const std::string& text_;
  int64_t base_;
  size_t pos_ = 0;
};

Status ParseDescr(const std::string& path, NpyHeader* h) {
  const std::string& d = h->descr;
  auto bad = [&](const std::string& why) {
    return Status(StatusCode::kUnsupported, path + ": dtype '" + Printable(d) + "' " + why);
  };
  // Every accepted dtype is three characters ("<f4", "|b1"); atoi would take "<f2 junk".
  if (d.size() != 3 || !std::isdigit(static_cast<unsigned char>(d[2]))) return bad("is not a numeric dtype");
  char order = d[0];
  h->kind = d[1];
  h->item_bytes = d[2] - '0';
  if (std::string("fiub").find(h->kind) == std::string::npos) return bad("is not a numeric dtype");
  bool ok_size = (h->kind == 'f' && (h->item_bytes == 2 || h->item_bytes == 4 || h->item_bytes == 8)) ||
                 ((h->kind == 'i' || h->kind == 'u') &&
                  (h->item_bytes == 1 || h->item_bytes == 2 || h->item_bytes == 4 || h->item_bytes == 8)) ||
                 (h->kind == 'b' && h->item_bytes == 1);
  if (!ok_size) return bad("has an unsupported item size");
  if (order == '>' && h->item_bytes > 1) return bad("is big-endian (only little-endian is supported)");
  if (order != '<' && order != '|' && order != '=' && order != '>') return bad("has an unknown byte order");
  return Status::Ok();
}

template <typename T>
T Load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

int64_t NpyHeader::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

std::string NpyHeader::ShapeString() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

Result<NpyFile> NpyFile::Open(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  unsigned char preamble[12] = {};
  if (size < 10) {
    return Status(StatusCode::kUnexpectedEof,
                  path + ": truncated .npy: " + std::to_string(size) + " bytes, shorter than the preamble");
  }
  SEER_RETURN_IF_ERROR(PreadFull(fd.get(), preamble, std::min<int64_t>(size, 12), 0, path));
  if (std::memcmp(preamble, kMagic, kMagicBytes) != 0) {
    return Corrupt(path + ": not a .npy file (bad magic at byte offset 0)");
  }
  const int major = preamble[6];
  int64_t header_len, header_start;
  if (major == 1) {
    header_len = preamble[8] | (preamble[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    header_len = static_cast<int64_t>(Load<uint32_t>(preamble + 8));
    header_start = 12;
  } else {
    return Status(StatusCode::kUnsupported, path + ": .npy format version " + std::to_string(major) +
                                                " at byte offset 6 is not supported");
  }
  if (header_start + header_len > size) {
    return Status(StatusCode::kUnexpectedEof,
                  path + ": truncated .npy: header needs bytes up to offset " +
                      std::to_string(header_start + header_len) + ", file has " + std::to_string(size));
  }
  std::string text(static_cast<size_t>(header_len), '\0');
  SEER_RETURN_IF_ERROR(PreadFull(fd.get(), text.data(), header_len, header_start, path));
  NpyHeader header;
  header.data_offset_bytes = header_start + header_len;
  SEER_RETURN_IF_ERROR(HeaderParser(path, text, header_start).Parse(&header));
  SEER_RETURN_IF_ERROR(ParseDescr(path, &header));
  const int64_t num_elements = header.num_elements();
  int64_t data_bytes = 0;
  if (num_elements < 0 || __builtin_mul_overflow(num_elements, int64_t{header.item_bytes}, &data_bytes)) {
    return Corrupt(path + ": shape " + header.ShapeString() + " of " + header.descr +
                   " is too large (its byte size overflows 64 bits)");
  }
  if (data_bytes > size - header.data_offset_bytes) {
    return Status(StatusCode::kUnexpectedEof,
                  path + ": truncated .npy: shape " + header.ShapeString() + " of " + header.descr +
                      " needs " + std::to_string(data_bytes) + " data bytes from offset " +
                      std::to_string(header.data_offset_bytes) + ", file has " +
                      std::to_string(size - header.data_offset_bytes));
  }
  if (data_bytes != size - header.data_offset_bytes) {
    return Corrupt(path + ": shape " + header.ShapeString() + " of " + header.descr + " needs " +
                   std::to_string(data_bytes) + " data bytes from offset " +
                   std::to_string(header.data_offset_bytes) + ", file has " +
                   std::to_string(size - header.data_offset_bytes) +
                   " (the header length or the shape is wrong)");
  }
  return NpyFile(path, std::move(fd), std::move(header));
}

Status NpyFile::ReadRaw(int64_t first_element, int64_t count, void* out) const {
  return PreadFull(fd_.get(), out, count * header_.item_bytes,
                   header_.data_offset_bytes + first_element * header_.item_bytes, path_);
}

Status NpyFile::ReadAsInt64(int64_t first_element, int64_t count, int64_t* out,
                            int64_t nan_value) const {
  std::vector<unsigned char> raw(static_cast<size_t>(count * header_.item_bytes));
  SEER_RETURN_IF_ERROR(ReadRaw(first_element, count, raw.data()));
  const unsigned char* p = raw.data();
  const int b = header_.item_bytes;
  for (int64_t i = 0; i < count; ++i, p += b) {
    switch (header_.kind) {
      case 'b':
      case 'u':
        if (b == 1) out[i] = *p;
        else if (b == 2) out[i] = Load<uint16_t>(p);
        else if (b == 4) out[i] = Load<uint32_t>(p);
        else {
          uint64_t v = Load<uint64_t>(p);
          if (v > static_cast<uint64_t>(INT64_MAX)) {
            return InvalidArgument(path_ + ": element " + std::to_string(first_element + i) +
                                   " = " + std::to_string(v) + " does not fit int64");
          }
          out[i] = static_cast<int64_t>(v);
        }
        break;
      case 'i':
        if (b == 1) out[i] = static_cast<int8_t>(*p);
        else if (b == 2) out[i] = Load<int16_t>(p);
        else if (b == 4) out[i] = Load<int32_t>(p);
        else out[i] = Load<int64_t>(p);
        break;
      case 'f': {
        double v = b == 2 ? HalfToFloat(Load<uint16_t>(p)) : b == 4 ? Load<float>(p) : Load<double>(p);
        if (std::isnan(v) && nan_value != INT64_MIN) {
          out[i] = nan_value;
        } else if (!(v == std::floor(v)) || std::fabs(v) > 9e15) {
          return InvalidArgument(path_ + ": element " + std::to_string(first_element + i) + " = " +
                                 std::to_string(v) + " is not an integer (dtype " + header_.descr + ")");
        } else {
          out[i] = static_cast<int64_t>(v);
        }
        break;
      }
    }
  }
  return Status::Ok();
}

Status NpyFile::ReadAsFloat32(int64_t first_element, int64_t count, float* out) const {
  if (header_.kind == 'f' && header_.item_bytes == 4) return ReadRaw(first_element, count, out);
  if (header_.kind != 'f') {
    std::vector<int64_t> ints(static_cast<size_t>(count));
    SEER_RETURN_IF_ERROR(ReadAsInt64(first_element, count, ints.data()));
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(ints[i]);
    return Status::Ok();
  }
  std::vector<unsigned char> raw(static_cast<size_t>(count * header_.item_bytes));
  SEER_RETURN_IF_ERROR(ReadRaw(first_element, count, raw.data()));
  for (int64_t i = 0; i < count; ++i) {
    const unsigned char* p = raw.data() + i * header_.item_bytes;
    out[i] = header_.item_bytes == 2 ? HalfToFloat(Load<uint16_t>(p)) : static_cast<float>(Load<double>(p));
  }
  return Status::Ok();
}

Status WriteNpy(const std::string& path, const std::string& descr,
                const std::vector<int64_t>& shape, const void* data) {
  NpyHeader h;
  h.descr = descr;
  h.shape = shape;
  SEER_RETURN_IF_ERROR(ParseDescr(path, &h));
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + h.ShapeString() + ", }";
  // Pad with spaces so magic + 4 + header (ending in '\n') is a multiple of 64.
  size_t total = kMagicBytes + 4 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicBytes);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(dict.size() & 0xff));
  out.push_back(static_cast<char>(dict.size() >> 8));
  out += dict;
  out.append(static_cast<const char*>(data), static_cast<size_t>(h.num_elements() * h.item_bytes));
  return WriteFileAtomically(path, out);
}

}  // namespace seer
