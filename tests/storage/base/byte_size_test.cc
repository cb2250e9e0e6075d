// ParseBytes / FormatBytes (storage/base/byte_size.h).
#include "storage/base/byte_size.h"

#include <string>

#include <gtest/gtest.h>

namespace seer {
namespace {

TEST(ParseBytesTest, AcceptsSuffixesAndRejectsGarbage) {
  EXPECT_EQ(*ParseBytes("4096"), 4096);
  EXPECT_EQ(*ParseBytes("512K"), 512 * 1024);
  EXPECT_EQ(*ParseBytes("512M"), 512LL * 1024 * 1024);
  EXPECT_EQ(*ParseBytes("2GiB"), 2LL * 1024 * 1024 * 1024);
  EXPECT_EQ(*ParseBytes("1.5g"), 3LL * 512 * 1024 * 1024);
  auto bad = ParseBytes("12Q");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'12Q'"), std::string::npos);
  EXPECT_FALSE(ParseBytes("").ok());
  EXPECT_FALSE(ParseBytes("-5").ok());
}

TEST(FormatBytesTest, PicksTheLargestUnitBelow1024) {
  EXPECT_EQ(FormatBytes(17), "17 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(512LL << 20), "512.0 MiB");
  EXPECT_EQ(FormatBytes(3LL << 29), "1.5 GiB");
  EXPECT_EQ(FormatBytes(2LL << 40), "2.0 TiB");
}

}  // namespace
}  // namespace seer
