// storage/base/json_file.h: JSON through nlohmann::json with errors that name the file,
// the field and (for syntax errors) the byte; never a default for bad data.
#include "storage/base/json_file.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/atomic_file.h"
#include "support/test_support.h"

namespace seer {
namespace {

bool Contains(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

TEST(JsonFileTest, RoundTripsNestedValuesThroughAFile) {
  const std::string dir = testing::MakeTempDir("json_file");
  const Json root = {
      {"n", -42},
      {"big", int64_t{1} << 40},
      {"x", 0.25},
      {"s", "a \"quoted\"\nline"},
      {"arr", {true, nullptr}},
      {"ids", {3, 1, 2}},
  };
  ASSERT_TRUE(WriteJsonFileAtomically(dir + "/a.json", root).ok());
  const std::string text = testing::ReadFileBytes(dir + "/a.json");
  EXPECT_EQ(text.back(), '\n');
  auto parsed = ReadJsonFile(dir + "/a.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, root);
  const std::string path = dir + "/a.json";
  EXPECT_EQ(*JsonInt(*parsed, "n", path), -42);
  EXPECT_EQ(*JsonInt(*parsed, "big", path), int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(*JsonNumber(*parsed, "x", path), 0.25);
  EXPECT_DOUBLE_EQ(*JsonNumber(*parsed, "n", path), -42.0);  // an integer is a number
  EXPECT_EQ(*JsonString(*parsed, "s", path), "a \"quoted\"\nline");
  EXPECT_EQ(*JsonIntArray(*parsed, "ids", path), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ((*JsonMember(*parsed, "arr", path))->size(), 2u);
}

TEST(JsonFileTest, WrongTypesAreErrorsNamingFileAndField) {
  const Json header = {{"fanout", "10"}, {"ratio", 1.5}, {"flag", 1}, {"ids", {1, "2"}},
                       {"huge", uint64_t{1} << 63}};
  const std::string path = "run/trace.json";
  auto fanout = JsonInt(header, "fanout", path);
  ASSERT_FALSE(fanout.ok());
  EXPECT_EQ(fanout.status().code(), StatusCode::kCorrupt);
  EXPECT_TRUE(Contains(fanout.status(), "run/trace.json: field 'fanout' must be an integer, found string \"10\""))
      << fanout.status().message();
  EXPECT_FALSE(JsonInt(header, "ratio", path).ok());  // 1.5 is not an integer
  EXPECT_FALSE(JsonBool(header, "flag", path).ok());  // 1 is not true
  EXPECT_FALSE(JsonString(header, "ratio", path).ok());
  EXPECT_FALSE(JsonNumber(header, "fanout", path).ok());
  auto huge = JsonInt(header, "huge", path);
  ASSERT_FALSE(huge.ok());
  EXPECT_TRUE(Contains(huge.status(), "out of the int64 range")) << huge.status().message();
  auto ids = JsonIntArray(header, "ids", path);
  ASSERT_FALSE(ids.ok());
  EXPECT_TRUE(Contains(ids.status(), "field 'ids' element 1 must be an integer")) << ids.status().message();
  auto not_object = JsonInt(Json::array(), "fanout", path);
  ASSERT_FALSE(not_object.ok());
  EXPECT_TRUE(Contains(not_object.status(), "expected a JSON object holding 'fanout'"));
}

TEST(JsonFileTest, MissingFieldsAreErrorsUnlessOptional) {
  const Json object = {{"present", 3}, {"name", "x"}};
  auto missing = JsonInt(object, "absent", "m.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status(), "m.json: field 'absent' is missing"));
  EXPECT_FALSE(JsonMember(object, "absent", "m.json").ok());
  EXPECT_EQ(*JsonOptionalInt(object, "absent", 7, "m.json"), 7);
  EXPECT_EQ(*JsonOptionalInt(object, "present", 7, "m.json"), 3);
  EXPECT_EQ(*JsonOptionalString(object, "absent", "d", "m.json"), "d");
  EXPECT_EQ(*JsonOptionalString(object, "name", "d", "m.json"), "x");
  // Optional means "may be absent", not "may be wrong".
  EXPECT_FALSE(JsonOptionalInt(object, "name", 7, "m.json").ok());
  EXPECT_FALSE(JsonOptionalString(object, "present", "d", "m.json").ok());
}

TEST(JsonFileTest, ParseErrorsNameFileAndByte) {
  auto bad = ParseJson("{\n  \"a\": 1,\n  \"b\" 2\n}", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorrupt);
  // Byte 19 (1-based) is the '2' where the ':' belongs.
  EXPECT_TRUE(Contains(bad.status(), "m.json: invalid JSON at byte 19")) << bad.status().message();
  EXPECT_FALSE(ParseJson("[1, 2", "m.json").ok());
  EXPECT_FALSE(ParseJson("{} x", "m.json").ok());
  EXPECT_FALSE(ParseJson("", "m.json").ok());
}

TEST(JsonFileTest, ReadJsonFileNamesAMissingOrBrokenFile) {
  const std::string dir = testing::MakeTempDir("json_file");
  auto missing = ReadJsonFile(dir + "/none.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status(), dir + "/none.json"));
  ASSERT_TRUE(WriteFileAtomically(dir + "/broken.json", "{\"a\": ").ok());
  auto broken = ReadJsonFile(dir + "/broken.json");
  ASSERT_FALSE(broken.ok());
  EXPECT_TRUE(Contains(broken.status(), dir + "/broken.json: invalid JSON at byte"))
      << broken.status().message();
}

}  // namespace
}  // namespace seer
