// A small JSON value + parser + writer, enough for Seer's manifests and metrics files.
// Numbers are kept as int64 when they are integers, else double. Parse errors name the
// path and the line:column. Not a general-purpose library: no \u surrogate pairs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/base/status.h"

namespace seer {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };
  JsonValue() = default;
  static JsonValue Null() { return JsonValue(); }
  static JsonValue Bool(bool b);
  static JsonValue Int(int64_t v);
  static JsonValue Double(double v);
  static JsonValue String(std::string s);
  static JsonValue Array();
  static JsonValue Object();

  Type type() const { return type_; }
  bool is_int() const { return type_ == Type::kInt; }
  bool is_number() const { return type_ == Type::kInt || type_ == Type::kDouble; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_bool() const { return type_ == Type::kBool; }

  int64_t as_int() const { return int_; }
  double as_double() const { return type_ == Type::kInt ? static_cast<double>(int_) : double_; }
  bool as_bool() const { return bool_; }
  const std::string& as_string() const { return string_; }
  const std::vector<JsonValue>& items() const { return array_; }
  const std::map<std::string, JsonValue>& members() const { return object_; }

  // Object access: nullptr when missing.
  const JsonValue* Find(const std::string& key) const;
  JsonValue& Set(const std::string& key, JsonValue value);  // object
  void Push(JsonValue value);                               // array

  // Compact (indent < 0) or pretty output; object keys in sorted order.
  std::string Dump(int indent = -1) const;
  static Result<JsonValue> Parse(const std::string& text, const std::string& path_for_errors);

 private:
  void DumpTo(std::string* out, int indent, int depth) const;
  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::map<std::string, JsonValue> object_;
};

}  // namespace seer
