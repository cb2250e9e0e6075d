// The torch side of ProcessGroup (executor/process_group.h), for executor/ sources that
// hold tensors (model_runner.cc's gradient allreduce). Includes c10d: not installed.
#pragma once

#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif

#include <cstdint>
#include <functional>
#include <string>

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "executor/process_group.h"

#ifndef SEER_C10D_NCCL
#define SEER_C10D_NCCL 0
#endif
#if SEER_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace seer {

struct ProcessGroup::Impl {
  RankEnv env;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
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
  // In-place allreduce of a tensor: NCCL for a CUDA tensor when built with it, Gloo
  // otherwise (a CPU tensor: Gloo here takes CPU tensors only).
  Status AllreduceTensor(at::Tensor& tensor, c10d::ReduceOp op, const std::string& what);
};

}  // namespace seer
