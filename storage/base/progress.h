// ProgressReporter: progress lines for long work (rate, ETA) on stderr. On a TTY it
// redraws one line at most 10 times a second; otherwise it prints a plain line at most
// every `plain_interval_s` seconds. Finish() prints the final line. Thread-safe: Add()
// may be called from worker threads (atomic counter, one printer at a time).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace seer {

class ProgressReporter {
 public:
  // total: expected units (0 = unknown); unit: "edges", "nodes", "batches"...
  ProgressReporter(std::string label, int64_t total, std::string unit,
                   bool enabled = true, double plain_interval_s = 10.0);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void Add(int64_t units);
  void Set(int64_t units_done);
  // Prints the last line ("label: N unit in T s (R unit/s)") once.
  void Finish();
  double ElapsedSeconds() const;

 private:
  void MaybePrint(bool force);
  std::string label_;
  std::string unit_;
  int64_t total_;
  bool enabled_;
  bool tty_;
  double plain_interval_s_;
  std::atomic<int64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
  std::mutex mu_;
  bool finished_ = false;
};

}  // namespace seer
