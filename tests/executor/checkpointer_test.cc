// Checkpointer and the checkpoint file format: resume checks happen before any work,
// a saved position comes back through Resume, a checkpoint of another seed is refused,
// the header (position, run record, partial sums) is checksummed and round-trips, and a
// resume with other batching flags or data is refused naming both values.
#include "executor/checkpointer.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "executor/checkpoint_file.h"
#include "storage/base/atomic_file.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

ModelConfig SmallConfig() {
  ModelConfig c;
  c.kind = ModelKind::kSage;
  c.in_dim = 8;
  c.hidden = 16;
  c.num_classes = 3;
  c.num_layers = 2;
  return c;
}

TEST(CheckpointerTest, ResumeChecksHappenAtOpen) {
  Checkpointer::Options o;
  o.resume = true;
  auto r = Checkpointer::Open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--checkpoint-dir"), std::string::npos);
  o.checkpoint_dir = testing::MakeTempDir("ckpt");
  r = Checkpointer::Open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find(o.checkpoint_dir + "/checkpoint.ckpt"), std::string::npos);
  o.no_train = true;
  EXPECT_FALSE(Checkpointer::Open(o).ok());
  // A damaged file is refused before any work is done.
  o.no_train = false;
  ASSERT_TRUE(WriteFileAtomically(o.checkpoint_dir + "/checkpoint.ckpt", "garbage").ok());
  r = Checkpointer::Open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
}

TEST(CheckpointerTest, SavedPositionComesBackAndAnotherSeedIsRefused) {
  Checkpointer::Options o;
  o.checkpoint_dir = testing::MakeTempDir("ckpt") + "/nested";
  o.checkpoint_every = 3;
  auto writer = Checkpointer::Open(o);
  ASSERT_TRUE(writer.ok());
  EXPECT_FALSE(writer->DueAfterSuperbatch(2));
  EXPECT_TRUE(writer->DueAfterSuperbatch(6));
  auto model = ModelRunner::Create(SmallConfig(), 0.01, 5, /*use_cuda=*/false);
  auto start = writer->Resume(model.get(), 5);  // not resuming: creates the directory
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->epoch, 0);
  EXPECT_EQ(start->seed, 5u);
  TrainPosition at;
  at.epoch = 2;
  at.next_superbatch = 7;
  at.global_step = 123;
  at.seed = 5;
  at.best_valid_accuracy = 0.625;
  at.best_epoch = 1;
  ASSERT_TRUE(writer->Save(model.get(), at).ok());
  EXPECT_TRUE(writer->Save(nullptr, at).ok()) << "no model: nothing to save";

  o.resume = true;
  auto reader = Checkpointer::Open(o);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto fresh = ModelRunner::Create(SmallConfig(), 0.01, 5, false);
  auto resumed = reader->Resume(fresh.get(), 5);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->epoch, 2);
  EXPECT_EQ(resumed->next_superbatch, 7);
  EXPECT_EQ(resumed->global_step, 123);
  EXPECT_EQ(resumed->best_valid_accuracy, 0.625);
  EXPECT_EQ(resumed->best_epoch, 1);
  auto other_seed = reader->Resume(fresh.get(), 6);
  ASSERT_FALSE(other_seed.ok());
  EXPECT_NE(other_seed.status().message().find("--seed 5"), std::string::npos) << other_seed.status().message();
}

// Rewrites a checkpoint's header with `edit` applied and its header checksum recomputed
// (what a writer with other values would have produced).
std::string Resigned(const std::string& bytes, const std::function<void(Json&)>& edit) {
  const size_t newline = bytes.find('\n');
  Json header = Json::parse(bytes.substr(0, newline));
  edit(header);
  header["header_xxh64"] = CheckpointHeaderChecksum(header);
  return header.dump() + bytes.substr(newline);
}

// EncodeCheckpoint's header reads back the same: seed as a decimal string (uint64),
// doubles exactly, the run record and the epoch's partial sums.
TEST(CheckpointFileTest, HeaderRoundTrips) {
  const std::string dir = testing::MakeTempDir("ckpt");
  const std::string payload = "payload bytes\n with a newline";
  CheckpointHeader header;
  header.config = SmallConfig();
  header.config.dataset = "0123456789abcdef";
  header.position.epoch = 1;
  header.position.next_superbatch = 2;
  header.position.global_step = 9;
  header.position.seed = 18446744073709551615ull;
  header.position.best_valid_accuracy = 0.1;
  header.position.run = {{"--batch-size", "64"}, {"dataset", "0123456789abcdef"}};
  header.position.epoch_loss_sum = 1.25;
  header.position.epoch_loss_batches = 3;
  header.position.epoch_correct = 7;
  header.position.epoch_labeled = 11;
  header.position.epoch_batches = 4;
  header.position.epoch_seeds = 256;
  ASSERT_TRUE(WriteCheckpointFile(dir + "/new.ckpt", header, payload).ok());
  auto again = ReadCheckpointFile(dir + "/new.ckpt");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->payload, payload);
  const TrainPosition& p = again->header.position;
  EXPECT_EQ(p.seed, header.position.seed);
  EXPECT_EQ(p.best_valid_accuracy, 0.1);
  EXPECT_EQ(p.run, header.position.run);
  EXPECT_EQ(p.epoch_loss_sum, 1.25);
  EXPECT_EQ(p.epoch_loss_batches, 3);
  EXPECT_EQ(p.epoch_correct, 7);
  EXPECT_EQ(p.epoch_labeled, 11);
  EXPECT_EQ(p.epoch_batches, 4);
  EXPECT_EQ(p.epoch_seeds, 256);
  EXPECT_EQ(again->header.config.ToJson(), header.config.ToJson());
  EXPECT_EQ(again->header.config.dataset, "0123456789abcdef");
  auto head_only = ReadCheckpointHeader(dir + "/new.ckpt");
  ASSERT_TRUE(head_only.ok()) << head_only.status().message();
  EXPECT_EQ(head_only->position.run, header.position.run);
  EXPECT_TRUE(head_only->position.settings.empty()) << "no settings written, none read";
  const std::string bytes = ReadWholeFile(dir + "/new.ckpt").value();
  EXPECT_EQ(bytes.find('\n'), bytes.size() - payload.size() - 1) << "one header line";
}

// `seer train` records its settings in the position so `--resume --checkpoint-dir K`
// alone continues the run; they are covered by the header checksum like the rest.
TEST(CheckpointFileTest, SettingsRoundTripAndAreChecksummed) {
  const std::string dir = testing::MakeTempDir("ckpt");
  CheckpointHeader header;
  header.config = SmallConfig();
  header.position.settings = {{"dataset", "/data/my graph"}, {"--hidden", "24"}, {"--fanouts", "4,3"},
                              {"--no-overlap", "false"}};
  ASSERT_TRUE(WriteCheckpointFile(dir + "/s.ckpt", header, "p").ok());
  auto head = ReadCheckpointHeader(dir + "/s.ckpt");
  ASSERT_TRUE(head.ok()) << head.status().message();
  EXPECT_EQ(head->position.settings, header.position.settings);
  std::string bytes = ReadWholeFile(dir + "/s.ckpt").value();
  const size_t at = bytes.find("\"24\"");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] = '3';  // --hidden 34: same length, valid JSON
  ASSERT_TRUE(WriteFileAtomically(dir + "/s.ckpt", bytes).ok());
  auto edited = ReadCheckpointHeader(dir + "/s.ckpt");
  ASSERT_FALSE(edited.ok());
  EXPECT_EQ(edited.status().code(), StatusCode::kCorrupt);
}

// The position is covered by the header checksum: an edited next_superbatch (same
// length, valid JSON) is refused; it was read silently before.
TEST(CheckpointFileTest, EditedPositionIsRefused) {
  const std::string dir = testing::MakeTempDir("ckpt");
  CheckpointHeader header;
  header.config = SmallConfig();
  std::string bytes = EncodeCheckpoint(header, "xyz");
  const size_t at = bytes.find("\"next_superbatch\":0");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 18] = '7';
  ASSERT_TRUE(WriteFileAtomically(dir + "/edited.ckpt", bytes).ok());
  const Status statuses[] = {ReadCheckpointPosition(dir + "/edited.ckpt").status(),
                             ReadCheckpointHeader(dir + "/edited.ckpt").status()};
  for (const Status& st : statuses) {
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kCorrupt);
    EXPECT_NE(st.message().find("header is corrupt"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(dir + "/edited.ckpt"), std::string::npos) << st.message();
  }
}

// Version 1 files (no header checksum, no run record) are refused saying why.
TEST(CheckpointFileTest, VersionOneIsRefused) {
  const std::string dir = testing::MakeTempDir("ckpt");
  CheckpointHeader header;
  header.config = SmallConfig();
  const std::string bytes = Resigned(EncodeCheckpoint(header, "xyz"), [](Json& h) { h["version"] = 1; });
  ASSERT_TRUE(WriteFileAtomically(dir + "/v1.ckpt", bytes).ok());
  auto r = ReadCheckpointPosition(dir + "/v1.ckpt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("version 1"), std::string::npos) << r.status().message();
}

TEST(CheckpointFileTest, BadHeaderFieldsAreNamed) {
  const std::string dir = testing::MakeTempDir("ckpt");
  CheckpointHeader header;
  header.config = SmallConfig();
  const std::string good = EncodeCheckpoint(header, "xyz");
  struct Case {
    std::function<void(Json&)> edit;
    std::string field;
  };
  const Case cases[] = {
      {[](Json& h) { h["position"]["global_step"] = "0"; }, "global_step"},
      // A non-numeric seed was "error: stoull" before.
      {[](Json& h) { h["position"]["seed"] = "abc"; }, "seed"},
      {[](Json& h) { h["position"]["seed"] = "-1"; }, "seed"},
      {[](Json& h) { h["position"]["next_superbatch"] = -3; }, "next_superbatch"},
      {[](Json& h) { h["position"]["run"]["--batch-size"] = 64; }, "run.--batch-size"},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(WriteFileAtomically(dir + "/bad.ckpt", Resigned(good, c.edit)).ok());
    auto r = ReadCheckpointPosition(dir + "/bad.ckpt");
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(dir + "/bad.ckpt"), std::string::npos) << r.status().message();
  }
}

// --resume compares the checkpoint's run record with this run's: every differing entry
// is named with both values; equal records pass; without --resume nothing is checked.
TEST(CheckpointerTest, ResumeWithOtherBatchingFlagsIsRefusedNamingBoth) {
  const std::string dir = testing::MakeTempDir("ckpt_run");
  TrainOptions o;
  o.batch_size = 30;
  o.fanouts = {5, 5};
  const auto saved = TrainRunRecord(o, /*batches_per_superbatch=*/1, "aaaa");
  CheckpointHeader header;
  header.config = SmallConfig();
  header.position.run = saved;
  ASSERT_TRUE(WriteCheckpointFile(dir + "/checkpoint.ckpt", header, "xyz").ok());
  auto resumer = Checkpointer::Open({dir, 0, /*resume=*/true, false});
  ASSERT_TRUE(resumer.ok()) << resumer.status().message();
  EXPECT_TRUE(resumer->CheckRun(saved).ok());

  TrainOptions other = o;
  other.batch_size = 100;
  const Status s = resumer->CheckRun(TrainRunRecord(other, /*batches_per_superbatch=*/2, "bbbb"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"--batch-size: checkpoint 30, this run 100", "--superbatch: checkpoint 1, this run 2",
                           "dataset: checkpoint aaaa, this run bbbb", "checkpoint.ckpt"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << "\n" << s.message();
  }
  EXPECT_EQ(s.message().find("--seed"), std::string::npos) << "equal entries are not listed: " << s.message();
  // Every difference at once, one per line (the message's first line says what to do).
  EXPECT_NE(s.message().find("\n  --batch-size: checkpoint 30, this run 100"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("\n  --superbatch: checkpoint 1, this run 2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("\n  dataset: checkpoint aaaa, this run bbbb"), std::string::npos) << s.message();
  // Another rank count is another global batch (--batch-size is per rank).
  const Status ranks = resumer->CheckRun(TrainRunRecord(o, /*batches_per_superbatch=*/1, "aaaa", /*world_size=*/2));
  ASSERT_FALSE(ranks.ok());
  EXPECT_NE(ranks.message().find("world size (ranks): checkpoint 1, this run 2"), std::string::npos)
      << ranks.message();
  EXPECT_TRUE(resumer->CheckRun(TrainRunRecord(o, /*batches_per_superbatch=*/1, "aaaa")).ok());

  // The conventional pipeline's grouping is --prefetch.
  TrainOptions conventional = o;
  conventional.pipeline = PipelineKind::kConventional;
  const auto record = TrainRunRecord(conventional, 2, "aaaa");
  EXPECT_EQ(record.count("--superbatch"), 0u);
  EXPECT_EQ(record.at("--prefetch"), "2");
  EXPECT_EQ(record.at("--pipeline"), "conventional");

  auto fresh = Checkpointer::Open({dir, 0, /*resume=*/false, false});
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->CheckRun(TrainRunRecord(other, 2, "bbbb")).ok());
}

}  // namespace
}  // namespace seer
