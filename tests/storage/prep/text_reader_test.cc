// TextLineReader (storage/prep/text_reader.h): a .gz made by the gzip program reads to
// exactly the lines (and line numbers) of the plain file; damaged .gz files are
// one-line errors naming the file.
#include "storage/prep/text_reader.h"

#include <unistd.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"
#include "text_fixtures.h"

namespace seer {
namespace {

using testing::Gzip;
using testing::WriteText;

struct Lines {
  std::vector<std::pair<int64_t, std::string>> lines;  // (line_number, text)
  Status end;                                           // how reading stopped
};

Lines ReadLines(const std::string& path) {
  Lines out;
  auto reader = TextLineReader::Open(path);
  if (!reader.ok()) {
    out.end = reader.status();
    return out;
  }
  std::string_view line;
  for (;;) {
    auto more = reader->NextLine(&line);
    if (!more.ok()) {
      out.end = more.status();
      return out;
    }
    if (!*more) return out;
    out.lines.emplace_back(reader->line_number(), std::string(line));
  }
}

// ~3 MiB of text: more than the reader's 1 MiB buffer, with CRLF lines, empty lines,
// one line longer than the buffer and no newline at the end.
std::string AwkwardText(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (int i = 0; text.size() < (3u << 20); ++i) {
    if (i == 5000) text += std::string((1 << 20) + 17, 'L') + "\n";
    if (i % 97 == 0) text += "\n";
    text += std::to_string(rng() % 1000000) + " " + std::to_string(rng() % 1000000);
    text += (i % 13 == 0) ? "\r\n" : "\n";
  }
  return text + "last line without newline";
}

TEST(TextReaderTest, GzipReadsTheSameLinesAsThePlainFile) {
  const std::string dir = testing::MakeTempDir("text_reader");
  const std::string text = AwkwardText(7);
  WriteText(dir + "/plain.txt", text);
  WriteText(dir + "/packed.txt", text);
  Gzip(dir + "/packed.txt");
  const Lines plain = ReadLines(dir + "/plain.txt");
  const Lines packed = ReadLines(dir + "/packed.txt.gz");
  ASSERT_TRUE(plain.end.ok()) << plain.end.ToString();
  ASSERT_TRUE(packed.end.ok()) << packed.end.ToString();
  ASSERT_GT(plain.lines.size(), 100000u);
  EXPECT_EQ(plain.lines.back().second, "last line without newline");
  EXPECT_EQ(plain.lines.back().first, static_cast<int64_t>(plain.lines.size()));
  EXPECT_TRUE(packed.lines == plain.lines);
  EXPECT_FALSE(TextLineReader::Open(dir + "/plain.txt")->compressed());
  EXPECT_TRUE(TextLineReader::Open(dir + "/packed.txt.gz")->compressed());
}

TEST(TextReaderTest, ConcatenatedGzipMembersReadAsOneFile) {
  const std::string dir = testing::MakeTempDir("text_reader");
  WriteText(dir + "/a.txt", "1 2\n3 4\n");
  WriteText(dir + "/b.txt", "5 6\n7 8");
  Gzip(dir + "/a.txt");
  Gzip(dir + "/b.txt");
  const std::string both = testing::ReadFileBytes(dir + "/a.txt.gz") +
                           testing::ReadFileBytes(dir + "/b.txt.gz");
  WriteText(dir + "/both.txt.gz", both);
  const Lines lines = ReadLines(dir + "/both.txt.gz");
  ASSERT_TRUE(lines.end.ok()) << lines.end.ToString();
  const std::vector<std::pair<int64_t, std::string>> expected = {
      {1, "1 2"}, {2, "3 4"}, {3, "5 6"}, {4, "7 8"}};
  EXPECT_TRUE(lines.lines == expected);
}

TEST(TextReaderTest, TruncatedGzipIsAnErrorNamingTheFile) {
  const std::string dir = testing::MakeTempDir("text_reader");
  WriteText(dir + "/t.txt", AwkwardText(11));
  Gzip(dir + "/t.txt");
  const std::string path = dir + "/t.txt.gz";
  const std::string bytes = testing::ReadFileBytes(path);
  for (size_t keep : {bytes.size() / 2, bytes.size() - 4, size_t{10}}) {
    SCOPED_TRACE("kept " + std::to_string(keep) + " of " + std::to_string(bytes.size()));
    WriteText(path, bytes.substr(0, keep));
    const Lines lines = ReadLines(path);
    ASSERT_FALSE(lines.end.ok());
    EXPECT_EQ(lines.end.code(), StatusCode::kCorrupt);
    const std::string& message = lines.end.message();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind(path + ": corrupt or truncated .gz after line ", 0), 0u) << message;
  }
}

TEST(TextReaderTest, CorruptGzipIsAnErrorNamingTheFile) {
  const std::string dir = testing::MakeTempDir("text_reader");
  WriteText(dir + "/c.txt", AwkwardText(13));
  Gzip(dir + "/c.txt");
  const std::string path = dir + "/c.txt.gz";
  std::string bytes = testing::ReadFileBytes(path);
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) bytes[i] ^= 0x5a;
  WriteText(path, bytes);
  const Lines lines = ReadLines(path);
  ASSERT_FALSE(lines.end.ok());
  EXPECT_EQ(lines.end.code(), StatusCode::kCorrupt);
  EXPECT_NE(lines.end.message().find(path + ": corrupt or truncated .gz after line "),
            std::string::npos) << lines.end.message();
}

TEST(TextReaderTest, GzSuffixOnNonGzipDataIsRefused) {
  const std::string dir = testing::MakeTempDir("text_reader");
  WriteText(dir + "/plain.gz", "0 1\n1 2\n");
  const Lines plain = ReadLines(dir + "/plain.gz");
  ASSERT_FALSE(plain.end.ok());
  EXPECT_EQ(plain.end.message(), dir + "/plain.gz: not in gzip format");
  WriteText(dir + "/empty.gz", "");
  const Lines empty = ReadLines(dir + "/empty.gz");
  ASSERT_FALSE(empty.end.ok());
  EXPECT_NE(empty.end.message().find(dir + "/empty.gz"), std::string::npos);
  const Lines missing = ReadLines(dir + "/missing.gz");
  EXPECT_EQ(missing.end.code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace seer
