// ProcessGroup over c10d (see process_group.h). Debian's libtorch 1.13 exports
// ProcessGroupGloo, TCPStore and FileStore from libtorch_cpu and libgloo-dev provides the
// gloo headers; PyTorch 2.x keeps the same constructor and allreduce(...)->wait()
// (ProcessGroupGloo derives from c10d::Backend there, from c10d::ProcessGroup in 1.x), so
// this file compiles against both. It is the only file that includes c10d's Gloo (and
// NCCL) headers: PyTorch's wheels ship ProcessGroupGloo.hpp but not the gloo headers it
// includes, so without <gloo/algorithm.h> this file builds without Gloo and Connect
// refuses data-parallel runs (kUnsupported, saying what to install); everything else in
// Seer builds and runs as usual.
#include "executor/process_group.h"

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

#if __has_include(<gloo/algorithm.h>)
#define SEER_HAVE_GLOO 1
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO  // ProcessGroupGloo.hpp declares its class only with it
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#else
#define SEER_HAVE_GLOO 0
#endif

#include "executor/process_group_internal.h"
#include "storage/base/exception_status.h"

#ifndef SEER_C10D_NCCL
#define SEER_C10D_NCCL 0
#endif
#if SEER_C10D_NCCL
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace seer {

// A collective backend as c10d's process groups derive from it.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

struct ProcessGroup::Impl {
  RankEnv env;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<CollectiveBackend> gloo;  // a ProcessGroupGloo
#if SEER_C10D_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;  // CUDA tensors (PyTorch 2.x CUDA builds)
#endif
  int64_t sequence = 0;  // collectives started, for messages
  bool broken = false;

  // Starts one collective and waits for it; a failure becomes the kIoError Status
  // described in process_group.h.
  Status Run(const std::string& what, const std::function<c10::intrusive_ptr<c10d::Work>()>& start);
  Status Failure(const std::string& what, int64_t seq, const std::string& error);
  std::string StoreAddress() const;
  // In-place allreduce of a tensor: NCCL for a CUDA tensor when built with it and
  // connected, Gloo otherwise (a CPU tensor: Gloo here takes CPU tensors only).
  Status AllreduceTensor(at::Tensor& tensor, c10d::ReduceOp op, const std::string& what);
  bool NcclConnected() const {
#if SEER_C10D_NCCL
    return static_cast<bool>(nccl);
#else
    return false;
#endif
  }
};

namespace {

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

bool IsLoopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0; }

std::string JoinRanks(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// The ranks (other than `self`) whose key "<prefix>/<rank>" is not in the store by
// `deadline`, polled every 50 ms.
std::vector<int> MissingRanks(c10d::Store& store, const std::string& prefix, int self, int world,
                              std::chrono::steady_clock::time_point deadline) {
  std::vector<int> missing;
  for (int r = 0; r < world; ++r) {
    if (r != self) missing.push_back(r);
  }
  while (!missing.empty()) {
    std::vector<int> still;
    for (int r : missing) {
      if (!store.check({fmt::format("{}/{}", prefix, r)})) still.push_back(r);
    }
    missing.swap(still);
    if (missing.empty() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return missing;
}

}  // namespace

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ProcessGroup::~ProcessGroup() {
  if (impl_ && impl_->broken) {
    // Gloo's worker threads may still wait on a dead peer: do not join them (the process
    // is about to exit with the error). Deliberately leaked.
    impl_->gloo.release();
#if SEER_C10D_NCCL
    impl_->nccl.release();
#endif
    impl_->store.release();
  }
}

int ProcessGroup::rank() const { return impl_->env.rank; }
int ProcessGroup::world_size() const { return impl_->env.world_size; }
const RankEnv& ProcessGroup::env() const { return impl_->env; }

std::string ProcessGroup::Impl::StoreAddress() const {
  return fmt::format("{}:{} (hosted by rank 0)", env.master_addr, env.master_port);
}

Status ProcessGroup::Impl::Failure(const std::string& what, int64_t seq, const std::string& error) {
  broken = true;
  std::string who;
  try {
    // Every surviving rank that fails posts its arrival; the ones that never post are
    // dead, stuck or unreachable. A short wait: the survivors fail within moments of
    // each other when a peer's connection closes, later only when they time out too.
    const std::string prefix = fmt::format("seer/failed/{}", seq);
    store->set(fmt::format("{}/{}", prefix, env.rank), std::vector<uint8_t>{1});
    const double wait_s = std::min(5.0, env.timeout_seconds);
    const std::vector<int> missing =
        MissingRanks(*store, prefix, env.rank, env.world_size, std::chrono::steady_clock::now() + Millis(wait_s));
    who = missing.empty() ? "every rank reached it and failed"
                          : fmt::format("rank(s) {} did not reach it (dead, stuck or unreachable)", JoinRanks(missing));
  } catch (const std::exception&) {
    who = fmt::format("the rendezvous store at {} is unreachable: rank 0 is gone or unreachable", StoreAddress());
  }
  return Status(StatusCode::kIoError,
                fmt::format("rank {} of {}: {} (collective #{}) failed: {}; {}", env.rank, env.world_size, what, seq,
                            who, error));
}

Status ProcessGroup::Impl::Run(const std::string& what, const std::function<c10::intrusive_ptr<c10d::Work>()>& start) {
  const int64_t seq = ++sequence;
  if (broken) {
    return Status(StatusCode::kIoError,
                  fmt::format("rank {}: {} after an earlier collective failed", env.rank, what));
  }
  try {
    c10::intrusive_ptr<c10d::Work> work = start();
    work->wait();
    return Status::Ok();
  } catch (const std::exception& e) {
    const std::string text = ExceptionSummary(e);  // its first line: no C++ backtrace
    return Failure(what, seq, text);
  }
}

bool ProcessGroup::Available() { return SEER_HAVE_GLOO != 0; }

namespace {

// The Gloo group over `store`, bound as RankEnv says (throws what c10d throws).
c10::intrusive_ptr<CollectiveBackend> ConnectGloo(const c10::intrusive_ptr<c10d::Store>& store, const RankEnv& env,
                                                  std::chrono::milliseconds timeout) {
#if SEER_HAVE_GLOO
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  if (!env.bind_interface.empty()) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(env.bind_interface));
  } else if (!env.bind_addr.empty()) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(env.bind_addr));
  } else if (IsLoopback(env.master_addr)) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  options->threads = 2;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
#else
  (void)store;
  (void)env;
  (void)timeout;
  throw std::logic_error("ConnectGloo without Gloo");  // Connect refuses before
#endif
}

}  // namespace

Result<std::unique_ptr<ProcessGroup>> ProcessGroup::Connect(const RankEnv& env) {
  if (!env.distributed()) return InvalidArgument("ProcessGroup::Connect needs a world size > 1");
  if (!Available()) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("rank {} of {}: data-parallel runs need c10d's Gloo backend, and this Seer was built "
                              "without the gloo headers (PyTorch's wheels do not ship them): install them where the "
                              "compiler finds them (Debian/Ubuntu: libgloo-dev) and rebuild, or run one process",
                              env.rank, env.world_size));
  }
  auto impl = std::make_unique<Impl>();
  impl->env = env;
  const auto timeout = Millis(env.timeout_seconds);
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(env.master_port);
    store_options.isServer = env.rank == 0;
    store_options.numWorkers = static_cast<size_t>(env.world_size);
    store_options.waitWorkers = false;  // the joins below say who is missing
    store_options.timeout = timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const std::exception& e) {
    const std::string text = ExceptionSummary(e);
    return Status(StatusCode::kIoError,
                  fmt::format("rank {} of {}: cannot {} the rendezvous store at {}:{} within {} s: {}", env.rank,
                              env.world_size, env.rank == 0 ? "host" : "reach", env.master_addr, env.master_port,
                              env.timeout_seconds, text));
  }
  try {
    // Join, then wait for every rank's join so a missing one is named.
    impl->store->set(fmt::format("seer/join/{}", env.rank), std::vector<uint8_t>{1});
    const std::vector<int> missing = MissingRanks(*impl->store, "seer/join", env.rank, env.world_size,
                                                  std::chrono::steady_clock::now() + timeout);
    if (!missing.empty()) {
      impl->broken = true;
      return Status(StatusCode::kIoError,
                    fmt::format("rank {} of {}: rank(s) {} did not join the run at {}:{} within {} s (--dist-timeout)",
                                env.rank, env.world_size, JoinRanks(missing), env.master_addr, env.master_port,
                                env.timeout_seconds));
    }
    impl->gloo = ConnectGloo(impl->store, env, timeout);
#if SEER_C10D_NCCL
    if (torch::cuda::is_available()) {
      auto nccl_store = c10::make_intrusive<c10d::PrefixStore>("nccl", impl->store);
      auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
      nccl_options->timeout = timeout;
      impl->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(nccl_store, env.rank, env.world_size, nccl_options);
    }
#endif
  } catch (const std::exception& e) {
    impl->broken = true;
    const std::string text = ExceptionSummary(e);
    return Status(StatusCode::kIoError, fmt::format("rank {} of {}: connecting the process group failed: {}",
                                                        env.rank, env.world_size, text));
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

namespace {

c10d::ReduceOp ToC10d(ProcessGroup::ReduceOp op) {
  switch (op) {
    case ProcessGroup::ReduceOp::kMin:
      return c10d::ReduceOp::MIN;
    case ProcessGroup::ReduceOp::kMax:
      return c10d::ReduceOp::MAX;
    case ProcessGroup::ReduceOp::kSum:
      break;
  }
  return c10d::ReduceOp::SUM;
}

}  // namespace

Status ProcessGroup::Impl::AllreduceTensor(at::Tensor& tensor, c10d::ReduceOp op, const std::string& what) {
  return Run(what, [&] {
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions options;
    options.reduceOp = op;
#if SEER_C10D_NCCL
    if (tensor.is_cuda() && nccl) return nccl->allreduce(tensors, options);
#endif
    return gloo->allreduce(tensors, options);
  });
}

Status AllreduceSumTensor(ProcessGroup& group, at::Tensor& tensor, const std::string& what) {
  ProcessGroup::Impl& impl = group.impl();
  // Gloo reduces CPU tensors; NCCL (when built in and connected) takes CUDA tensors as they are.
  at::Tensor wire = tensor.is_cuda() && !impl.NcclConnected() ? tensor.to(torch::kCPU) : tensor;
  SEER_RETURN_IF_ERROR(impl.AllreduceTensor(wire, c10d::ReduceOp::SUM, what));
  if (!wire.is_same(tensor)) tensor.copy_(wire);
  return Status::Ok();
}

Status ProcessGroup::AllreduceSum(float* data, int64_t count, const std::string& what) {
  if (count == 0) return Status::Ok();
  at::Tensor t = torch::from_blob(data, {count}, torch::kFloat32);
  return impl_->AllreduceTensor(t, c10d::ReduceOp::SUM, what);
}

Status ProcessGroup::AllreduceInt64(int64_t* data, int64_t count, ReduceOp op, const std::string& what) {
  if (count == 0) return Status::Ok();
  at::Tensor t = torch::from_blob(data, {count}, torch::kInt64);
  return impl_->AllreduceTensor(t, ToC10d(op), what);
}

Status ProcessGroup::Broadcast(float* data, int64_t count, int root, const std::string& what) {
  if (count == 0) return Status::Ok();
  at::Tensor t = torch::from_blob(data, {count}, torch::kFloat32);
  return impl_->Run(what, [&] {
    std::vector<at::Tensor> tensors{t};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    return impl_->gloo->broadcast(tensors, options);
  });
}

Status ProcessGroup::BroadcastBytes(std::string* bytes, int root, const std::string& what) {
  int64_t size = static_cast<int64_t>(bytes->size());
  at::Tensor size_tensor = torch::from_blob(&size, {1}, torch::kInt64);
  SEER_RETURN_IF_ERROR(impl_->Run(what + " (size)", [&] {
    std::vector<at::Tensor> tensors{size_tensor};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    return impl_->gloo->broadcast(tensors, options);
  }));
  bytes->resize(static_cast<size_t>(size));
  if (size == 0) return Status::Ok();
  at::Tensor t = torch::from_blob(bytes->data(), {size}, torch::kUInt8);
  return impl_->Run(what, [&] {
    std::vector<at::Tensor> tensors{t};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    return impl_->gloo->broadcast(tensors, options);
  });
}

Result<std::vector<int64_t>> ProcessGroup::AllgatherInt64(int64_t value, const std::string& what) {
  // An allreduce of a one-hot vector: one collective, no allgather buffer lists.
  std::vector<int64_t> values(static_cast<size_t>(world_size()), 0);
  values[static_cast<size_t>(rank())] = value;
  SEER_RETURN_IF_ERROR(AllreduceInt64(values.data(), world_size(), ReduceOp::kSum, what));
  return values;
}

Status ProcessGroup::Barrier(const std::string& what) {
  return impl_->Run(what, [&] { return impl_->gloo->barrier(c10d::BarrierOptions()); });
}

std::string RanksDifferingFromRankZero(const std::vector<int64_t>& values, bool hex) {
  std::string out;
  for (size_t r = 1; r < values.size(); ++r) {
    if (values[r] == values[0]) continue;
    out += fmt::format("{}rank {} ({})", out.empty() ? "" : ", ", r,
                       hex ? fmt::format("{:016x}", static_cast<uint64_t>(values[r])) : std::to_string(values[r]));
  }
  return out;
}

}  // namespace seer
