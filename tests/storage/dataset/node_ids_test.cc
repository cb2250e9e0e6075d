// storage/dataset/node_ids.h: which ids node_ids.txt can give back (IdRoundTripProblem),
// their escaping for messages, and `seer check`'s streamed check refusing a mapping file
// with an id that cannot be read back.
#include "storage/dataset/node_ids.h"

#include <string>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace seer {
namespace {

using namespace std::string_literals;

TEST(NodeIdsTest, RoundTripProblems) {
  for (const std::string& id : {"a"s, "user_12"s, "#tag"s, "a b"s, "jos\xc3\xa9"s, "\xe2\x82\xac"s,
                               "\xf0\x9f\x98\x80"s, "\"q\""s, "\xc2\xa0nbsp"s}) {
    EXPECT_EQ(IdRoundTripProblem(id), nullptr) << EscapeId(id);
  }
  const struct {
    std::string id;
    std::string problem;
  } bad[] = {
      {" bob", "blank"},          {"bob ", "blank"},          {"\tbob", "control"},
      {"a\tb", "control"},        {"\x01x", "control"},       {"a\x7f", "control"},
      {"a\xc2\x85", "Unicode line break"}, {"a\xe2\x80\xa8" "b", "Unicode line break"},
      {"a\rb", "line break"},     {"a\nb", "line break"},     {"a\0b"s, "NUL"},
      {"x\xffy", "UTF-8"},        {"\xc3", "UTF-8"},          {"\xc0\xaf", "UTF-8"},  // overlong '/'
      {"\xed\xa0\x80", "UTF-8"},  // a UTF-16 surrogate
      {"\xf4\x90\x80\x80", "UTF-8"},  // above U+10FFFF
      {"\xe2\x82", "UTF-8"},      // cut sequence
  };
  for (const auto& b : bad) {
    const char* problem = IdRoundTripProblem(b.id);
    ASSERT_NE(problem, nullptr) << EscapeId(b.id);
    EXPECT_NE(std::string(problem).find(b.problem), std::string::npos) << problem;
  }
  EXPECT_EQ(EscapeId("a\rb\0c\xff"s), "a\\x0db\\x00c\\xff");
  EXPECT_EQ(EscapeId(std::string(100, 'x'), 4), "xxxx... (100 bytes)");
}

TEST(NodeIdsTest, CheckRefusesAnIdThatCannotBeReadBack) {
  const std::string dir = testing::MakeTempDir("node_ids");
  testing::WriteFileBytes(dir + "/ok.txt", "7\nann\njos\xc3\xa9\n");
  EXPECT_TRUE(CheckNodeIdsFile(dir + "/ok.txt", 3).ok());
  testing::WriteFileBytes(dir + "/cr.txt", "7\nann\r\nbob\n");  // written with CRLF: 'ann\r' is not 'ann'
  Status st = CheckNodeIdsFile(dir + "/cr.txt", 3);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cr.txt:2: node id 'ann\\x0d' has a line break"), std::string::npos) << st.message();
  testing::WriteFileBytes(dir + "/utf.txt", "7\nx\xffy\n");
  st = CheckNodeIdsFile(dir + "/utf.txt", 2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("utf.txt:2: node id 'x\\xffy' has invalid UTF-8"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace seer
