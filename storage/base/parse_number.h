// Strict parsing of numbers written as text (flags, manifest strings, CSV fields, file
// names): the whole text must be the number, in base 10 (or 16 where asked), without
// spaces, signs on unsigned types or trailing characters; out of range is an error. One
// implementation (std::from_chars) instead of strtoll/stoi/stod at each call site, which
// accept leading spaces, partial numbers and locale-dependent forms.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "storage/base/status.h"

namespace seer {

// The value of `text`, or nullopt when `text` is not exactly one number of type T.
template <typename T>
std::optional<T> ParseNumber(std::string_view text, int base = 10) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  if (text.empty()) return std::nullopt;
  const bool plus = text.front() == '+';
  if (plus) text.remove_prefix(1);  // from_chars refuses '+'; one sign at most
  if (text.empty() || text.front() == '+' || (text.front() == '-' && (plus || std::is_unsigned_v<T>))) {
    return std::nullopt;
  }
  T value{};
  std::from_chars_result r;
  if constexpr (std::is_integral_v<T>) {
    r = std::from_chars(text.data(), text.data() + text.size(), value, base);
  } else {
    (void)base;
    r = std::from_chars(text.data(), text.data() + text.size(), value);
  }
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// `text` for an error message: whole up to `max_chars`, else its start and its length
// (a 10 MB bad token is not quoted whole).
inline std::string Excerpt(std::string_view text, size_t max_chars = 64) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(text.substr(0, max_chars)) + "... (" + std::to_string(text.size()) + " characters)";
}

// ParseNumber, or kInvalidArgument "bad WHAT 'TEXT': expected EXPECTED" (TEXT excerpted).
template <typename T>
Result<T> ParseNumberOr(std::string_view text, std::string_view what, std::string_view expected,
                        int base = 10) {
  if (std::optional<T> value = ParseNumber<T>(text, base)) return *value;
  return Status(StatusCode::kInvalidArgument,
                "bad " + std::string(what) + " '" + Excerpt(text) + "': expected " + std::string(expected));
}

}  // namespace seer
