// The flags the benches that sample a dataset share (sampler_bench, planner_bench,
// superbatch_memory_bench): the dataset, fan-outs, batch size, batches per superbatch,
// sampling threads and seed, and the JSON report's path, in one struct added to a
// CLI::App by one function. Each bench gives its own defaults (the constructor) and says
// which of the flags it offers (SamplingFlagSpec). Header-only; no shared state.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

namespace seer::bench {

struct SamplingFlags {
  SamplingFlags(std::string fanouts, int64_t batch_size, int64_t superbatch, int threads, uint64_t seed)
      : fanouts_text(std::move(fanouts)), batch_size(batch_size), superbatch(superbatch), threads(threads),
        seed(seed) {}

  std::string dataset_dir;
  std::string fanouts_text;  // "10,10,10": hop 1 first (inspector/sampler.h ParseFanouts)
  int64_t batch_size;        // seeds per batch
  int64_t superbatch;        // batches per superbatch (S)
  int threads;               // sampling threads
  uint64_t seed;
  std::string json_path;  // "" = no JSON report
};

// How a bench offers the flags: a null help leaves that flag out (its default stands).
struct SamplingFlagSpec {
  // true: DATASET is a required positional argument. false: an optional --dataset that
  // switches the bench from synthetic input to sampling (the sampling flags then say so).
  bool dataset_positional = true;
  const char* superbatch_flag = "--superbatch";
  const char* superbatch_help = "Batches per superbatch (S)";
  const char* threads_help = "Sampling threads";
  const char* seed_help = "Sampling seed";
};

inline void AddSamplingFlags(CLI::App& app, SamplingFlags* f, const SamplingFlagSpec& spec = {}) {
  // "Fan-outs", or "With --dataset: fan-outs" when sampling is optional.
  const auto help = [&](const std::string& what) {
    return spec.dataset_positional ? char(std::toupper(what[0])) + what.substr(1) : "With --dataset: " + what;
  };
  if (spec.dataset_positional) {
    app.add_option("dataset", f->dataset_dir, "Dataset directory")->required();
  } else {
    app.add_option("--dataset", f->dataset_dir, "Sample one superbatch of this dataset instead (timed)")
        ->capture_default_str();
  }
  app.add_option("--fanouts", f->fanouts_text, help("fan-outs"))->capture_default_str();
  app.add_option("--batch-size", f->batch_size, help("seeds per batch"))->capture_default_str();
  app.add_option(spec.superbatch_flag, f->superbatch, spec.superbatch_help)->capture_default_str();
  if (spec.threads_help != nullptr) app.add_option("--threads", f->threads, spec.threads_help)->capture_default_str();
  if (spec.seed_help != nullptr) app.add_option("--seed", f->seed, spec.seed_help)->capture_default_str();
  app.add_option("--json", f->json_path, "Write results as JSON to this file")->capture_default_str();
}

}  // namespace seer::bench
