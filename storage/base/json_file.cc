#include "storage/base/json_file.h"

#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"

namespace seer {
namespace {

const char* TypeName(const Json& value) { return value.type_name(); }

Status FieldError(const std::string& path, const std::string& key, const std::string& what) {
  return Corrupt(path + ": field '" + key + "' " + what);
}

// The member `key` of `object`, or the Status saying why there is none.
Result<const Json*> Member(const Json& object, const std::string& key, const std::string& path) {
  if (!object.is_object()) {
    return Corrupt(path + ": expected a JSON object holding '" + key + "', found " +
                   TypeName(object));
  }
  auto it = object.find(key);
  if (it == object.end()) return FieldError(path, key, "is missing");
  return &*it;
}

Status WrongType(const std::string& path, const std::string& key, const char* wanted,
                 const Json& found) {
  return FieldError(path, key,
                    std::string("must be ") + wanted + ", found " + TypeName(found) + " " +
                        found.dump());
}

}  // namespace

Result<Json> ParseJson(const std::string& text, const std::string& path_for_errors) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte is 1-based: the byte at which the parser stopped.
    return Corrupt(path_for_errors + ": invalid JSON at byte " + std::to_string(e.byte) +
                   ": " + e.what());
  } catch (const Json::exception& e) {
    // Not a syntax error but still the file's fault, e.g. a number that overflows a
    // double ("1e400": out_of_range.406), which used to end the process uncaught.
    return Corrupt(path_for_errors + ": invalid JSON: " + e.what());
  }
}

Result<Json> ReadJsonFile(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  return ParseJson(text, path);
}

Status WriteJsonFileAtomically(const std::string& path, const Json& value) {
  return WriteFileAtomically(path, value.dump(2) + "\n");
}

Result<const Json*> JsonMember(const Json& object, const std::string& key, const std::string& path) {
  return Member(object, key, path);
}

Result<int64_t> JsonInt(const Json& object, const std::string& key, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* member, Member(object, key, path));
  if (member->is_number_integer()) {
    if (member->is_number_unsigned() &&
        member->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return FieldError(path, key, "is out of the int64 range: " + member->dump());
    }
    return member->get<int64_t>();
  }
  return WrongType(path, key, "an integer", *member);
}

Result<double> JsonNumber(const Json& object, const std::string& key, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* member, Member(object, key, path));
  if (member->is_number()) return member->get<double>();
  return WrongType(path, key, "a number", *member);
}

Result<std::string> JsonString(const Json& object, const std::string& key, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* member, Member(object, key, path));
  if (member->is_string()) return member->get<std::string>();
  return WrongType(path, key, "a string", *member);
}

Result<bool> JsonBool(const Json& object, const std::string& key, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* member, Member(object, key, path));
  if (member->is_boolean()) return member->get<bool>();
  return WrongType(path, key, "true or false", *member);
}

Result<std::vector<int64_t>> JsonIntArray(const Json& object, const std::string& key,
                                          const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* member, Member(object, key, path));
  if (!member->is_array()) return WrongType(path, key, "an array of integers", *member);
  std::vector<int64_t> out;
  out.reserve(member->size());
  for (size_t i = 0; i < member->size(); ++i) {
    const Json& item = (*member)[i];
    if (!item.is_number_integer() ||
        (item.is_number_unsigned() && item.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
      return FieldError(path, key, "element " + std::to_string(i) + " must be an integer, found " +
                                       item.dump());
    }
    out.push_back(item.get<int64_t>());
  }
  return out;
}

Result<int64_t> JsonOptionalInt(const Json& object, const std::string& key, int64_t fallback,
                                const std::string& path) {
  if (object.is_object() && !object.contains(key)) return fallback;
  return JsonInt(object, key, path);
}

Result<std::string> JsonOptionalString(const Json& object, const std::string& key,
                                       const std::string& fallback, const std::string& path) {
  if (object.is_object() && !object.contains(key)) return fallback;
  return JsonString(object, key, path);
}

}  // namespace seer
