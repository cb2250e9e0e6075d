// Delimited text tables for `seer prep` (CSV, TSV, blank-separated): what an edge list's
// --src-col/--dst-col, the labels table (--labels FILE.csv) and the split id lists
// (--train/--valid/--test FILE.txt) share.
//   delimiter  found on the first non-comment line: ',' if it has one, else a tab, else
//              runs of blanks;
//   fields     trimmed of blanks and '\r', one pair of surrounding double quotes removed
//              (no delimiters inside quotes);
//   columns    a header name, or a 0-based field index (all digits). A named column makes
//              the first non-comment line the header; with indices only, that line is a
//              header when every field of a numeric column (TableColumn::numeric) is
//              there and is not an integer (a table without numeric columns has a
//              header only through a name);
//   comments   blank lines are skipped; lines starting with '#' or '%' (after blanks) are
//              comments before the first non-comment line, and after it only in a table
//              without a named column: a table with a header is a CSV, where every line
//              after the header is a row (an id may start with '#').
// Pure functions, and TextTableReader (one file, line by line; move-only, not
// thread-safe). Errors are one line naming the file and line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/base/status.h"
#include "storage/prep/text_reader.h"

namespace seer {

// Fields beyond this many are not looked at (a column index must be below it).
inline constexpr int kMaxTableFields = 64;

bool IsBlankLine(std::string_view line);
bool IsCommentOrBlank(std::string_view line);
char DetectDelimiter(std::string_view line);  // ' ' = runs of blanks
std::string_view TrimField(std::string_view field);
// Fields of `line` up to index `last` (inclusive) into fields[]; returns the number of
// fields the line has (all of them, for messages when too few).
int SplitFields(std::string_view line, char delimiter, int last, std::string_view* fields);
bool IsColumnIndex(const std::string& column);

struct TableColumn {
  std::string spec;      // header name or 0-based index
  bool numeric = false;  // holds integers: used to recognise a header (above)
};

// Where each column is, found on the first non-comment line.
struct TableLayout {
  char delimiter = ',';
  std::vector<int> index;  // per column
  int last = 0;            // the largest index
  bool header = false;     // the first line is a header, not data
  bool comments = true;    // '#'/'%' lines after the first line are comments (no named column)
};

// A line that is skipped after the first line of a table with `layout`: blank, or a
// comment where the layout has them.
bool SkippedTableLine(std::string_view line, const TableLayout& layout);

// `where` ("path:line") prefixes the errors: a name not in the header (listing it), an
// index beyond kMaxTableFields.
Result<TableLayout> ResolveTableLayout(std::string_view first_line, const std::vector<TableColumn>& columns,
                                       const std::string& where);

// A table file read line by line (".gz" through zlib): Next hands out the selected
// fields of each data line, in the order of the columns given.
class TextTableReader {
 public:
  static Result<TextTableReader> Open(const std::string& path, std::vector<TableColumn> columns);

  // The next data line: fields[i] = column i's field ("" when the line has fewer
  // fields: see fields_in_line()); false at the end. Views valid until the next call.
  Result<bool> Next(std::string_view* fields);
  int fields_in_line() const { return fields_in_line_; }
  int column_index(int column) const { return layout_.index[static_cast<size_t>(column)]; }
  std::string_view line() const { return line_; }
  int64_t line_number() const { return reader_.line_number(); }
  std::string Where() const;  // "path:line" of the last line read
  const std::string& path() const { return reader_.path(); }
  // Comment lines skipped after the first data line (TableLayout::comments).
  int64_t comments_after_data() const { return comments_after_data_; }

 private:
  TextTableReader(TextLineReader reader, std::vector<TableColumn> columns)
      : reader_(std::move(reader)), columns_(std::move(columns)) {}
  TextLineReader reader_;
  std::vector<TableColumn> columns_;
  TableLayout layout_;
  bool first_ = true;
  bool seen_data_ = false;
  int64_t comments_after_data_ = 0;
  std::string_view line_;
  int fields_in_line_ = 0;
};

}  // namespace seer
