// JSON for Seer's manifests, trace headers, checkpoints and metrics, through
// nlohmann::json (Debian: nlohmann-json3-dev). This header adds what Seer needs on top:
// parse errors and bad fields become a Status naming the file and the field, never a
// default value (a trace header's "10" where a number belongs is an error, not 0).
// Objects keep their keys sorted (nlohmann::json's default), so output is reproducible.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/base/status.h"

namespace seer {

using Json = nlohmann::json;

// Parses `text`; a syntax error is kCorrupt "PATH: invalid JSON at byte N: ...".
Result<Json> ParseJson(const std::string& text, const std::string& path_for_errors);
// Reads and parses a whole file (open/read errors name the path).
Result<Json> ReadJsonFile(const std::string& path);
// Writes `value` (pretty, 2-space indent, trailing newline) atomically: the old file,
// if any, stays intact until the new one is complete and synced.
Status WriteJsonFileAtomically(const std::string& path, const Json& value);

// Typed members of a JSON object. A missing member or one of the wrong type is kCorrupt
// "PATH: field 'KEY' ...". JsonInt accepts only integers (not 10.0, not "10");
// JsonNumber accepts integers and floating point. `object` that is not an object is
// reported the same way. The Optional variants return `fallback` when the key is absent
// (but still refuse a present member of the wrong type).
Result<int64_t> JsonInt(const Json& object, const std::string& key, const std::string& path);
Result<double> JsonNumber(const Json& object, const std::string& key, const std::string& path);
Result<std::string> JsonString(const Json& object, const std::string& key, const std::string& path);
Result<bool> JsonBool(const Json& object, const std::string& key, const std::string& path);
Result<std::vector<int64_t>> JsonIntArray(const Json& object, const std::string& key,
                                          const std::string& path);
Result<int64_t> JsonOptionalInt(const Json& object, const std::string& key, int64_t fallback,
                                const std::string& path);
Result<std::string> JsonOptionalString(const Json& object, const std::string& key,
                                       const std::string& fallback, const std::string& path);
// The member itself (any type); kCorrupt when missing.
Result<const Json*> JsonMember(const Json& object, const std::string& key, const std::string& path);

}  // namespace seer
