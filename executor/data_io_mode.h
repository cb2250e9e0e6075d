// DataIoMode: how a run reads indices.bin and features.bin — the values of the CLI's
// `--io` (train and predict), one field in TrainOptions / PredictOptions / DataIoOptions:
//   auto | uring | pread   the direct reader (storage/io/direct_reader.h) in that IoMode:
//                          O_DIRECT unless --buffered (the separate `direct_io` field)
//   mmap                   a memory mapping through the page cache (storage/io/mmap_reader.h,
//                          MADV_RANDOM); --buffered does not apply
// Header-only, plain values, thread-safe.
#pragma once

#include "storage/base/name_table.h"
#include "storage/io/block_reader.h"

namespace seer {

enum class DataIoMode { kAuto, kUring, kPread, kMmap };
inline constexpr NameValue<DataIoMode> kDataIoModeNames[] = {{"auto", DataIoMode::kAuto},
                                                             {"uring", DataIoMode::kUring},
                                                             {"pread", DataIoMode::kPread},
                                                             {"mmap", DataIoMode::kMmap}};

// The direct reader's mode for `mode` (kAuto for kMmap, which does not use it).
constexpr IoMode DirectReaderMode(DataIoMode mode) {
  switch (mode) {
    case DataIoMode::kUring:
      return IoMode::kUring;
    case DataIoMode::kPread:
      return IoMode::kPread;
    case DataIoMode::kAuto:
    case DataIoMode::kMmap:
      break;
  }
  return IoMode::kAuto;
}

}  // namespace seer
