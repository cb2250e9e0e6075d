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

TEST(ParseBytesTest, HugeAndLongInputsAreRefusedBriefly) {
  const auto huge = ParseBytes("9000000T");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("too large"), std::string::npos) << huge.status().ToString();
  EXPECT_FALSE(ParseBytes("8388608T").ok());  // 2^63 bytes: would wrap negative
  EXPECT_TRUE(ParseBytes("1024T").ok());
  const auto long_token = ParseBytes(std::string(100000, '7') + "x");
  ASSERT_FALSE(long_token.ok());
  EXPECT_LT(long_token.status().message().size(), 200u) << long_token.status().message().size();
  EXPECT_NE(long_token.status().message().find("(100001 characters)"), std::string::npos);
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
