// Checkpointer and the checkpoint file format: resume checks happen before any work,
// a saved position comes back through Resume, a checkpoint of another seed is refused,
// and the file's header (nlohmann) keeps the format older checkpoints were written in.
#include "executor/checkpointer.h"

#include <gtest/gtest.h>

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

// A header as the hand-written JSON writer produced it (doubles as %.17g, uint64 seed as
// a string) still reads, and EncodeCheckpoint's header reads back the same.
TEST(CheckpointFileTest, ReadsTheExistingFormat) {
  const std::string dir = testing::MakeTempDir("ckpt");
  const std::string payload = "payload bytes\n with a newline";
  const std::string header =
      "{\"config\":{\"dropout\":0.5,\"heads\":4,\"hidden\":16,\"in_dim\":8,\"kind\":\"sage\",\"num_classes\":3,"
      "\"num_layers\":2},\"format\":\"seer-checkpoint\",\"has_best\":false,\"payload_bytes\":" +
      std::to_string(payload.size()) + ",\"payload_xxh64\":\"" +
      Xxh64::ToHex(Xxh64::Hash(payload.data(), payload.size())) +
      "\",\"position\":{\"best_epoch\":-1,\"best_valid_accuracy\":0.10000000000000001,\"epoch\":1,"
      "\"global_step\":9,\"next_superbatch\":2,\"seed\":\"18446744073709551615\"},\"version\":1}";
  ASSERT_TRUE(WriteFileAtomically(dir + "/old.ckpt", header + "\n" + payload).ok());
  auto old = ReadCheckpointFile(dir + "/old.ckpt");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->payload, payload);
  EXPECT_EQ(old->header.position.seed, 18446744073709551615ull);
  EXPECT_EQ(old->header.position.best_valid_accuracy, 0.1);
  EXPECT_EQ(old->header.config.ToJson(), SmallConfig().ToJson());

  ASSERT_TRUE(WriteCheckpointFile(dir + "/new.ckpt", old->header, payload).ok());
  auto again = ReadCheckpointFile(dir + "/new.ckpt");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->header.position.seed, old->header.position.seed);
  EXPECT_EQ(again->payload, payload);
  const std::string bytes = ReadWholeFile(dir + "/new.ckpt").value();
  EXPECT_EQ(bytes.find('\n'), bytes.size() - payload.size() - 1) << "one header line";
}

TEST(CheckpointFileTest, BadHeaderFieldsAreNamed) {
  const std::string dir = testing::MakeTempDir("ckpt");
  CheckpointHeader header;
  header.config = SmallConfig();
  std::string bytes = EncodeCheckpoint(header, "xyz");
  const size_t at = bytes.find("\"global_step\":0");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 15, "\"global_step\":\"0\"");
  ASSERT_TRUE(WriteFileAtomically(dir + "/bad.ckpt", bytes).ok());
  auto r = ReadCheckpointPosition(dir + "/bad.ckpt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(r.status().message().find("global_step"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(dir + "/bad.ckpt"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace seer
