// Edge-list readers (storage/prep/edge_list.h): text (plain and .gz), binary and .npy
// layouts parse to the same edges; bad input names the file and the position.
#include "storage/prep/edge_list.h"

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include "storage/prep/npy.h"
#include "support/temp_dir.h"
#include "text_fixtures.h"

namespace seer {
namespace {

std::string MakeTempDir() { return testing::MakeTempDir("edge_list"); }
using testing::Gzip;
using testing::WriteText;

// Every edge of `source` from its start, read `chunk` edges at a time (small chunks
// exercise the chunk boundaries).
std::vector<std::pair<int64_t, int64_t>> ReadAll(EdgeSource& source, size_t chunk = 3) {
  std::vector<std::pair<int64_t, int64_t>> out;
  EXPECT_TRUE(source.Rewind().ok());
  std::vector<Edge> buf(chunk);
  for (;;) {
    auto n = source.Read(buf.data(), static_cast<int64_t>(buf.size()));
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) break;
    for (int64_t i = 0; i < *n; ++i) out.emplace_back(buf[i].src, buf[i].dst);
  }
  return out;
}

// The first read error of `source` from its start ("OK" when none), `chunk` edges a read.
std::string ReadError(EdgeSource& source, size_t chunk = 16) {
  if (!source.Rewind().ok()) return "rewind failed";
  std::vector<Edge> buf(chunk);
  for (;;) {
    auto n = source.Read(buf.data(), static_cast<int64_t>(buf.size()));
    if (!n.ok()) return n.status().message();
    if (*n == 0) return "OK";
  }
}

const std::vector<std::pair<int64_t, int64_t>> kEdges = {{0, 1}, {2, 1}, {3, 0}, {1, 3}, {0, 3}, {2, 3}, {3, 1}};

TEST(EdgeListTest, TextVariantsParseToTheSameEdges) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/a.txt", "# comment\nsrc dst\n0 1\n2,1\n3\t0\n\n1 3\r\n  0 , 3\n% other comment\n2 3\n3 1");
  WriteText(dir + "/b.csv", "0,1\n2,1\n3,0\n1,3\n0,3\n2,3\n3,1\n");
  WriteText(dir + "/c.csv", "0,1\n2,1\n3,0\n1,3\n0,3\n2,3\n3,1\n");
  Gzip(dir + "/c.csv");
  for (std::string name : {"a.txt", "b.csv", "c.csv.gz"}) {
    SCOPED_TRACE(name);
    auto source = OpenEdgeList(dir + "/" + name, EdgeListFormat::kAuto, -1);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_EQ(ReadAll(**source), kEdges);
    EXPECT_EQ(ReadAll(**source), kEdges) << "second pass after Rewind";
  }
}

TEST(EdgeListTest, BinaryAndNpyLayoutsParseToTheSameEdges) {
  std::string dir = MakeTempDir();
  std::vector<int32_t> pairs32;
  std::vector<int64_t> pairs64, rows;
  for (auto& [s, d] : kEdges) pairs32.insert(pairs32.end(), {static_cast<int32_t>(s), static_cast<int32_t>(d)});
  for (auto& [s, d] : kEdges) pairs64.insert(pairs64.end(), {s, d});
  for (auto& e : kEdges) rows.push_back(e.first);
  for (auto& e : kEdges) rows.push_back(e.second);
  WriteText(dir + "/e.bin32", std::string(reinterpret_cast<char*>(pairs32.data()), pairs32.size() * 4));
  WriteText(dir + "/e.bin64", std::string(reinterpret_cast<char*>(pairs64.data()), pairs64.size() * 8));
  ASSERT_TRUE(WriteNpy(dir + "/e_2xE.npy", "<i8", {2, 7}, rows.data()).ok());
  ASSERT_TRUE(WriteNpy(dir + "/e_Ex2.npy", "<i4", {7, 2}, pairs32.data()).ok());
  for (std::string name : {"e.bin32", "e.bin64", "e_2xE.npy", "e_Ex2.npy"}) {
    SCOPED_TRACE(name);
    auto source = OpenEdgeList(dir + "/" + name, EdgeListFormat::kAuto, 4);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_EQ(ReadAll(**source), kEdges);
  }
}

TEST(EdgeListTest, BadInputNamesFileAndPosition) {
  std::string dir = MakeTempDir();
  struct Case {
    std::string text;
    int64_t num_nodes;
    std::string expected;
  } cases[] = {
      {"0 1\n1 2\n3 x\n", -1, "/t.txt:3: non-numeric node id 'x'"},
      {"0 1\n1\n", -1, "/t.txt:2: malformed line (expected 2 fields 'src dst', got 1)"},
      {"0 1\n1 2 0.5\n", -1, "/t.txt:2: malformed line (expected 2 fields 'src dst', got 3)"},
      {"# c\n0 1\n1 9\n", 5, "/t.txt:3: node id 9 >= num_nodes 5"},
      {"0 -1\n", -1, "/t.txt:1: negative node id -1"},
      {"0 1\nsrc dst\n", -1, "/t.txt:2: non-numeric node id 'src'"},  // header only first
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    WriteText(dir + "/t.txt", c.text);
    auto source = OpenEdgeList(dir + "/t.txt", EdgeListFormat::kText, c.num_nodes);
    ASSERT_TRUE(source.ok());
    std::string error = ReadError(**source);
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
    // The same text gzipped: the same message with the .gz name and the same line.
    Gzip(dir + "/t.txt");
    auto packed = OpenEdgeList(dir + "/t.txt.gz", EdgeListFormat::kText, c.num_nodes);
    ASSERT_TRUE(packed.ok());
    std::string packed_error = ReadError(**packed);
    std::string expected = c.expected;
    expected.replace(0, 6, "/t.txt.gz");
    EXPECT_NE(packed_error.find(expected), std::string::npos) << packed_error;
  }
  WriteText(dir + "/e.bin64", std::string(20, '\0'));
  auto truncated = OpenEdgeList(dir + "/e.bin64", EdgeListFormat::kAuto, -1);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("size 20 bytes is not a multiple of 16"), std::string::npos);
  std::vector<int64_t> pairs = {0, 1, 2, 7};
  WriteText(dir + "/f.bin64", std::string(reinterpret_cast<char*>(pairs.data()), 32));
  auto out_of_range = OpenEdgeList(dir + "/f.bin64", EdgeListFormat::kAuto, 4);
  ASSERT_TRUE(out_of_range.ok());
  EXPECT_NE(ReadError(**out_of_range).find("edge #1 at byte offset 16: node id 7 >= num_nodes 4"), std::string::npos)
      << ReadError(**out_of_range);
  std::vector<float> floats = {0, 1, 1, 2};
  ASSERT_TRUE(WriteNpy(dir + "/f.npy", "<f4", {2, 2}, floats.data()).ok());
  auto wrong_dtype = OpenEdgeList(dir + "/f.npy", EdgeListFormat::kAuto, -1);
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_NE(wrong_dtype.status().message().find("edge_index dtype <f4 is not an integer type"), std::string::npos);
  auto format = ParseEdgeListFormat("csv");
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.status().message().find("unknown edge list format 'csv'"), std::string::npos);
}

// Big text files are parsed in blocks cut into pieces that all threads parse at once:
// every edge, in file order, and the first bad line with its exact number, whatever
// the thread count. Oracle: the lines as written by this test.
TEST(EdgeListTest, ParallelTextParseKeepsOrderAndExactLineNumbers) {
  std::string dir = MakeTempDir();
  std::mt19937_64 rng(5);
  std::string text = "# header comment\nsrc,dst\n";
  std::vector<std::pair<int64_t, int64_t>> expected;
  int64_t line = 2;
  int64_t bad_line = -1;
  for (int i = 0; i < 60000; ++i) {
    const int64_t s = static_cast<int64_t>(rng() % 1000000), d = static_cast<int64_t>(rng() % 1000000);
    switch (rng() % 16) {  // the forms the slow path handles, spread over every piece
      case 0: text += "\n"; ++line; break;
      case 1: text += "% c\n"; ++line; break;
      case 2: text += "+" + std::to_string(s) + "\t" + std::to_string(d) + "\r\n"; ++line; expected.emplace_back(s, d); break;
      case 3: text += " ," + std::to_string(s) + " , " + std::to_string(d) + " \n"; ++line; expected.emplace_back(s, d); break;
      default: text += std::to_string(s) + " " + std::to_string(d) + "\n"; ++line; expected.emplace_back(s, d);
    }
  }
  WriteText(dir + "/big.txt", text);
  // The same file with a bad line deep inside (after ~700 KiB) and another after it.
  const size_t cut = text.find('\n', text.size() * 3 / 4) + 1;
  bad_line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(cut), '\n') + 1;
  WriteText(dir + "/bad.txt", text.substr(0, cut) + "12 x\n" + text.substr(cut, 5000) + "7\n");
  for (int threads : {1, 2, 5}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    tbb::task_arena arena(threads);
    arena.execute([&] {
      auto source = OpenEdgeList(dir + "/big.txt", EdgeListFormat::kText, -1);
      ASSERT_TRUE(source.ok());
      for (int pass = 0; pass < 2; ++pass) {
        // Chunks of 50000 edges: several blocks, each cut into many pieces.
        EXPECT_EQ(ReadAll(**source, 50000), expected) << "pass " << pass;
      }
      auto bad = OpenEdgeList(dir + "/bad.txt", EdgeListFormat::kText, -1);
      ASSERT_TRUE(bad.ok());
      const std::string error = ReadError(**bad, 50000);
      EXPECT_NE(error.find("/bad.txt:" + std::to_string(bad_line) + ": non-numeric node id 'x'"),
                std::string::npos) << error;
    });
  }
}

// CSV/TSV tables with the endpoints chosen by header name or field index; the oracle is
// kEdges written into the table by this test.
TEST(EdgeListTest, TableColumnsByNameOrIndex) {
  std::string dir = MakeTempDir();
  std::string csv = "# exported\nweight,\"to\", from ,kind\n";
  std::string tsv;
  std::string nohead;
  for (auto& [s, d] : kEdges) {
    csv += "0.5," + std::to_string(d) + ", \"" + std::to_string(s) + "\",a b\n";
    tsv += "x\t" + std::to_string(s) + "\t\t" + std::to_string(d) + "\r\n";
    nohead += std::to_string(d) + " 9 " + std::to_string(s) + "\n";
  }
  WriteText(dir + "/t.csv", csv);
  WriteText(dir + "/t.tsv", "name\tsrc\tunused\tdst\n" + tsv);
  WriteText(dir + "/t2.tsv", tsv);
  WriteText(dir + "/t.txt", nohead);
  struct Case {
    std::string file;
    TextColumns columns;
  } cases[] = {
      {"t.csv", {"from", "to"}},    // names, quoted and padded
      {"t.csv", {"2", "1"}},        // indices: the header's fields are non-numeric
      {"t.tsv", {"src", "dst"}},    // tab-separated, empty field kept
      {"t2.tsv", {"1", "3"}},       // no header
      {"t.txt", {"2", "0"}},        // blank-separated
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file + " " + c.columns.src + "," + c.columns.dst);
    Gzip(dir + "/" + c.file);  // also through zlib
    for (std::string name : {c.file + ".gz"}) {
      auto source = OpenEdgeList(dir + "/" + name, EdgeListFormat::kText, -1, c.columns);
      ASSERT_TRUE(source.ok()) << source.status().ToString();
      EXPECT_EQ(ReadAll(**source), kEdges);
      EXPECT_EQ(ReadAll(**source), kEdges) << "second pass after Rewind";
    }
    std::string plain = dir + "/" + c.file;
    ASSERT_EQ(std::system(("gunzip -f '" + plain + ".gz'").c_str()), 0);
    auto source = OpenEdgeList(plain, EdgeListFormat::kText, -1, c.columns);
    ASSERT_TRUE(source.ok());
    EXPECT_EQ(ReadAll(**source), kEdges);
  }
  struct Bad {
    std::string text;
    TextColumns columns;
    std::string expected;
  } bad[] = {
      {"a,b\n1,2\n", {"a", "c"}, "/bad.csv:1: no column 'c' in the header (a, b)"},
      {"a,b,c\n1,2,3\n4,5\n", {"a", "c"}, "/bad.csv:3: 2 fields, but column 2 is needed: '4,5'"},
      {"a,b\n1,2\n3,y\n", {"a", "b"}, "/bad.csv:3: non-numeric node id 'y'"},
      {"1,2\n3,4\n", {"0", "1"}, "OK"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.text);
    WriteText(dir + "/bad.csv", b.text);
    auto source = OpenEdgeList(dir + "/bad.csv", EdgeListFormat::kText, -1, b.columns);
    ASSERT_TRUE(source.ok());
    std::string error = ReadError(**source);
    EXPECT_NE(error.find(b.expected), std::string::npos) << error;
  }
  auto binary = OpenEdgeList(dir + "/e.bin64", EdgeListFormat::kBin64, -1, TextColumns{"a", "b"});
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.status().message().find("--src-col/--dst-col need a text edge list"), std::string::npos);
}

// Ids of every length 1..13 digits (up to kMaxNodeId), leading zeros, and separators of
// every kind, in lines long and short, so the 8-characters-at-a-time digit parser meets
// numbers that end at each byte of its word and at the end of the file: the edges are
// those the generator wrote (its own integers: the oracle), read with big batches (the
// block parser) and with 3-edge reads.
TEST(EdgeListTest, DigitsOfEveryLengthAndSeparatorParseExactly) {
  std::mt19937_64 rng(91);
  std::vector<std::pair<int64_t, int64_t>> oracle;
  std::string text;
  const char* seps[] = {" ", "\t", ",", " , ", "  ", "\t,"};
  auto number = [&](int64_t* value) {
    const int digits = 1 + static_cast<int>(rng() % 13);
    int64_t v = 0;
    std::string out(rng() % 5 == 0 ? rng() % 3 : 0, '0');  // leading zeros sometimes
    for (int d = 0; d < digits; ++d) {
      const int digit = static_cast<int>(rng() % 10);
      v = v * 10 + digit;
      out += static_cast<char>('0' + digit);
    }
    if (v > kMaxNodeId) {  // keep ids valid: drop a digit
      out.pop_back();
      v /= 10;
    }
    *value = v;
    return out;
  };
  for (int i = 0; i < 20000; ++i) {
    int64_t src, dst;
    std::string a = number(&src), b = number(&dst);
    text += a + seps[rng() % 6] + b + (rng() % 7 == 0 ? " " : "") + (rng() % 9 == 0 ? "\r\n" : "\n");
    oracle.emplace_back(src, dst);
  }
  text += "12345678 87654321";  // an unterminated last line, 8 digits each
  oracle.emplace_back(12345678, 87654321);
  const std::string dir = MakeTempDir();
  WriteText(dir + "/digits.txt", text);
  auto source = OpenEdgeList(dir + "/digits.txt", EdgeListFormat::kAuto, -1);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ(ReadAll(**source), oracle);
  EXPECT_EQ(ReadAll(**source, 1 << 16), oracle);
}

}  // namespace
}  // namespace seer
