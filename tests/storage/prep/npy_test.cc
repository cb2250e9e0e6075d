// The .npy reader and writer (storage/prep/npy.h).
#include "storage/prep/npy.h"

#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/files.h"
#include "support/temp_dir.h"
#include "text_fixtures.h"

namespace seer {
namespace {

std::string MakeTempDir() { return testing::MakeTempDir("npy"); }
using testing::WriteText;

TEST(NpyTest, WriteThenReadRoundTrip) {
  std::string dir = MakeTempDir();
  std::vector<float> values(4111 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  ASSERT_TRUE(WriteNpy(dir + "/a.npy", "<f4", {4111, 3}, values.data()).ok());
  auto f = NpyFile::Open(dir + "/a.npy");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->header().shape, (std::vector<int64_t>{4111, 3}));
  EXPECT_EQ(f->header().data_offset_bytes % 64, 0);
  std::vector<float> back(5);
  ASSERT_TRUE(f->ReadAsFloat32(12000, 5, back.data()).ok());
  EXPECT_EQ(back[0], 6000.0f);
  std::vector<int64_t> ints(2);
  ASSERT_TRUE(f->ReadAsInt64(4, 1, ints.data()).ok());
  EXPECT_EQ(ints[0], 2);
  Status st = f->ReadAsInt64(2, 2, ints.data());  // 1.0 then 1.5
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("element 3 = 1.5"), std::string::npos) << st.message();
}

TEST(NpyTest, NonIntegralFloatIsRejectedAsId) {
  std::string dir = MakeTempDir();
  std::vector<double> values = {1.0, 2.5};
  ASSERT_TRUE(WriteNpy(dir + "/a.npy", "<f8", {2}, values.data()).ok());
  auto f = NpyFile::Open(dir + "/a.npy");
  ASSERT_TRUE(f.ok());
  std::vector<int64_t> ints(2);
  Status st = f->ReadAsInt64(0, 2, ints.data());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("element 1"), std::string::npos) << st.message();
}

TEST(NpyTest, TruncatedFileNamesSizes) {
  std::string dir = MakeTempDir();
  std::vector<int64_t> ids(100, 7);
  ASSERT_TRUE(WriteNpy(dir + "/ids.npy", "<i8", {100}, ids.data()).ok());
  ASSERT_EQ(::truncate((dir + "/ids.npy").c_str(), 128 + 799), 0);
  auto f = NpyFile::Open(dir + "/ids.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kUnexpectedEof);
  EXPECT_NE(f.status().message().find("truncated .npy: shape (100,) of <i8 needs 800 data bytes from offset 128, file has 799"),
            std::string::npos) << f.status().message();
}

TEST(NpyTest, BadHeadersAreRejected) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/magic.npy", "PK\x03\x04 this is a zip");
  auto f = NpyFile::Open(dir + "/magic.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("not a .npy file"), std::string::npos);
  std::string header = "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n";
  std::string big = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + "abcdefgh";
  WriteText(dir + "/big.npy", big);
  f = NpyFile::Open(dir + "/big.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("big-endian"), std::string::npos) << f.status().message();
  header = "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }";
  WriteText(dir + "/order.npy", std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header);
  f = NpyFile::Open(dir + "/order.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("bad .npy header at byte offset 44: fortran_order"), std::string::npos)
      << f.status().message();
}

// The recorded header length must reach exactly to the data: one 20 bytes short (the data
// would start inside the header's padding, every feature shifted by 20 bytes) was
// accepted before.
TEST(NpyTest, HeaderLengthShortOfTheDataIsRefused) {
  std::string dir = MakeTempDir();
  std::vector<float> values(50 * 4, 1.0f);
  ASSERT_TRUE(WriteNpy(dir + "/x.npy", "<f4", {50, 4}, values.data()).ok());
  std::string bytes = testing::ReadFileBytes(dir + "/x.npy");
  const int header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  ASSERT_GT(header_len, 60);
  const int short_len = header_len - 20;
  bytes[8] = static_cast<char>(short_len & 0xff);
  bytes[9] = static_cast<char>(short_len >> 8);
  WriteText(dir + "/short.npy", bytes);
  auto f = NpyFile::Open(dir + "/short.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find(dir + "/short.npy: bad .npy header"), std::string::npos) << f.status().message();
  EXPECT_NE(f.status().message().find("does not reach the data start"), std::string::npos) << f.status().message();
}

// Bytes after the data mean the shape or the header length is wrong.
TEST(NpyTest, DataLongerThanTheShapeIsRefused) {
  std::string dir = MakeTempDir();
  std::vector<int64_t> ids(10, 3);
  ASSERT_TRUE(WriteNpy(dir + "/ids.npy", "<i8", {10}, ids.data()).ok());
  WriteText(dir + "/long.npy", testing::ReadFileBytes(dir + "/ids.npy") + std::string(8, '\0'));
  auto f = NpyFile::Open(dir + "/long.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("needs 80 data bytes from offset 128, file has 88"), std::string::npos)
      << f.status().message();
}

TEST(NpyTest, ShapeWhoseSizeOverflowsIsRefused) {
  std::string dir = MakeTempDir();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  WriteText(dir + "/huge.npy", std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header +
                                   std::string(64, '\0'));
  auto f = NpyFile::Open(dir + "/huge.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("too large"), std::string::npos) << f.status().message();
}

}  // namespace
}  // namespace seer
