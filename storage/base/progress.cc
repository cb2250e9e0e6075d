#include "storage/base/progress.h"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace seer {
namespace {
double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string FormatCount(double v) {
  char buf[64];
  if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e4) std::snprintf(buf, sizeof buf, "%.1fK", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string FormatDuration(double s) {
  char buf[64];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) % 3600) / 60);
  return buf;
}
}  // namespace

ProgressReporter::ProgressReporter(std::string label, int64_t total, std::string unit,
                                   bool enabled, double plain_interval_s)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(enabled),
      tty_(::isatty(STDERR_FILENO) == 1),
      plain_interval_s_(plain_interval_s),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

ProgressReporter::~ProgressReporter() = default;

void ProgressReporter::Add(int64_t units) {
  done_.fetch_add(units, std::memory_order_relaxed);
  MaybePrint(false);
}

void ProgressReporter::Set(int64_t units_done) {
  done_.store(units_done, std::memory_order_relaxed);
  MaybePrint(false);
}

double ProgressReporter::ElapsedSeconds() const {
  return Seconds(std::chrono::steady_clock::now() - start_);
}

void ProgressReporter::MaybePrint(bool force) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  double since = Seconds(now - last_print_);
  double interval = tty_ ? 0.1 : plain_interval_s_;
  if (!force && since < interval) return;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  if (finished_) return;
  last_print_ = now;
  double elapsed = Seconds(now - start_);
  double done = static_cast<double>(done_.load(std::memory_order_relaxed));
  double rate = elapsed > 0 ? done / elapsed : 0;
  std::ostringstream line;
  line << label_ << ": " << FormatCount(done);
  if (total_ > 0) {
    line << "/" << FormatCount(static_cast<double>(total_)) << " " << unit_;
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.1f%%)", 100.0 * done / static_cast<double>(total_));
    line << pct;
  } else {
    line << " " << unit_;
  }
  line << ", " << FormatCount(rate) << " " << unit_ << "/s";
  if (total_ > 0 && rate > 0 && done < total_) {
    line << ", ETA " << FormatDuration((static_cast<double>(total_) - done) / rate);
  }
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line.str().c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.str().c_str());
  }
  std::fflush(stderr);
}

void ProgressReporter::Finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  double elapsed = ElapsedSeconds();
  double done = static_cast<double>(done_.load());
  if (tty_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s: %s %s in %.1f s (%s %s/s)\n", label_.c_str(),
               FormatCount(done).c_str(), unit_.c_str(), elapsed,
               FormatCount(elapsed > 0 ? done / elapsed : 0).c_str(), unit_.c_str());
  std::fflush(stderr);
}

}  // namespace seer
