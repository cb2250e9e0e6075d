// The tensor side of ProcessGroup (executor/process_group.h), for executor/ sources that
// hold tensors (model_runner.cc's gradient allreduce). Includes libtorch but none of
// c10d's backend headers: Gloo's and NCCL's stay inside process_group.cc (PyTorch's
// wheels ship c10d's ProcessGroupGloo.hpp without the gloo headers it includes). Not
// installed. Same thread rule as ProcessGroup: the group's one caller thread.
#pragma once

#include <string>

#include <torch/torch.h>

#include "executor/process_group.h"
#include "storage/base/status.h"

namespace seer {

// In-place sum of `tensor` (float32) over the ranks. A CUDA tensor goes through NCCL
// when this build has c10d's NCCL group (SEER_C10D_NCCL) and it is connected, else it is
// copied to the host, reduced by Gloo and copied back. Failures as in process_group.h.
Status AllreduceSumTensor(ProcessGroup& group, at::Tensor& tensor, const std::string& what);

}  // namespace seer
