// EpochReporter: the metrics file holds each line as soon as it happens (a run that
// dies keeps its lines), in the format `seer train --metrics` has always written.
#include "executor/epoch_reporter.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "storage/base/duration.h"
#include "storage/base/file_io.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

std::vector<Json> ReadLines(const std::string& path) {
  std::vector<Json> lines;
  std::istringstream in(ReadWholeFile(path).value());
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  return lines;
}

EpochReporter::Options Quiet(const std::string& metrics_path) {
  EpochReporter::Options options;
  options.metrics_path = metrics_path;
  options.quiet = true;
  return options;
}

TEST(EpochReporterTest, MetricsLinesAreOnDiskAfterEachEpoch) {
  const std::string path = testing::MakeTempDir("reporter") + "/m.jsonl";
  RunDescription run;
  run.split.budget_bytes = 1 << 30;
  run.split.fcache_rows = 1234;
  run.policy = "belady";
  run.model = "sage";
  run.pipeline = "superbatch";
  run.io = "uring";
  run.batches_per_superbatch = 4;
  auto reporter = EpochReporter::Open(Quiet(path), run);
  ASSERT_TRUE(reporter.ok()) << reporter.status().message();
  std::vector<Json> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["type"], "start");
  EXPECT_EQ(lines[0]["fcache_rows"], 1234);
  EXPECT_FALSE(lines[0].contains("ncache_share")) << "recorded only when set";

  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    EpochReport report;
    report.epoch = epoch;
    report.batches = 10 + epoch;
    report.seeds = 1000;
    report.seconds = 2;
    report.gather.rows = 100;
    report.gather.hits = 25;
    report.valid_accuracy = epoch == 2 ? 0.5 : -1;
    ASSERT_TRUE((*reporter)->EndEpoch(report).ok());
    lines = ReadLines(path);  // written and flushed before EndEpoch returns
    ASSERT_EQ(lines.size(), static_cast<size_t>(epoch + 2));
    const Json& line = lines.back();
    EXPECT_EQ(line["type"], "epoch");
    EXPECT_EQ(line["epoch"], epoch + 1) << "1-based, as on stderr";
    EXPECT_EQ(line["batches"], 10 + epoch);
    EXPECT_DOUBLE_EQ(line["samples_per_second"].get<double>(), 500.0);
    EXPECT_DOUBLE_EQ(line["fcache_hit_ratio"].get<double>(), 0.25);
    EXPECT_EQ(line.contains("valid_accuracy"), epoch == 2);
    EXPECT_TRUE(line["seconds"].contains("stall"));
  }
  RunOutcome outcome;
  outcome.best_epoch = 2;
  outcome.stopped_early = true;
  ASSERT_TRUE((*reporter)->Finish(outcome).ok());
  lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines.back()["type"], "final");
  EXPECT_EQ(lines.back()["best_epoch"], 3) << "1-based, as on stderr";
  EXPECT_EQ(lines.back()["stopped_early"], true);
}

// A resumed run appends: the killed run's lines stay, the new run adds a start line and
// its epochs (they were truncated before).
TEST(EpochReporterTest, AppendKeepsTheEarlierLines) {
  const std::string path = testing::MakeTempDir("reporter") + "/m.jsonl";
  {
    auto first = EpochReporter::Open(Quiet(path), RunDescription());
    ASSERT_TRUE(first.ok());
    EpochReport report;
    report.epoch = 0;
    ASSERT_TRUE((*first)->EndEpoch(report).ok());
  }
  EpochReporter::Options options = Quiet(path);
  options.append = true;
  auto resumed = EpochReporter::Open(options, RunDescription());
  ASSERT_TRUE(resumed.ok());
  EpochReport report;
  report.epoch = 1;
  ASSERT_TRUE((*resumed)->EndEpoch(report).ok());
  const std::vector<Json> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["type"], "start");
  EXPECT_EQ(lines[1]["epoch"], 1);
  EXPECT_EQ(lines[2]["type"], "start");
  EXPECT_EQ(lines[3]["epoch"], 2);
}

TEST(EpochReporterTest, LinesAreCompactJsonWithSortedKeys) {
  EpochReport report;
  const std::string json = report.ToJson();
  EXPECT_EQ(json.find('\n'), std::string::npos);
  EXPECT_EQ(json.find(": "), std::string::npos);
  EXPECT_LT(json.find("\"batches\""), json.find("\"epoch\""));
}

TEST(EpochReporterTest, NoMetricsPathWritesNothingAndAnUnwritablePathIsAnError) {
  auto none = EpochReporter::Open(Quiet(""), RunDescription());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)->EndEpoch(EpochReport()).ok());
  const std::string bad = testing::MakeTempDir("reporter") + "/missing/m.jsonl";
  auto refused = EpochReporter::Open(Quiet(bad), RunDescription());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(bad), std::string::npos) << refused.status().message();
}

TEST(EpochReporterTest, SummaryAndDurationsReadAsBefore) {
  EpochReport report;
  report.epoch = 0;
  report.seconds = 1.5;
  report.batches = 3;
  report.seeds = 300;
  report.valid_accuracy = 0.75;
  report.test_accuracy = 0.5;
  const std::string summary = report.Summary();
  EXPECT_EQ(summary.rfind("epoch 1: 1.50 s, 3 batches, 200 samples/s, train loss 0.0000, train acc 0.0000, "
                          "valid acc 0.7500, test acc 0.5000\n", 0),
            0u)
      << summary;
  EXPECT_EQ(FormatDuration(42), "42s");
}

// The breakdown marked inspect/plan as overlapped but not gather, and did not say what
// adds up to the epoch. Now the epoch's seconds are the training thread's parts (other =
// the rest), and every pipeline-thread time is marked as overlapped, outside the sum.
TEST(EpochReporterTest, TimeLineSaysWhatAddsUpToTheEpochAndWhatOverlaps) {
  EpochReport report;
  report.seconds = 10;
  report.compute_seconds = 6;
  report.stall_seconds = 1.5;
  report.eval_seconds = 2;
  report.inspect_seconds = 3;
  report.plan_seconds = 1;
  report.gather_seconds = 7;
  report.io_wait_seconds = 4;
  const std::string line = report.TimeBreakdown();
  EXPECT_EQ(line.rfind("10.00 s = compute 6.00 + waiting for batches 1.50 + eval 2.00 + other 0.50 ", 0), 0u) << line;
  const size_t overlapped = line.find("; overlapped, not in the sum: ");
  ASSERT_NE(overlapped, std::string::npos) << line;
  for (const char* part : {"inspect 3.00 s", "plan 1.00 s", "gather 7.00 s (I/O wait 4.00 s"}) {
    EXPECT_GT(line.find(part), overlapped) << part << "\n" << line;
  }
  EXPECT_NE(report.Summary().find("\n  time: " + line + "\n"), std::string::npos) << report.Summary();
  report.eval_seconds = 5;  // parts measured on other clocks never make other negative
  EXPECT_NE(report.TimeBreakdown().find("+ other 0.00 "), std::string::npos) << report.TimeBreakdown();
  EXPECT_EQ(FormatDuration(187), "3m07s");
  EXPECT_EQ(FormatDuration(3720), "1h02m");
  EXPECT_EQ(FormatDuration(-1), "?");
}

}  // namespace
}  // namespace seer
