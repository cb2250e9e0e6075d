// The input rules of `seer prep` that decide what a user's file means (storage/prep/
// dataset_prep.h, edge_list.h): the header and '#' rules of --remap-ids and of the
// integer path (the same rule; each case compares the two topologies or an oracle by
// hand), feature values that are NaN/inf or that the stored dtype cannot hold (refused
// naming file, row and column, or kept and counted with allow_non_finite; `seer check
// --deep` flags them), and ids that node_ids.txt could not give back (refused naming
// file and line). Before these rules, each case below was read silently wrong.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"
#include "storage/dataset/float16.h"
#include "storage/dataset/dataset_check.h"
#include "storage/prep/dataset_prep.h"
#include "storage/prep/npy.h"
#include "support/test_support.h"
#include "text_fixtures.h"

namespace seer {
namespace {

using namespace std::string_literals;
using testing::ReadArray;
using testing::WriteText;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A prep of `text` (written to dir/NAME) with `columns`; remap_ids as given.
struct Prepped {
  Result<PrepSummary> summary = Status(StatusCode::kInternal, "not run");
  std::string out;
  std::vector<int64_t> indptr;
  std::vector<uint32_t> indices;
  std::string node_ids;
};

Prepped Prep(const std::string& dir, const std::string& name, const std::string& text, TextColumns columns,
             bool remap, const PrepOptions& options = {}) {
  static int run = 0;
  WriteText(dir + "/" + name, text);
  PrepInputs in;
  in.edges = dir + "/" + name;
  in.columns = std::move(columns);
  in.remap_ids = remap;
  Prepped p;
  p.out = dir + "/out" + std::to_string(run++);
  p.summary = PrepareDataset(in, options, p.out);
  if (!p.summary.ok()) return p;
  p.indptr = ReadArray<int64_t>(p.out + "/indptr.bin");
  p.indices = ReadArray<uint32_t>(p.out + "/indices.bin");
  if (remap) p.node_ids = testing::ReadFileBytes(p.out + "/node_ids.txt");
  return p;
}

// The edges of a prepped dataset as (src id, dst id) text pairs, sorted by the CSC's order
// (dst, then src): ids through node_ids.txt when remapped.
std::vector<std::pair<std::string, std::string>> Edges(const Prepped& p) {
  std::vector<std::string> names;
  for (size_t at = 0, nl; (nl = p.node_ids.find('\n', at)) != std::string::npos; at = nl + 1) {
    names.push_back(p.node_ids.substr(at, nl - at));
  }
  auto name = [&](int64_t v) { return names.empty() ? std::to_string(v) : names[static_cast<size_t>(v)]; };
  std::vector<std::pair<std::string, std::string>> edges;
  for (size_t v = 0; v + 1 < p.indptr.size(); ++v) {
    for (int64_t e = p.indptr[v]; e < p.indptr[v + 1]; ++e) edges.emplace_back(name(p.indices[e]), name(v));
  }
  std::sort(edges.begin(), edges.end());
  return edges;
}

using EdgeList = std::vector<std::pair<std::string, std::string>>;

// Issue 27: with named columns, a data line whose first id starts with '#' is a row (the
// CSV has no comments after its header); before, it was dropped (1 edge of 2).
TEST(PrepInputRulesTest, HashIdsInANamedCsvAreRows) {
  const std::string dir = testing::MakeTempDir("prep_rules");
  Prepped p = Prep(dir, "e.csv", "a,b\n#tag,bob\nann,bob\n%x,ann\n", {"a", "b"}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(p.summary->csc.num_edges, 3);
  EXPECT_EQ(p.node_ids, "#tag\n%x\nann\nbob\n");
  EXPECT_EQ(Edges(p), (EdgeList{{"#tag", "bob"}, {"%x", "ann"}, {"ann", "bob"}}));
  EXPECT_EQ(p.summary->comments_after_data, 0);
  // A comment before the header is still one (an export's preamble).
  p = Prep(dir, "e2.csv", "# exported\na,b\n#tag,bob\n", {"a", "b"}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(Edges(p), (EdgeList{{"#tag", "bob"}}));
  // The integer path reads the same line as a row too: a non-numeric id, named.
  p = Prep(dir, "e3.csv", "a,b\n1,2\n#3,2\n", {"a", "b"}, false);
  ASSERT_FALSE(p.summary.ok());
  EXPECT_NE(p.summary.status().message().find("e3.csv:3: non-numeric node id '#3'"), std::string::npos)
      << p.summary.status().message();
  // Plain lists keep '#'/'%' comments, and a comment after the first edge is counted
  // (the summary says ids starting with '#' need named columns).
  p = Prep(dir, "e4.txt", "# preamble\nann bob\n#tag bob\n\n% c\ncat bob\n", {}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(Edges(p), (EdgeList{{"ann", "bob"}, {"cat", "bob"}}));
  EXPECT_EQ(p.summary->comments_after_data, 2);
}

// Issue 27: without a named column, --remap-ids imported a header as an edge (phantom
// nodes "src" and "dst"). Now the rule of the integer path decides: the first data line
// is a header when its ids are not integers (and, with string ids, occur on no other
// line). Each case: the remapped topology equals the integer path's or the hand oracle.
TEST(PrepInputRulesTest, HeaderWithIndexColumnsOrPlainListsIsNotAnEdge) {
  const std::string dir = testing::MakeTempDir("prep_rules");
  const EdgeList integer_edges = {{"1", "2"}, {"2", "5"}, {"3", "2"}};  // sorted
  const struct {
    const char* name;
    std::string text;
    TextColumns columns;
  } integer_cases[] = {
      {"i.csv", "src,dst\n1,2\n3,2\n2,5\n", {"0", "1"}},
      {"i.tsv", "w\tsrc\tdst\n0\t1\t2\n0\t3\t2\n0\t2\t5\n", {"1", "2"}},
      {"i.txt", "src dst\n1 2\n3 2\n2 5\n", {}},
      {"h.txt", "# c\nfrom\tto\n1\t2\n3\t2\n2\t5\n", {}},
  };
  for (const auto& c : integer_cases) {
    SCOPED_TRACE(c.name);
    Prepped remapped = Prep(dir, c.name, c.text, c.columns, true);
    ASSERT_TRUE(remapped.summary.ok()) << remapped.summary.status().ToString();
    EXPECT_EQ(remapped.node_ids, "1\n2\n3\n5\n");
    EXPECT_EQ(Edges(remapped), integer_edges);
    EXPECT_FALSE(remapped.summary->detected_header.empty());
    Prepped plain = Prep(dir, c.name, c.text, c.columns, false);
    ASSERT_TRUE(plain.summary.ok()) << plain.summary.status().ToString();
    EXPECT_EQ(Edges(plain), integer_edges);  // the integer path's header rule: the same edges
  }
  // String ids: "src,dst" names no node: a header, reported with its line.
  Prepped p = Prep(dir, "s.csv", "src,dst\nann,bob\ncat,bob\n", {"0", "1"}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(p.node_ids, "ann\nbob\ncat\n");
  EXPECT_EQ(p.summary->detected_header, "src,dst");
  EXPECT_EQ(p.summary->detected_header_line, 1);
  // A first line whose ids occur again is data (no header), wherever they occur.
  p = Prep(dir, "s2.txt", "ann bob\ncat dan\ndan ann\n", {}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(Edges(p), (EdgeList{{"ann", "bob"}, {"cat", "dan"}, {"dan", "ann"}}));
  EXPECT_TRUE(p.summary->detected_header.empty());
  // A first line with an integer id is data.
  p = Prep(dir, "s3.txt", "7 bob\ncat dan\n", {}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(p.summary->csc.num_edges, 2);
  // Declared: --edges-header no keeps it as an edge, yes drops the first line whatever
  // it holds (both paths).
  p = Prep(dir, "s4.csv", "src,dst\nann,bob\n", {"0", "1", HeaderRule::kNo}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(Edges(p), (EdgeList{{"ann", "bob"}, {"src", "dst"}}));
  p = Prep(dir, "s5.txt", "ann bob\nbob ann\n", {"", "", HeaderRule::kYes}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(Edges(p), (EdgeList{{"bob", "ann"}}));
  p = Prep(dir, "s6.txt", "1 2\n2 3\n", {"", "", HeaderRule::kYes}, false);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(Edges(p), (EdgeList{{"2", "3"}}));
  p = Prep(dir, "s7.csv", "1,2\n2,3\n", {"0", "1", HeaderRule::kYes}, false);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(Edges(p), (EdgeList{{"2", "3"}}));
  p = Prep(dir, "s8.txt", "src dst\n1 2\n", {"", "", HeaderRule::kNo}, false);
  ASSERT_FALSE(p.summary.ok());
  EXPECT_NE(p.summary.status().message().find("s8.txt:1: non-numeric node id 'src'"), std::string::npos)
      << p.summary.status().message();
  // A named column needs the header line.
  for (bool remap : {true, false}) {
    p = Prep(dir, "s9.csv", "a,b\n1,2\n", {"a", "b", HeaderRule::kNo}, remap);
    ASSERT_FALSE(p.summary.ok());
    EXPECT_NE(p.summary.status().message().find("--edges-header no, but a column named"), std::string::npos)
        << p.summary.status().message();
  }
  // Many lines (the held first line is compared with every later id).
  std::string text = "source\ttarget\n";
  for (int i = 0; i < 5000; ++i) text += "u" + std::to_string(i) + "\tu" + std::to_string((i * 7) % 5000) + "\n";
  p = Prep(dir, "big.tsv", text, {"0", "1"}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  EXPECT_EQ(p.summary->csc.num_nodes, 5000);
  EXPECT_EQ(p.summary->csc.num_edges, 5000);
  EXPECT_EQ(p.summary->detected_header, "source\ttarget");
}

// Issue 27: ids that node_ids.txt cannot give back were written raw ('\r', NUL,
// invalid UTF-8: numpy read a shifted mapping; blanks: not reusable as --node-ids). Now
// refused naming the file and line; the ids that pass make a node_ids.txt that is
// reusable as --node-ids as is.
TEST(PrepInputRulesTest, IdsThatCannotRoundTripAreRefused) {
  const std::string dir = testing::MakeTempDir("prep_rules");
  const struct {
    std::string text;
    TextColumns columns;
    std::string expected;
  } bad[] = {
      {"a,b\nann,\" bob\"\n", {"a", "b"}, "e.csv:2: node id ' bob' has a blank at its start or end"},
      {"a,b\nann,\"bob\t\"\n", {"a", "b"}, "e.csv:2: node id 'bob\\x09' has a control character"},
      {"a,b\nann,x\xe2\x80\xa8y\n", {"a", "b"}, "e.csv:2: node id 'x\\xe2\\x80\\xa8y' has a Unicode line break"},
      {"a,b\nann,x\ry\n", {"a", "b"}, "e.csv:2: node id 'x\\x0dy' has a line break"},
      {"ann bob\nx\0y bob\n"s, {}, "e.csv:2: node id 'x\\x00y' has a NUL byte"},
      {"ann bob\ncat x\xffy\n", {}, "e.csv:2: node id 'x\\xffy' has invalid UTF-8"},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.expected);
    Prepped p = Prep(dir, "e.csv", b.text, b.columns, true);
    ASSERT_FALSE(p.summary.ok());
    const std::string& message = p.summary.status().message();
    EXPECT_NE(message.find(b.expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
    EXPECT_FALSE(testing::FileExists(p.out + "/dataset.json"));
  }
  // Ids with inner blanks, quotes, '#' and UTF-8 pass, and node_ids.txt is a valid
  // --node-ids file for the same edges: the second prep gives the same dataset.
  const std::string text = "a,b\n\"jos\xc3\xa9 m\",bob\n#x,\"a b\"\nbob,\"q\"\"\"\n";
  Prepped p = Prep(dir, "ok.csv", text, {"a", "b"}, true);
  ASSERT_TRUE(p.summary.ok()) << p.summary.status().ToString();
  PrepInputs again;
  again.edges = dir + "/ok.csv";
  again.columns = {"a", "b"};
  again.remap_ids = true;
  again.node_ids = p.out + "/node_ids.txt";
  auto second = PrepareDataset(again, PrepOptions{}, dir + "/again");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->nodes_without_edges, 0);
  EXPECT_EQ(testing::ReadFileBytes(dir + "/again/node_ids.txt"), p.node_ids);
  EXPECT_EQ(testing::ReadFileBytes(dir + "/again/indices.bin"), testing::ReadFileBytes(p.out + "/indices.bin"));
  // A --node-ids line that could not round-trip is refused with its line.
  WriteText(dir + "/ids.txt", "bob\n#x\nx\xc3y\n");
  again.node_ids = dir + "/ids.txt";
  auto refused = PrepareDataset(again, PrepOptions{}, dir + "/again2");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("ids.txt:3: node id 'x\\xc3y' has invalid UTF-8"), std::string::npos)
      << refused.status().message();
}

// Features of `values` (rows x cols) as a .npy of `descr` (<f2, <f4, <f8).
void WriteFeatures(const std::string& path, const std::string& descr, const std::vector<double>& values,
                   int64_t cols) {
  const int64_t rows = static_cast<int64_t>(values.size()) / cols;
  if (descr == "<f8") {
    ASSERT_TRUE(WriteNpy(path, descr, {rows, cols}, values.data()).ok());
  } else if (descr == "<f4") {
    std::vector<float> f(values.begin(), values.end());
    ASSERT_TRUE(WriteNpy(path, descr, {rows, cols}, f.data()).ok());
  } else {
    std::vector<uint16_t> h;
    for (double v : values) h.push_back(FloatToHalf(static_cast<float>(v)));
    ASSERT_TRUE(WriteNpy(path, descr, {rows, cols}, h.data()).ok());
  }
}

// Issue 27: prep turned finite values into inf (70000 as float16, 1e300 from float64) and
// accepted NaN/inf, `check --deep` said OK and training failed mid-run. Now each is
// refused with one line naming the file, the row and the column of the first one.
TEST(PrepInputRulesTest, NonFiniteAndOverflowingFeaturesAreRefused) {
  const std::string dir = testing::MakeTempDir("prep_rules");
  WriteText(dir + "/e.txt", "0 1\n2 1\n");
  const double nan = std::nan("");
  const struct {
    std::string descr;
    std::vector<double> values;  // 3 rows x 2
    std::optional<FeatureDtype> dtype;
    std::string expected;
  } cases[] = {
      {"<f4", {1, 2, 3, 4, 5, nan}, std::nullopt, "f.npy: row 2, column 1: feature value nan is not finite"},
      {"<f4", {1, 2, kInf, 4, 5, 6}, std::nullopt, "f.npy: row 1, column 0: feature value inf is not finite"},
      {"<f4", {1, 70000, 3, 4, 5, 6}, FeatureDtype::kFloat16,
       "f.npy: row 0, column 1: feature value 70000 does not fit float16 (largest finite 65504) and would be stored "
       "as inf"},
      {"<f4", {1, 2, 3, 4, -65520, 6}, FeatureDtype::kFloat16,
       "f.npy: row 2, column 0: feature value -65520 does not fit float16 (largest finite 65504) and would be "
       "stored as -inf"},
      {"<f4", {1, 2, 3, 3.39e38, 5, 6}, FeatureDtype::kBFloat16, ""},  // rounds to bfloat16's largest: fine
      {"<f4", {1, 2, 3, 3.4e38, 5, 6}, FeatureDtype::kBFloat16,
       "f.npy: row 1, column 1: feature value 3.4e+38 does not fit bfloat16 (largest finite 3.389531e+38)"},
      {"<f8", {1, 2, 3, 4, 1e300, 6}, std::nullopt,
       "f.npy: row 2, column 0: feature value 1e+300 does not fit float32 (largest finite 3.402823e+38)"},
      {"<f8", {1, 2, 3, -kInf, 5, 6}, FeatureDtype::kFloat16, "f.npy: row 1, column 1: feature value -inf is not finite"},
      {"<f2", {1, 2, 3, kInf, 5, 6}, std::nullopt, "f.npy: row 1, column 1: feature value inf is not finite"},
      {"<f2", {1, nan, 3, 4, 5, 6}, FeatureDtype::kFloat32, "f.npy: row 0, column 1: feature value nan is not finite"},
  };
  int run = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expected);
    WriteFeatures(dir + "/f.npy", c.descr, c.values, 2);
    PrepInputs in;
    in.edges = dir + "/e.txt";
    in.features = dir + "/f.npy";
    PrepOptions options;
    options.feature_dtype = c.dtype;
    const std::string out = dir + "/out" + std::to_string(run++);
    auto result = PrepareDataset(in, options, out);
    if (c.expected.empty()) {
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      EXPECT_TRUE(CheckDataset(out, DatasetCheckOptions{true}).ok());
      continue;
    }
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.status().message().find(c.expected), std::string::npos) << result.status().message();
    EXPECT_EQ(result.status().message().find('\n'), std::string::npos);
    EXPECT_FALSE(testing::FileExists(out + "/dataset.json"));
    // --allow-non-finite: stored, counted, and then flagged by the deep check (only).
    options.allow_non_finite = true;
    options.force = true;
    result = PrepareDataset(in, options, out);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->non_finite_kept + result->overflowed_to_inf, 1);
    EXPECT_EQ(result->overflowed_to_inf, c.expected.find("does not fit") != std::string::npos ? 1 : 0);
    EXPECT_TRUE(CheckDataset(out, DatasetCheckOptions{false}).ok());
    auto deep = CheckDataset(out, DatasetCheckOptions{true});
    ASSERT_FALSE(deep.ok());
    const size_t at = c.expected.find("row ");
    const std::string row = c.expected.substr(at + 4, 1), column = c.expected.substr(c.expected.find("column ") + 7, 1);
    EXPECT_NE(deep.status().message().find("features.bin: node " + row + ", feature " + column), std::string::npos)
        << deep.status().message();
    EXPECT_NE(deep.status().message().find("is not finite"), std::string::npos) << deep.status().message();
  }
}

// The position named is the input's: with --node-ids, features are read in node order
// but the error names the .npy row; and the first bad value in file order of the nodes.
TEST(PrepInputRulesTest, NonFiniteErrorNamesTheInputRowUnderNodeIds) {
  const std::string dir = testing::MakeTempDir("prep_rules");
  WriteText(dir + "/e.txt", "bob ann\n");
  WriteText(dir + "/ids.txt", "cy\nbob\nann\n");  // row 0 = cy (no edge: kept, degree 0)
  WriteFeatures(dir + "/f.npy", "<f8", {kInf, 1, 2, 3, 4, 5}, 2);
  PrepInputs in;
  in.edges = dir + "/e.txt";
  in.remap_ids = true;
  in.node_ids = dir + "/ids.txt";
  in.features = dir + "/f.npy";
  auto result = PrepareDataset(in, PrepOptions{}, dir + "/out");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("f.npy: row 0, column 0: feature value inf is not finite"),
            std::string::npos)
      << result.status().message();
}

// Many values through the chunked copy: allow_non_finite counts every one (NaN/inf kept,
// finite values beyond float16 stored as inf), and the stored values are what the
// converter gives.
TEST(PrepInputRulesTest, AllowNonFiniteCountsEveryValue) {
  const std::string dir = testing::MakeTempDir("prep_rules");
  const int64_t rows = 3000, cols = 64;
  std::string edges;
  for (int64_t v = 1; v < rows; ++v) edges += std::to_string(v - 1) + " " + std::to_string(v) + "\n";
  WriteText(dir + "/e.txt", edges);
  std::vector<double> values(static_cast<size_t>(rows * cols));
  int64_t kept = 0, overflowed = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<double>(i % 97) - 40;
    if (i % 1001 == 3) values[i] = std::nan(""), ++kept;
    if (i % 997 == 5) values[i] = -kInf, ++kept;
    if (i % 991 == 7) values[i] = 1e5, ++overflowed;
  }
  WriteFeatures(dir + "/f.npy", "<f8", values, cols);
  PrepInputs in;
  in.edges = dir + "/e.txt";
  in.features = dir + "/f.npy";
  PrepOptions options;
  options.feature_dtype = FeatureDtype::kFloat16;
  options.allow_non_finite = true;
  options.memory_budget_bytes = 4 << 20;  // chunks of 1024 rows: the counts cross chunk boundaries
  auto result = PrepareDataset(in, options, dir + "/out");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->non_finite_kept, kept);
  EXPECT_EQ(result->overflowed_to_inf, overflowed);
  const auto stored = ReadArray<uint16_t>(dir + "/out/features.bin");
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(stored[i], FloatToHalf(static_cast<float>(values[i]))) << i;
  }
}

// OGB's node-feat.csv: the same rules, named by line and (1-based) column.
TEST(PrepInputRulesTest, OgbFeatureCsvValuesAreChecked) {
  const std::string dir = testing::MakeTempDir("prep_rules");
  ASSERT_TRUE(MakeDirectories(dir + "/raw").ok());
  WriteText(dir + "/raw/edge.csv", "0,1\n1,2\n");
  const struct {
    std::string csv;
    std::string expected;
    bool overflow;
  } cases[] = {
      {"1,2\n3,nan\n5,6\n", "node-feat.csv:2: column 2: feature value nan is not finite", false},
      {"1,2\n3,4\n-inf,6\n", "node-feat.csv:3: column 1: feature value -inf is not finite", false},
      {"1,1e300\n3,4\n5,6\n", "node-feat.csv:1: column 2: feature value 1e300 does not fit float32", true},
  };
  // A value below float32's subnormals is a number, stored as 0 (from_chars calls it out
  // of range, as it does 1e300).
  WriteText(dir + "/raw/node-feat.csv", "1,1e-50\n3,-1e-50\n5,6\n");
  {
    PrepInputs in;
    in.ogb_dir = dir;
    auto result = PrepareDataset(in, PrepOptions{}, dir + "/tiny");
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(ReadArray<float>(dir + "/tiny/features.bin")[1], 0.0f);
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expected);
    WriteText(dir + "/raw/node-feat.csv", c.csv);
    PrepInputs in;
    in.ogb_dir = dir;
    PrepOptions options;
    options.force = true;
    auto result = PrepareDataset(in, options, dir + "/out");
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.status().message().find(c.expected), std::string::npos) << result.status().message();
    options.allow_non_finite = true;
    result = PrepareDataset(in, options, dir + "/out");
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->overflowed_to_inf, c.overflow ? 1 : 0);
    EXPECT_EQ(result->non_finite_kept, c.overflow ? 0 : 1);
  }
}

}  // namespace
}  // namespace seer
