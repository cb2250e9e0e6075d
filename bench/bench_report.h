// What the bench binaries share: their main(), command line (CLI11) and JSON reports.
// A report is one line of JSON whose keys keep the order they were written in
// (nlohmann::ordered_json), with rates and times rounded to the decimals the tables
// print; it is written atomically. Header-only; no shared state.
#pragma once

#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "storage/base/atomic_file.h"
#include "storage/base/status.h"

namespace seer::bench {

using ReportJson = nlohmann::ordered_json;

// Parses the command line; returns the exit code when the bench should stop now
// (--help printed, or a bad flag reported), nothing when it should run.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return std::nullopt;
}

inline double Rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Writes `report` as one line (plus a newline) to `path`, atomically.
inline Status WriteReport(const std::string& path, const ReportJson& report) {
  return WriteFileAtomically(path, report.dump() + "\n");
}

// A bench's main(): parse the flags into a Config, run it, and turn a failure into
// "<error_prefix><message>" on stderr and exit code 1.
// parse_flags(argc, argv, Config*) -> std::optional<int>; run(Config) -> Status.
template <typename Config, typename ParseFlags, typename RunBench>
int BenchMain(int argc, char** argv, ParseFlags parse_flags, RunBench run,
              const std::string& error_prefix) {
  Config config;
  if (std::optional<int> exit_code = parse_flags(argc, argv, &config)) return *exit_code;
  Status st = run(config);
  if (!st.ok()) {
    fmt::print(stderr, "{}{}\n", error_prefix, st.message());
    return 1;
  }
  return 0;
}

}  // namespace seer::bench
