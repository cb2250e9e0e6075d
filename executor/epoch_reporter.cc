#include "executor/epoch_reporter.h"

#include <algorithm>

#include <unistd.h>

#include <cerrno>
#include <cmath>

#include <fmt/format.h>

#include "storage/base/byte_size.h"
#include "storage/base/duration.h"

namespace seer {
namespace {

// "{split}_mrr", "{split}_hits@1", "@10", "@50" (OGB's names).
void AddLinkMetricsJson(const std::string& split, const LinkMetrics& m, Json* j) {
  (*j)[split + "_mrr"] = m.mrr();
  for (int64_t k : {1, 10, 50}) (*j)[split + "_hits@" + std::to_string(k)] = m.hits(k);
  (*j)[split + "_pairs"] = m.pairs;
}

std::string LinkMetricsText(const std::string& split, const LinkMetrics& m) {
  return fmt::format("{} MRR {:.4f} (hits@1/10/50 {:.4f}/{:.4f}/{:.4f})", split, m.mrr(), m.hits(1), m.hits(10),
                     m.hits(50));
}

}  // namespace

Json EpochReport::ToJsonObject() const {
  Json j = {{"type", "epoch"},
            {"epoch", epoch + 1},  // 1-based, as on stderr
            {"batches", batches},
            {"seeds", seeds},
            {"train_loss", train_loss},
            {"train_accuracy", train_accuracy}};
  if (link) {
    j.erase("train_accuracy");
    j["train_pair_accuracy"] = train_accuracy;
    if (valid_link.pairs > 0) AddLinkMetricsJson("valid", valid_link, &j);
    if (test_link.pairs > 0) AddLinkMetricsJson("test", test_link, &j);
  } else {
    if (valid_accuracy >= 0) j["valid_accuracy"] = valid_accuracy;
    if (test_accuracy >= 0) j["test_accuracy"] = test_accuracy;
  }
  j["seconds"] = {{"epoch", seconds},          {"inspect", inspect_seconds},
                  {"plan", plan_seconds},      {"gather", gather_seconds},
                  {"io_wait", io_wait_seconds}, {"cache_update", cache_update_seconds},
                  {"transfer", transfer_seconds}, {"compute", compute_seconds},
                  {"stall", stall_seconds},    {"eval", eval_seconds},
                  {"finite_check", gather.check_seconds}};  // part of gather
  j["samples_per_second"] = seconds > 0 ? seeds / seconds : 0.0;
  j["fcache_accesses"] = gather.rows;
  j["fcache_hits"] = gather.hits;
  j["fcache_hit_ratio"] = gather.hit_ratio();
  j["fcache_fill_rows"] = gather.fill_rows;
  j["ncache_lookups"] = ncache_lookups;
  j["ncache_hits"] = ncache_hits;
  j["ncache_hit_ratio"] = ncache_lookups ? static_cast<double>(ncache_hits) / ncache_lookups : 0.0;
  j["feature_ssd_bytes"] = gather.reads.device_bytes + gather.fill_reads.device_bytes;
  j["feature_ssd_reads"] = gather.reads.device_reads + gather.fill_reads.device_reads;
  j["feature_block_reads"] = gather.block_reads;  // as `seer stats` counts blocks_read
  j["feature_block_bytes"] = gather.block_bytes;
  j["feature_block_admits"] = gather.block_admits;
  j["topology_ssd_bytes"] = topology_reads.device_bytes;
  j["topology_ssd_reads"] = topology_reads.device_reads;
  return j;
}

std::string EpochReport::ToJson() const { return ToJsonObject().dump(); }

std::string EpochReport::TimeBreakdown() const {
  // The epoch's wall time is the training thread's: compute, waiting for the pipeline
  // (stall) and evaluation, plus the rest (checkpoints, device copies, bookkeeping). The
  // pipeline threads sample, plan and gather the next batches meanwhile: their times
  // overlap the epoch and are not part of the sum.
  const double other = std::max(0.0, seconds - compute_seconds - stall_seconds - eval_seconds);
  return fmt::format(
      "{:.2f} s = compute {:.2f} + waiting for batches {:.2f} + eval {:.2f} + other {:.2f} (checkpoints, device "
      "copies, bookkeeping); overlapped, not in the sum: inspect {:.2f} s, plan {:.2f} s, gather {:.2f} s (I/O wait "
      "{:.2f} s, cache update {:.2f} s), transfer {:.2f} s (batch conversion; with --device-cache also the device "
      "copies in other)",
      seconds, compute_seconds, stall_seconds, eval_seconds, other, inspect_seconds, plan_seconds, gather_seconds,
      io_wait_seconds, cache_update_seconds, transfer_seconds);
}

std::string EpochReport::Summary() const {
  // Only what was evaluated this epoch (the test split only with --test-every-epoch).
  std::string acc = valid_accuracy >= 0 ? fmt::format(", valid acc {:.4f}", valid_accuracy) : "";
  if (test_accuracy >= 0) acc += fmt::format(", test acc {:.4f}", test_accuracy);
  if (link) {
    acc = valid_link.pairs > 0 ? ", " + LinkMetricsText("valid", valid_link) : "";
    if (test_link.pairs > 0) acc += ", " + LinkMetricsText("test", test_link);
  }
  return fmt::format(
      "epoch {}: {:.2f} s, {} batches, {:.0f} samples/s, train loss {:.4f}, train {} {:.4f}{}\n"
      "  time: {}\n"
      "  feature cache hit {:.1f}% ({}/{}, fill {} rows), neighbor cache hit {:.1f}%, "
      "SSD: features {} in {} reads, topology {} in {} reads",
      epoch + 1, seconds, batches, seconds > 0 ? seeds / seconds : 0.0, train_loss, link ? "pair acc" : "acc",
      train_accuracy, acc,
      TimeBreakdown(), 100 * gather.hit_ratio(), gather.hits, gather.rows,
      gather.fill_rows, ncache_lookups ? 100.0 * ncache_hits / ncache_lookups : 0.0,
      FormatBytes(gather.reads.device_bytes + gather.fill_reads.device_bytes),
      gather.reads.device_reads + gather.fill_reads.device_reads, FormatBytes(topology_reads.device_bytes),
      topology_reads.device_reads);
}

Json RunDescription::ToJsonObject() const {
  Json j = {{"type", "start"},
            {"budget_bytes", split.budget_bytes},
            {"table_bytes", split.table_bytes},
            {"staging_bytes", split.staging_bytes},
            {"trace_bytes", split.trace_bytes},
            {"inspector_bytes", split.inspector_bytes},
            {"ncache_bytes", split.ncache_bytes},
            {"fcache_bytes", split.fcache_bytes},
            {"fcache_rows", split.fcache_rows},
            {"policy", policy},
            {"model", model},
            {"task", task},
            {"overlap", overlap},
            {"pipeline", pipeline},
            {"batches_per_superbatch", batches_per_superbatch},
            {"io", io},
            {"direct", direct}};
  if (ncache_share >= 0) j["ncache_share"] = ncache_share;
  if (!split.superbatch_reason.empty()) j["superbatch_reason"] = split.superbatch_reason;
  if (!split.ncache_source.empty()) j["ncache_source"] = split.ncache_source;
  if (split.ncache_edge_fraction >= 0) j["ncache_edge_fraction"] = split.ncache_edge_fraction;
  if (!split.warnings.empty()) j["warnings"] = split.warnings;
  return j;
}

Json RunOutcome::ToJsonObject() const {
  Json j = {{"type", "final"},
            {link ? "best_valid_mrr" : "best_valid_accuracy", best_valid_accuracy},
            {"best_epoch", best_epoch < 0 ? best_epoch : best_epoch + 1},  // 1-based; -1 = none
            {"peak_rss_bytes", peak_rss_bytes},
            {"seconds", seconds},
            {"stopped_early", stopped_early}};
  if (link) {
    if (test_link.pairs > 0) AddLinkMetricsJson("test", test_link, &j);
  } else {
    j["test_accuracy"] = test_accuracy;
  }
  return j;
}

Result<std::unique_ptr<EpochReporter>> EpochReporter::Open(const Options& options, const RunDescription& run) {
  std::FILE* metrics = nullptr;
  OutputLock lock;
  if (!options.metrics_path.empty()) {
    // Locked before "w" truncates: a second run on the same file is refused, not mixed in.
    SEER_ASSIGN_OR_RETURN(lock, OutputLock::Acquire(options.metrics_path, "seer train --metrics " + options.metrics_path));
    metrics = std::fopen(options.metrics_path.c_str(), options.append ? "a" : "w");
    if (metrics == nullptr) return ErrnoStatus(errno, "open metrics file", options.metrics_path);
  }
  std::unique_ptr<EpochReporter> reporter(new EpochReporter(options, metrics));
  reporter->metrics_lock_ = std::move(lock);
  SEER_RETURN_IF_ERROR(reporter->WriteLine(run.ToJsonObject()));
  return reporter;
}

EpochReporter::EpochReporter(const Options& options, std::FILE* metrics)
    : options_(options), metrics_(metrics), tty_(isatty(STDERR_FILENO) == 1) {
  options_.show_progress = options.show_progress && !options.quiet;
  StartProgress(0);
}

EpochReporter::~EpochReporter() {
  if (metrics_ != nullptr) std::fclose(metrics_);
}

Status EpochReporter::WriteLine(const Json& line) {
  if (metrics_ == nullptr) return Status::Ok();
  const std::string text = line.dump() + "\n";
  if (std::fwrite(text.data(), 1, text.size(), metrics_) != text.size() || std::fflush(metrics_) != 0) {
    return ErrnoStatus(errno, "write metrics line", options_.metrics_path);
  }
  return Status::Ok();
}

void EpochReporter::Say(const std::string& line) {
  if (options_.quiet) return;
  BreakProgressLine();
  fmt::print(stderr, "seer train: {}\n", line);
}

void EpochReporter::SaySplit(const MemoryBudgetSplit& split) {
  Say(split.ToString());
  for (const std::string& warning : split.warnings) Say("WARNING: " + warning);
}

void EpochReporter::StartProgress(int64_t total_batches) {
  total_batches_ = total_batches;
  progress_start_ = progress_last_ = Clock::now();
}

void EpochReporter::Progress(const ProgressPoint& p) {
  if (!options_.show_progress) return;
  const auto now = Clock::now();
  const double since_last = std::chrono::duration<double>(now - progress_last_).count();
  if (tty_ ? since_last < 0.1 : since_last < options_.progress_interval_s) return;
  progress_last_ = now;
  const double elapsed = std::chrono::duration<double>(now - progress_start_).count();
  const double rate = elapsed > 0 ? p.done_seeds / elapsed : 0;
  const double eta = p.done_batches > 0 ? elapsed * (total_batches_ - p.done_batches) / p.done_batches : -1;
  const std::string line = fmt::format(
      "epoch {}/{} sb {}/{} batch {}/{} | {:.0f} samples/s | ETA {} | loss {:.4f} | fcache hit {:.1f}%",
      p.epoch + 1, p.epochs, p.superbatch + 1, p.superbatches, p.batch + 1, p.batches_per_epoch, rate,
      FormatDuration(eta), p.loss, 100 * p.hit_ratio);
  if (tty_) {
    fmt::print(stderr, "\r\033[K{}", line);
    progress_dirty_ = true;
  } else {
    fmt::print(stderr, "{}\n", line);
  }
  std::fflush(stderr);
}

void EpochReporter::BreakProgressLine() {
  if (progress_dirty_) fmt::print(stderr, "\n");
  progress_dirty_ = false;
}

Status EpochReporter::EndEpoch(const EpochReport& report) {
  BreakProgressLine();
  if (!options_.quiet) fmt::print(stderr, "{}\n", report.Summary());
  return WriteLine(report.ToJsonObject());
}

Status EpochReporter::Finish(const RunOutcome& outcome) {
  BreakProgressLine();
  SEER_RETURN_IF_ERROR(WriteLine(outcome.ToJsonObject()));
  if (metrics_ != nullptr) {
    const int closed = std::fclose(metrics_);
    metrics_ = nullptr;
    if (closed != 0) return ErrnoStatus(errno, "close metrics file", options_.metrics_path);
  }
  if (options_.quiet) return Status::Ok();
  if (outcome.trained && !outcome.stopped_early && outcome.link) {
    const std::string test =
        outcome.test_link.pairs > 0 ? LinkMetricsText("test", outcome.test_link) : "no test edges (seer split-edges)";
    if (outcome.best_epoch >= 0) {
      fmt::print(stderr, "seer train: best valid MRR {:.4f} (epoch {}), {} (best-validation model)\n",
                 outcome.best_valid_accuracy, outcome.best_epoch + 1, test);
    } else {
      fmt::print(stderr, "seer train: not validated (--eval-every 0 or no validation edges), {} (final model)\n", test);
    }
  } else if (outcome.trained && !outcome.stopped_early) {
    const std::string test =
        outcome.test_accuracy >= 0 ? fmt::format("test acc {:.4f}", outcome.test_accuracy) : "no labelled test node";
    if (outcome.best_epoch >= 0) {
      fmt::print(stderr, "seer train: best valid acc {:.4f} (epoch {}), {} (best-validation model)\n",
                 outcome.best_valid_accuracy, outcome.best_epoch + 1, test);
    } else {
      fmt::print(stderr, "seer train: not validated (--eval-every 0 or no labelled validation node), {} (final model)\n",
                 test);
    }
  }
  fmt::print(stderr, "seer train: done in {:.1f} s, peak RSS {} (budget {})\n", outcome.seconds,
             FormatBytes(outcome.peak_rss_bytes), FormatBytes(outcome.budget_bytes));
  return Status::Ok();
}

}  // namespace seer
