// CUDA Belady planner: see kernels/belady_gpu.h and cache/belady_planner.h for the rule.
// Written for clarity over speed: thrust primitives plus a few element-wise kernels,
// one host loop over the iterations of the superbatch.
#include <cuda_runtime.h>
#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/system/cuda/error.h>
#include <thrust/system_error.h>

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "kernels/belady_gpu.h"
#include "kernels/device.h"

namespace seer::kernels {
namespace {

constexpr int kThreads = 256;
inline unsigned Blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Batch holding global access position g: offsets has num_batches + 1 entries.
__device__ int64_t BatchOf(const int64_t* offsets, int64_t num_batches, int64_t g) {
  int64_t lo = 0, hi = num_batches;  // answer in [0, num_batches)
  while (hi - lo > 1) {
    int64_t mid = (lo + hi) / 2;
    if (offsets[mid] <= g) lo = mid; else hi = mid;
  }
  return lo;
}

// Next-use iteration of an access chain position (g = -1: never -> num_batches).
__device__ uint64_t NextUse(const int64_t* offsets, int64_t num_batches, int64_t g) {
  return g < 0 ? static_cast<uint64_t>(num_batches) : static_cast<uint64_t>(BatchOf(offsets, num_batches, g));
}

// After the stable sort by id: next_g[g_t] = g_{t+1} when the same id follows.
__global__ void LinkNextAccess(const int64_t* sorted_ids, const int64_t* sorted_g, int64_t total,
                               const int64_t* offsets, int64_t num_batches, int64_t* next_g,
                               unsigned long long* duplicate_g) {
  int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= total) return;
  int64_t g = sorted_g[t];
  int64_t nxt = -1;
  if (t + 1 < total && sorted_ids[t + 1] == sorted_ids[t]) {
    nxt = sorted_g[t + 1];
    if (BatchOf(offsets, num_batches, g) == BatchOf(offsets, num_batches, nxt)) {
      atomicMin(duplicate_g, static_cast<unsigned long long>(nxt));
    }
  }
  next_g[g] = nxt;
}

// Initial next access of every occupied slot: the first access of its id, or -1.
__global__ void InitSlots(const int64_t* slot_id, int64_t capacity, const int64_t* sorted_ids,
                          const int64_t* sorted_g, int64_t total, const int64_t* lower,
                          int64_t* slot_next) {
  int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (s >= capacity) return;
  int64_t v = slot_id[s];
  int64_t t = lower[s];
  slot_next[s] = (v >= 0 && t < total && sorted_ids[t] == v) ? sorted_g[t] : -1;
}

// Hits of iteration i: slots whose next access lies in [base, base + n).
__global__ void MarkHits(const int64_t* slot_id, int64_t* slot_next, int64_t capacity,
                         int64_t base, int64_t n, const int64_t* next_g, int32_t* hit_slot) {
  int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (s >= capacity || slot_id[s] < 0) return;
  int64_t g = slot_next[s];
  if (g >= base && g < base + n) {
    hit_slot[g - base] = static_cast<int32_t>(s);
    slot_next[s] = next_g[g];
  }
}

// Candidate keys (next_use, not cached, id) packed as nu << (id_bits+1) | flag << id_bits
// | id; 0 for "not a candidate" (free slot, or a hit position). Valid keys are > 0
// because next_use > i >= 0.
__global__ void BuildKeys(const int64_t* slot_id, const int64_t* slot_next, int64_t capacity,
                          const int64_t* ids, const int64_t* next_g, const int32_t* hit_slot,
                          int64_t base, int64_t n, const int64_t* offsets, int64_t num_batches,
                          int id_bits, uint64_t* keys) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= capacity + n) return;
  uint64_t key = 0;
  if (k < capacity) {
    int64_t v = slot_id[k];
    if (v >= 0) {
      key = (NextUse(offsets, num_batches, slot_next[k]) << (id_bits + 1)) | static_cast<uint64_t>(v);
    }
  } else {
    int64_t p = k - capacity;
    if (hit_slot[p] < 0) {
      key = (NextUse(offsets, num_batches, next_g[base + p]) << (id_bits + 1)) |
            (uint64_t{1} << id_bits) | static_cast<uint64_t>(ids[base + p]);
    }
  }
  keys[k] = key;
}

struct IsEvicted {
  const uint64_t* keys;
  uint64_t threshold;
  __device__ bool operator()(int32_t s) const { return keys[s] >= threshold; }
};
struct IsInserted {
  const int32_t* hit_slot;
  const uint64_t* miss_keys;  // null when nothing is cut
  uint64_t threshold;
  __device__ bool operator()(int32_t p) const {
    return hit_slot[p] < 0 && (miss_keys == nullptr || miss_keys[p] < threshold);
  }
};
struct IsFree {
  const int64_t* slot_id;
  __device__ bool operator()(int32_t s) const { return slot_id[s] < 0; }
};
struct IsMiss {
  __device__ bool operator()(int32_t slot) const { return slot < 0; }
};

__global__ void Evict(const int32_t* out_slots, int64_t count, int64_t* slot_id, int64_t* out_ids) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  out_ids[k] = slot_id[out_slots[k]];
  slot_id[out_slots[k]] = -1;
}

__global__ void Insert(const int32_t* in_positions, const int32_t* free_slots, int64_t count,
                       const int64_t* ids, const int64_t* next_g, int64_t base, int64_t* slot_id,
                       int64_t* slot_next, int64_t* in_ids) {
  int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  int64_t g = base + in_positions[k];
  int32_t s = free_slots[k];
  slot_id[s] = ids[g];
  slot_next[s] = next_g[g];
  in_ids[k] = ids[g];
}

template <typename T>
T* Raw(thrust::device_vector<T>& v) { return thrust::raw_pointer_cast(v.data()); }
template <typename T>
const T* Raw(const thrust::device_vector<T>& v) { return thrust::raw_pointer_cast(v.data()); }

void Check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw thrust::system_error(err, thrust::cuda_category(), what);
}

template <typename T>
void AppendFromDevice(const thrust::device_vector<T>& d, int64_t count, std::vector<T>* out) {
  size_t old = out->size();
  out->resize(old + static_cast<size_t>(count));
  if (count > 0) {
    Check(cudaMemcpy(out->data() + old, Raw(d), static_cast<size_t>(count) * sizeof(T),
                     cudaMemcpyDeviceToHost), "copy changeset to host");
  }
}

GpuPlanCode Plan(const BeladyGpuInput& in, BeladyGpuOutput* out, std::string* error) {
  const int64_t S = in.num_batches;
  const int64_t K = in.capacity;
  const int64_t T = S > 0 ? in.batch_offsets[S] : 0;
  int64_t max_id = 0;
  for (int64_t t = 0; t < T; ++t) max_id = std::max(max_id, in.ids[t]);
  for (int64_t s = 0; s < K; ++s) max_id = std::max(max_id, in.initial_slots[s]);
  int id_bits = 1;
  while (id_bits < 63 && (int64_t{1} << id_bits) <= max_id) ++id_bits;
  int nu_bits = 1;
  while ((int64_t{1} << nu_bits) <= S) ++nu_bits;
  if (id_bits + 1 + nu_bits > 64) {
    *error = "node ids too large to pack (id bits + next-use bits > 63)";
    return GpuPlanCode::kUnsupported;
  }
  int64_t max_batch = 0;
  for (int64_t i = 0; i < S; ++i) max_batch = std::max(max_batch, in.batch_offsets[i + 1] - in.batch_offsets[i]);

  thrust::device_vector<int64_t> offsets(in.batch_offsets, in.batch_offsets + S + 1);
  thrust::device_vector<int64_t> ids(in.ids, in.ids + T);
  thrust::device_vector<int64_t> next_g(static_cast<size_t>(T), -1);
  thrust::device_vector<int64_t> slot_id(in.initial_slots, in.initial_slots + K);
  thrust::device_vector<int64_t> slot_next(static_cast<size_t>(K), -1);
  {
    // 1. next access of every access: stable sort of (id, position).
    thrust::device_vector<int64_t> sorted_ids = ids;
    thrust::device_vector<int64_t> sorted_g(static_cast<size_t>(T));
    thrust::sequence(sorted_g.begin(), sorted_g.end());
    thrust::stable_sort_by_key(sorted_ids.begin(), sorted_ids.end(), sorted_g.begin());
    thrust::device_vector<unsigned long long> duplicate(1, ~0ull);
    if (T > 0) {
      LinkNextAccess<<<Blocks(T), kThreads>>>(Raw(sorted_ids), Raw(sorted_g), T, Raw(offsets), S,
                                               Raw(next_g), Raw(duplicate));
      Check(cudaGetLastError(), "LinkNextAccess");
    }
    unsigned long long dup = duplicate[0];
    if (dup != ~0ull) {
      int64_t g = static_cast<int64_t>(dup);
      int64_t b = 0;
      while (in.batch_offsets[b + 1] <= g) ++b;
      *error = "node " + std::to_string(in.ids[g]) + " appears twice in batch " + std::to_string(b) +
               "; batch ids must be unique";
      return GpuPlanCode::kInvalidArgument;
    }
    // 2. C0: each slot's first access.
    if (K > 0) {
      thrust::device_vector<int64_t> lower(static_cast<size_t>(K));
      thrust::lower_bound(sorted_ids.begin(), sorted_ids.end(), slot_id.begin(), slot_id.end(),
                          lower.begin());
      InitSlots<<<Blocks(K), kThreads>>>(Raw(slot_id), K, Raw(sorted_ids), Raw(sorted_g), T,
                                         Raw(lower), Raw(slot_next));
      Check(cudaGetLastError(), "InitSlots");
    }
  }
  int64_t occupied = 0;
  for (int64_t s = 0; s < K; ++s) occupied += in.initial_slots[s] >= 0 ? 1 : 0;

  thrust::device_vector<int32_t> hit_slot(static_cast<size_t>(max_batch));
  thrust::device_vector<uint64_t> keys(static_cast<size_t>(K + max_batch));
  thrust::device_vector<uint64_t> sorted_keys(static_cast<size_t>(K + max_batch));
  thrust::device_vector<int32_t> out_slots(static_cast<size_t>(std::max<int64_t>(K, 1)));
  thrust::device_vector<int64_t> out_ids(static_cast<size_t>(std::max<int64_t>(K, 1)));
  thrust::device_vector<int32_t> in_positions(static_cast<size_t>(std::max<int64_t>(max_batch, 1)));
  thrust::device_vector<int32_t> free_slots(static_cast<size_t>(std::max<int64_t>(K, 1)));
  thrust::device_vector<int64_t> in_ids(static_cast<size_t>(std::max<int64_t>(max_batch, 1)));

  out->num_misses.assign(static_cast<size_t>(S), 0);
  out->in_offsets.assign(1, 0);
  out->out_offsets.assign(1, 0);
  for (int64_t i = 0; i < S; ++i) {
    const int64_t base = in.batch_offsets[i];
    const int64_t n = in.batch_offsets[i + 1] - base;
    int64_t num_out = 0, num_in = 0;
    if (n > 0) {
      thrust::fill(hit_slot.begin(), hit_slot.begin() + n, -1);
      if (K > 0) {
        MarkHits<<<Blocks(K), kThreads>>>(Raw(slot_id), Raw(slot_next), K, base, n, Raw(next_g),
                                          Raw(hit_slot));
        Check(cudaGetLastError(), "MarkHits");
      }
      const int64_t misses = thrust::count_if(thrust::device, hit_slot.begin(), hit_slot.begin() + n, IsMiss());
      out->num_misses[static_cast<size_t>(i)] = misses;
      const int64_t excess = occupied + misses - K;
      uint64_t threshold = 0;
      const uint64_t* miss_keys = nullptr;
      if (excess > 0) {
        BuildKeys<<<Blocks(K + n), kThreads>>>(Raw(slot_id), Raw(slot_next), K, Raw(ids), Raw(next_g),
                                               Raw(hit_slot), base, n, Raw(offsets), S, id_bits,
                                               Raw(keys));
        Check(cudaGetLastError(), "BuildKeys");
        thrust::copy(keys.begin(), keys.begin() + K + n, sorted_keys.begin());
        thrust::sort(sorted_keys.begin(), sorted_keys.begin() + K + n);
        threshold = sorted_keys[static_cast<size_t>(K + n - excess)];
        miss_keys = Raw(keys) + K;
        if (K > 0) {
          auto end = thrust::copy_if(thrust::device, thrust::counting_iterator<int32_t>(0),
                                     thrust::counting_iterator<int32_t>(static_cast<int32_t>(K)),
                                     out_slots.begin(), IsEvicted{Raw(keys), threshold});
          num_out = end - out_slots.begin();
          if (num_out > 0) {
            Evict<<<Blocks(num_out), kThreads>>>(Raw(out_slots), num_out, Raw(slot_id), Raw(out_ids));
            Check(cudaGetLastError(), "Evict");
          }
        }
      }
      auto in_end = thrust::copy_if(thrust::device, thrust::counting_iterator<int32_t>(0),
                                    thrust::counting_iterator<int32_t>(static_cast<int32_t>(n)),
                                    in_positions.begin(), IsInserted{Raw(hit_slot), miss_keys, threshold});
      num_in = in_end - in_positions.begin();
      if (num_in > 0) {
        thrust::copy_if(thrust::device, thrust::counting_iterator<int32_t>(0),
                        thrust::counting_iterator<int32_t>(static_cast<int32_t>(K)), free_slots.begin(),
                        IsFree{Raw(slot_id)});
        Insert<<<Blocks(num_in), kThreads>>>(Raw(in_positions), Raw(free_slots), num_in, Raw(ids),
                                             Raw(next_g), base, Raw(slot_id), Raw(slot_next), Raw(in_ids));
        Check(cudaGetLastError(), "Insert");
      }
      occupied += num_in - num_out;
    }
    AppendFromDevice(in_ids, num_in, &out->in_ids);
    AppendFromDevice(in_positions, num_in, &out->in_positions);
    AppendFromDevice(free_slots, num_in, &out->in_slots);
    AppendFromDevice(out_ids, num_out, &out->out_ids);
    AppendFromDevice(out_slots, num_out, &out->out_slots);
    out->in_offsets.push_back(out->in_offsets.back() + num_in);
    out->out_offsets.push_back(out->out_offsets.back() + num_out);
  }
  out->final_slots.resize(static_cast<size_t>(K));
  if (K > 0) {
    Check(cudaMemcpy(out->final_slots.data(), Raw(slot_id), static_cast<size_t>(K) * sizeof(int64_t),
                     cudaMemcpyDeviceToHost), "copy final state");
  }
  return GpuPlanCode::kOk;
}

}  // namespace

GpuPlanCode PlanBeladyGpu(const BeladyGpuInput& input, BeladyGpuOutput* output,
                          std::string* error_message) {
  std::string scratch;
  std::string* error = error_message != nullptr ? error_message : &scratch;
  if (CudaDeviceCount() == 0) {
    *error = "no CUDA device: " + DescribeDevice();
    return GpuPlanCode::kUnsupported;
  }
  try {
    return Plan(input, output, error);
  } catch (const thrust::system_error& e) {
    *error = std::string("CUDA: ") + e.what();
  } catch (const std::bad_alloc& e) {
    *error = std::string("device memory exhausted: ") + e.what();
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return GpuPlanCode::kError;
}

}  // namespace seer::kernels
