// The trace directory of `seer sample --out` (inspector/trace_directory.h): writer and
// reader round trip, --force, and trace.json fields refused by name.
#include "inspector/trace_directory.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "random_trace.h"
#include "storage/base/json_file.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

TraceRunInfo ExampleRunInfo() {
  TraceRunInfo info;
  info.dataset_dir = "/data/g";
  info.fanouts = {10, 5};
  info.batch_size = 64;
  info.superbatch = 3;
  info.epochs = 2;
  info.seed = 18446744073709551615ULL;
  return info;
}

TEST(TraceDirectoryTest, WriterAndReaderRoundTrip) {
  const std::string dir = testing::MakeTempDir("tracedir") + "/out";
  const TraceRunInfo info = ExampleRunInfo();
  const std::vector<SuperbatchTrace> traces{testing::RandomTrace(1, 0, 0, 3), testing::RandomTrace(2, 0, 1, 1),
                                            testing::RandomTrace(3, 1, 0, 3)};
  {
    auto w = TraceDirectoryWriter::Create(dir, info, false);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (const auto& t : traces) ASSERT_TRUE(w->Add(t).ok());
    ASSERT_TRUE(w->Close().ok());
  }
  auto r = TraceDirectoryReader::Open(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->dataset_dir(), "/data/g");
  EXPECT_EQ(r->run_info().seed, info.seed);
  EXPECT_EQ(r->run_info().fanouts, info.fanouts);
  ASSERT_EQ(r->num_superbatches(), 3);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r->info(i).epoch, traces[i].epoch);
    EXPECT_EQ(r->info(i).superbatch_index, traces[i].superbatch_index);
    EXPECT_EQ(r->info(i).num_batches, static_cast<int64_t>(traces[i].batches.size()));
    auto t = r->Read(i);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_TRUE(testing::Same(*t, traces[i]));
  }
  EXPECT_EQ(TraceDirectoryWriter::Create(dir, info, false).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(TraceDirectoryWriter::Create(dir, info, true).ok());
  // --force removed the old trace.json first: not a trace directory until Close().
  EXPECT_FALSE(TraceDirectoryReader::Open(dir).ok());
}

// trace.json fields of the wrong type or missing are refused with a message naming the
// file and the field: a fan-out "10" is not read as 10, nor as 0.
TEST(TraceDirectoryTest, ManifestFieldOfWrongTypeOrMissingIsRefused) {
  const std::string dir = testing::MakeTempDir("tracejson");
  {
    auto w = TraceDirectoryWriter::Create(dir, ExampleRunInfo(), false);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE(w->Add(testing::RandomTrace(1, 0, 0, 2)).ok());
    ASSERT_TRUE(w->Close().ok());
  }
  const std::string path = dir + "/trace.json";
  auto saved = ReadJsonFile(path);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  ASSERT_TRUE(TraceDirectoryReader::Open(dir).ok());
  struct Edit {
    Json::json_pointer where;
    Json value;          // discarded when remove
    bool remove = false;
    std::string field;   // what the message must name
  };
  const std::vector<Edit> edits = {
      {Json::json_pointer("/fanouts/0"), "10", false, "fanouts"},
      {Json::json_pointer("/fanouts"), 10, false, "fanouts"},
      {Json::json_pointer("/batch_size"), "64", false, "batch_size"},
      {Json::json_pointer("/epochs"), 2.5, false, "epochs"},
      {Json::json_pointer("/superbatch"), nullptr, true, "superbatch"},
      {Json::json_pointer("/seed"), 7, false, "seed"},
      {Json::json_pointer("/seed"), "7x", false, "seed"},
      {Json::json_pointer("/version"), "1", false, "version"},
      {Json::json_pointer("/format"), nullptr, true, "format"},
      {Json::json_pointer("/superbatches"), Json::object(), false, "superbatches"},
      {Json::json_pointer("/superbatches/0/num_batches"), "2", false, "num_batches"},
      {Json::json_pointer("/superbatches/0/file"), nullptr, true, "file"},
  };
  for (const Edit& edit : edits) {
    SCOPED_TRACE(edit.where.to_string() + (edit.remove ? " removed" : " = " + edit.value.dump()));
    Json edited = *saved;
    if (edit.remove) {
      edited[edit.where.parent_pointer()].erase(edit.where.back());
    } else {
      edited[edit.where] = edit.value;
    }
    ASSERT_TRUE(WriteJsonFileAtomically(path, edited).ok());
    auto reader = TraceDirectoryReader::Open(dir);
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.status().code(), StatusCode::kCorrupt);
    const std::string& message = reader.status().message();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("'" + edit.field + "'"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace seer
