#include "storage/prep/text_table.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "storage/base/parse_number.h"

namespace seer {

bool IsBlankLine(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

bool IsCommentOrBlank(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t\r");
  return first == std::string_view::npos || line[first] == '#' || line[first] == '%';
}

bool SkippedTableLine(std::string_view line, const TableLayout& layout) {
  const size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return true;
  return layout.comments && (line[first] == '#' || line[first] == '%');
}

char DetectDelimiter(std::string_view line) {
  if (line.find(',') != std::string_view::npos) return ',';
  if (line.find('\t') != std::string_view::npos) return '\t';
  return ' ';
}

std::string_view TrimField(std::string_view f) {
  while (!f.empty() && (f.front() == ' ' || f.front() == '\t' || f.front() == '\r')) f.remove_prefix(1);
  while (!f.empty() && (f.back() == ' ' || f.back() == '\t' || f.back() == '\r')) f.remove_suffix(1);
  if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
  return f;
}

int SplitFields(std::string_view line, char delimiter, int last, std::string_view* fields) {
  int count = 0;
  size_t i = 0;
  if (delimiter == ' ') {
    for (;;) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i >= line.size()) break;
      size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (count <= last) fields[count] = TrimField(line.substr(start, i - start));
      ++count;
    }
    return count;
  }
  for (;;) {
    size_t next = line.find(delimiter, i);
    std::string_view f = line.substr(i, next == std::string_view::npos ? std::string_view::npos : next - i);
    if (count <= last) fields[count] = TrimField(f);
    ++count;
    if (next == std::string_view::npos) break;
    i = next + 1;
  }
  return count;
}

bool IsColumnIndex(const std::string& column) {
  return !column.empty() && std::all_of(column.begin(), column.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Result<TableLayout> ResolveTableLayout(std::string_view first_line, const std::vector<TableColumn>& columns,
                                       const std::string& where) {
  TableLayout layout;
  layout.delimiter = DetectDelimiter(first_line);
  std::string_view fields[kMaxTableFields];
  const int count = SplitFields(first_line, layout.delimiter, kMaxTableFields - 1, fields);
  const int seen = std::min(count, kMaxTableFields);
  bool named = false;
  for (const TableColumn& column : columns) {
    int index = -1;
    if (IsColumnIndex(column.spec)) {
      index = ParseNumber<int>(column.spec).value_or(kMaxTableFields);
      if (index >= kMaxTableFields) {
        return InvalidArgument(fmt::format("{}: column index {} is beyond the {} fields read", where, column.spec,
                                           kMaxTableFields));
      }
    } else {
      named = true;
      for (int f = 0; f < seen; ++f) {
        if (fields[f] == column.spec) index = f;
      }
      if (index < 0) {
        std::string names;
        for (int f = 0; f < seen; ++f) names += (f ? ", " : "") + std::string(fields[f]);
        return InvalidArgument(fmt::format("{}: no column '{}' in the header ({})", where, column.spec, names));
      }
    }
    layout.index.push_back(index);
    layout.last = std::max(layout.last, index);
  }
  if (named) {
    layout.header = true;
    layout.comments = false;
    return layout;
  }
  bool any_numeric = false, all_text = true;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!columns[c].numeric) continue;
    any_numeric = true;
    const int index = layout.index[c];
    if (index >= count || ParseNumber<int64_t>(fields[index])) all_text = false;
  }
  layout.header = any_numeric && all_text;
  return layout;
}

Result<TextTableReader> TextTableReader::Open(const std::string& path, std::vector<TableColumn> columns) {
  SEER_ASSIGN_OR_RETURN(TextLineReader reader, TextLineReader::Open(path));
  return TextTableReader(std::move(reader), std::move(columns));
}

std::string TextTableReader::Where() const { return fmt::format("{}:{}", reader_.path(), reader_.line_number()); }

Result<bool> TextTableReader::Next(std::string_view* fields) {
  std::string_view all[kMaxTableFields];
  for (;;) {
    SEER_ASSIGN_OR_RETURN(bool more, reader_.NextLine(&line_));
    if (!more) return false;
    if (first_ ? IsCommentOrBlank(line_) : SkippedTableLine(line_, layout_)) {
      if (seen_data_ && !IsBlankLine(line_)) ++comments_after_data_;
      continue;
    }
    if (first_) {
      first_ = false;
      SEER_ASSIGN_OR_RETURN(layout_, ResolveTableLayout(line_, columns_, Where()));
      if (layout_.header) continue;
    }
    seen_data_ = true;
    fields_in_line_ = SplitFields(line_, layout_.delimiter, layout_.last, all);
    for (size_t c = 0; c < columns_.size(); ++c) {
      const int index = layout_.index[c];
      fields[c] = index < fields_in_line_ ? all[index] : std::string_view();
    }
    return true;
  }
}

}  // namespace seer
