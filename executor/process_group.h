// ProcessGroup: the one thin wrapper over PyTorch's c10d that data-parallel training uses
// (collectives between the W ranks of a run). Gloo over TCP on CPUs; in a PyTorch 2.x
// CUDA build with NCCL, the gradient allreduce of CUDA tensors goes through NCCL
// (AllreduceSumTensor, executor/process_group_internal.h) and everything else stays on
// this Gloo group. Torch-free header. A build without the gloo headers (PyTorch's wheels
// ship none) has no Gloo: Available() is false and Connect refuses (kUnsupported).
//
// Connect: rank 0 hosts a c10d TCPStore on MASTER_ADDR:MASTER_PORT (torchrun's
// convention: the workers' store), every rank joins it and builds a ProcessGroupGloo
// bound to its own address (RankEnv::bind_addr / GLOO_SOCKET_IFNAME). Rendezvous and
// every collective time out after RankEnv::timeout_seconds.
//
// Collectives block until every rank has called the same collective (same order, same
// sizes — the callers' contract), and work in place on the caller's buffer. Failures
// (a rank that died, was killed or never came, a timeout, a closed connection) come back
// as kIoError naming the collective, its sequence number and the ranks that did not
// report: after a failure every surviving rank posts its arrival to the store and waits a
// few seconds for the others' (a rank hosting the store that died makes the store itself
// unreachable, which the message says). After a failure the group is broken: later calls
// fail at once, and the destructor does not wait for Gloo's threads (the process is
// expected to exit with the error).
//
// Not thread-safe: one caller thread (the executor thread) at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "executor/rank_env.h"
#include "storage/base/status.h"

namespace seer {

class ProcessGroup {
 public:
  enum class ReduceOp { kSum, kMin, kMax };

  // False when this build has no Gloo backend (built without the gloo headers).
  static bool Available();
  // Rendezvous with the other ranks (blocks up to the timeout); env.world_size must be > 1.
  static Result<std::unique_ptr<ProcessGroup>> Connect(const RankEnv& env);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int world_size() const;
  const RankEnv& env() const;

  // `what` names the collective in error messages ("gradient allreduce, step 12").
  Status AllreduceSum(float* data, int64_t count, const std::string& what);
  Status AllreduceInt64(int64_t* data, int64_t count, ReduceOp op, const std::string& what);
  Status Broadcast(float* data, int64_t count, int root, const std::string& what);
  // Root's bytes to every rank (size first, then the bytes).
  Status BroadcastBytes(std::string* bytes, int root, const std::string& what);
  // Every rank's `value`, indexed by rank.
  Result<std::vector<int64_t>> AllgatherInt64(int64_t value, const std::string& what);
  Status Barrier(const std::string& what);

  struct Impl;                      // c10d's objects (process_group.cc)
  Impl& impl() { return *impl_; }

 private:
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Thrown through code that cannot return a Status (ModelRunner::TrainStep) when a
// collective fails; carries the kIoError Status described above.
class CollectiveError : public std::runtime_error {
 public:
  explicit CollectiveError(Status status) : std::runtime_error(status.ToString()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// The ranks whose value differs from rank 0's, as "rank 2 (x), rank 3 (y)"; "" when all
// agree. For start-up checks (dataset identity, batch counts) that name the odd ranks.
std::string RanksDifferingFromRankZero(const std::vector<int64_t>& values, bool hex = false);

}  // namespace seer
