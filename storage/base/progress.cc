#include "storage/base/progress.h"

#include "storage/base/duration.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace seer {
namespace {
double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string FormatCount(double v) {
  if (v >= 1e9) return fmt::format("{:.2f}G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.1f}K", v / 1e3);
  return fmt::format("{:.0f}", v);
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
  std::string line = label_ + ": " + FormatCount(done);
  if (total_ > 0) {
    line += fmt::format("/{} {} ({:.1f}%)", FormatCount(static_cast<double>(total_)), unit_,
                        100.0 * done / static_cast<double>(total_));
  } else {
    line += " " + unit_;
  }
  line += ", " + FormatCount(rate) + " " + unit_ + "/s";
  if (total_ > 0 && rate > 0 && done < total_) {
    line += ", ETA " + FormatDuration((static_cast<double>(total_) - done) / rate);
  }
  if (tty_) {
    fmt::print(stderr, "\r\033[K{}", line);
  } else {
    fmt::print(stderr, "{}\n", line);
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
  fmt::print(stderr, "{}{}: {} {} in {:.1f} s ({} {}/s)\n", tty_ ? "\r\033[K" : "", label_,
             FormatCount(done), unit_, elapsed, FormatCount(elapsed > 0 ? done / elapsed : 0),
             unit_);
  std::fflush(stderr);
}

}  // namespace seer
