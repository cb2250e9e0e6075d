// Names of enum values as users write them ("belady", "uring", "float16"). Each enum
// that appears in a flag, a config or a file keeps ONE constexpr table of {name, value}
// pairs next to its declaration; its Parse*/ *Name functions, the CLI's flag parsing and
// the CLI's --help text all read that table, so a new value is added in one place.
//
//   enum class IoMode { kAuto, kUring, kPread };
//   inline constexpr NameValue<IoMode> kIoModeNames[] = {
//       {"auto", IoMode::kAuto}, {"uring", IoMode::kUring}, {"pread", IoMode::kPread}};
//
// Header-only, pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "storage/base/status.h"

namespace seer {

template <typename Enum>
struct NameValue {
  const char* name;
  Enum value;
};

// The name of `value` in `table`, or "?" when the table does not list it.
template <typename Enum, size_t N>
constexpr const char* NameOf(const NameValue<Enum> (&table)[N], Enum value) {
  for (const NameValue<Enum>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

// "auto, uring or pread": the names in table order, for messages and --help
// (JoinNames(table, " | ", " | ") gives "auto | uring | pread").
template <typename Enum, size_t N>
std::string JoinNames(const NameValue<Enum> (&table)[N], std::string_view separator = ", ",
                      std::string_view last_separator = " or ") {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? last_separator : separator;
    out += table[i].name;
  }
  return out;
}

// The value named `text`; otherwise kInvalidArgument
// "unknown <what> '<text>' (expected a, b or c)".
template <typename Enum, size_t N>
Result<Enum> ParseName(const NameValue<Enum> (&table)[N], const std::string& text,
                       std::string_view what) {
  for (const NameValue<Enum>& entry : table) {
    if (text == entry.name) return entry.value;
  }
  return InvalidArgument("unknown " + std::string(what) + " '" + text + "' (expected " +
                         JoinNames(table) + ")");
}

}  // namespace seer
