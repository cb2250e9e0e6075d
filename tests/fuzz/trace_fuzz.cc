// Fuzz target: the trace readers (inspector/trace_store.h, inspector/trace_stream.h).
// The first input byte picks the reader; the rest is the file:
//   0  ParseTrace: a whole superbatch trace file (.sbt), as `seer stats` reads them
//   1  ParseTraceRecord: one batch record, as the gather stage reads them
//   2  TraceDirectoryReader::Open: trace.json of a `seer sample --out` directory
// An accepted trace must serialize back to the same bytes.
#include "inspector/trace_directory.h"
#include "inspector/trace_format.h"
#include "inspector/trace_stream.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1 << 16)) return 0;
  const uint8_t mode = data[0] % 3;
  // Copied into an 8-byte aligned buffer, as the readers get it from their I/O buffers.
  std::vector<int64_t> words((size - 1 + 7) / 8 + 1);
  std::memcpy(words.data(), data + 1, size - 1);
  const char* bytes = reinterpret_cast<const char*>(words.data());
  const int64_t n = static_cast<int64_t>(size - 1);
  if (mode == 0) {
    auto trace = seer::ParseTrace(bytes, n, "trace.sbt");
    if (!trace.ok()) {
      seer::fuzz::CheckRefusal(trace.status(), "trace.sbt");
      return 0;
    }
    const std::string again = seer::SerializeTrace(*trace);
    if (static_cast<int64_t>(again.size()) != n || std::memcmp(again.data(), bytes, again.size()) != 0) {
      // Padding bytes and the header's reserved words may differ; the parse must agree.
      auto reparsed = seer::ParseTrace(again.data(), static_cast<int64_t>(again.size()), "again.sbt");
      if (!reparsed.ok()) std::abort();
    }
  } else if (mode == 1) {
    seer::BatchTrace batch;
    int64_t record_bytes = 0;
    seer::Status s = seer::ParseTraceRecord(bytes, n, 64, "trace.sbt", &batch, &record_bytes);
    if (!s.ok()) {
      seer::fuzz::CheckRefusal(s, "trace.sbt");
      return 0;
    }
    if (record_bytes <= 0 || record_bytes > n || record_bytes % 8 != 0) std::abort();
    if (seer::TraceRecordBytes(batch) != record_bytes) std::abort();
  } else {
    seer::fuzz::WriteInput(data + 1, size - 1, "trace.json");
    auto reader = seer::TraceDirectoryReader::Open(seer::fuzz::ScratchDir());
    if (!reader.ok()) {
      seer::fuzz::CheckRefusal(reader.status(), "trace.json");
      return 0;
    }
    for (int64_t i = 0; i < reader->num_superbatches(); ++i) (void)reader->info(i);
  }
  return 0;
}
