// The small shared mechanisms of storage/base: number parsing (parse_number.h), the
// SplitMix64 mixer (random.h, against the reference generator's published outputs),
// exception -> Status (exception_status.h) and duration formatting (duration.h).
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "storage/base/duration.h"
#include "storage/base/exception_status.h"
#include "storage/base/parse_number.h"
#include "storage/base/random.h"

namespace seer {
namespace {

TEST(ParseNumberTest, WholeTextOnly) {
  EXPECT_EQ(ParseNumber<int64_t>("42"), 42);
  EXPECT_EQ(ParseNumber<int64_t>("-7"), -7);
  EXPECT_EQ(ParseNumber<int64_t>("+7"), 7);
  EXPECT_EQ(ParseNumber<int>("ff", 16), 255);
  EXPECT_EQ(ParseNumber<uint64_t>("18446744073709551615"), std::numeric_limits<uint64_t>::max());
  EXPECT_FALSE(ParseNumber<uint64_t>("18446744073709551616"));  // out of range
  EXPECT_FALSE(ParseNumber<uint64_t>("-1"));
  EXPECT_FALSE(ParseNumber<int>(" 1"));
  EXPECT_FALSE(ParseNumber<int>("1 "));
  EXPECT_FALSE(ParseNumber<int>("1x"));
  EXPECT_FALSE(ParseNumber<int>(""));
  EXPECT_FALSE(ParseNumber<int>("+"));
  EXPECT_FALSE(ParseNumber<int>("+-1"));
  EXPECT_DOUBLE_EQ(*ParseNumber<double>("2.5"), 2.5);
  EXPECT_DOUBLE_EQ(*ParseNumber<double>("1e-3"), 1e-3);
  EXPECT_FALSE(ParseNumber<double>("2.5%"));
  const auto bad = ParseNumberOr<int>("abc", "fan-out", "an integer");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "bad fan-out 'abc': expected an integer");
}

// The first outputs of splitmix64.c (Vigna) seeded with 0 and 1234567.
TEST(SplitMixTest, MatchesTheReferenceGenerator) {
  uint64_t state = 0;
  EXPECT_EQ(SplitMixNext(&state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(SplitMixNext(&state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(SplitMixHash(0), 0xe220a8397b1dcdafULL);
  SplitMix64 rng(1234567);
  EXPECT_EQ(rng.Next(), 6457827717110365317ULL);
  EXPECT_EQ(rng.Next(), 3203168211198807973ULL);
  SplitMix64 below(9);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(below.Below(7), 7u);
  for (int i = 0; i < 1000; ++i) {
    const double u = below.Uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

TEST(ExceptionStatusTest, OneRuleForEveryBoundary) {
  const Status oom = RunGuarded("planner stage", []() -> Status { throw std::bad_alloc(); });
  EXPECT_EQ(oom.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(oom.message().rfind("planner stage: out of memory (", 0), 0u) << oom.message();
  const Status bad = RunGuarded("training step", []() -> Status { throw std::invalid_argument("label 9 >= 8\ntrace"); });
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "training step: label 9 >= 8");
  const Status internal = RunGuarded("gather stage", []() -> Status { throw std::runtime_error("boom"); });
  EXPECT_EQ(internal.code(), StatusCode::kInternal);
  EXPECT_EQ(internal.message(), "gather stage failed: boom");
  const Status wrapped = RunGuarded("x", []() -> Status {
    throw StatusError(Status(StatusCode::kCorrupt, "f.bin: bad magic"));
  });
  EXPECT_EQ(wrapped.code(), StatusCode::kCorrupt);
  EXPECT_EQ(wrapped.message(), "x: f.bin: bad magic");
  const Status unknown = RunGuarded("y", []() -> Status { throw 3; });
  EXPECT_EQ(unknown.code(), StatusCode::kInternal);
  EXPECT_TRUE(RunGuarded("z", [] { return Status::Ok(); }).ok());
}

TEST(DurationTest, PeopleReadable) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(59.4), "59s");
  EXPECT_EQ(FormatDuration(59.6), "1m00s");
  EXPECT_EQ(FormatDuration(187), "3m07s");
  EXPECT_EQ(FormatDuration(7500), "2h05m");
  EXPECT_EQ(FormatDuration(-1), "?");
  EXPECT_EQ(FormatDuration(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(FormatDuration(std::numeric_limits<double>::quiet_NaN()), "?");
}

}  // namespace
}  // namespace seer
