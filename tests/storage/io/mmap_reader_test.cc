// The page-cache reader (storage/io/mmap_reader.h) against the file's own bytes: odd
// offsets and lengths, an empty read, the last row; a read past the end is an error
// naming the path and offset.
#include "storage/io/mmap_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;

TEST(MmapReaderTest, ReadsMatchTheFileAndOutOfRangeIsAnError) {
  const std::string dir = MakeTempDir("mmap");
  const std::string path = dir + "/data.bin";
  std::string bytes(4111 * 47, '\0');
  std::mt19937_64 rng(7);
  for (char& c : bytes) c = static_cast<char>(rng());
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  auto reader = OpenMmapReader(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->file_size_bytes(), static_cast<int64_t>(bytes.size()));
  std::vector<std::string> out = {std::string(47, 'x'), std::string(1, 'x'), std::string(0, 'x'),
                                  std::string(4096, 'x')};
  std::vector<ReadRequest> requests = {{47 * 4110, 47, out[0].data()},  // the last row
                                       {0, 1, out[1].data()},
                                       {static_cast<int64_t>(bytes.size()), 0, out[2].data()},
                                       {1000, 4096, out[3].data()}};
  ReadStats stats;
  ASSERT_TRUE((*reader)->ReadBatch(requests, &stats).ok());
  EXPECT_EQ(out[0], bytes.substr(47 * 4110, 47));
  EXPECT_EQ(out[1], bytes.substr(0, 1));
  EXPECT_EQ(out[3], bytes.substr(1000, 4096));
  EXPECT_EQ(stats.requests, 4);
  EXPECT_GE(stats.device_reads, 0);
  std::vector<ReadRequest> beyond = {{static_cast<int64_t>(bytes.size()) - 10, 11, out[0].data()}};
  Status st = (*reader)->ReadBatch(beyond);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnexpectedEof);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(std::to_string(bytes.size() - 10)), std::string::npos) << st.message();
  EXPECT_FALSE(OpenMmapReader(dir + "/missing.bin").ok());
}

}  // namespace
}  // namespace seer
