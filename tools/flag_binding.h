// Binding `seer` flags straight to the fields of the library's option structs, so each
// default lives in one place (the struct) and --help prints it. Flags whose text is
// not the field's type (byte sizes "4G", fan-out lists "10,10,10", enum names) go
// through the library's own parser; a bad value is thrown as a StatusError whose
// message names the flag, and RunCli (cli_main.h) prints it as the one-line
// "seer <cmd>: error: ..." with exit code 1.
//
// Every Add* function keeps a pointer to `field`: the options struct must outlive the
// parse (the commands hold theirs in a shared_ptr captured by their main).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer::cli {

// `status` with the flag named in front, unless its message already names it.
Status FlagError(const Status& status, const std::string& flag);

// How --help shows a byte size: "4G", "512M", "64K" for exact multiples, else digits.
std::string ByteSizeText(int64_t bytes);

// A flag whose text `store` (std::string -> Status) checks and stores wherever it
// belongs. --help shows `default_text` as the default.
CLI::Option* AddTextOption(CLI::App* cmd, const std::string& flag,
                           std::function<Status(const std::string&)> store,
                           const std::string& default_text, const std::string& description);

// A flag whose text `parse` (std::string -> Result<T>) turns into *field.
template <typename T, typename Parse>
CLI::Option* AddParsedOption(CLI::App* cmd, const std::string& flag, T* field, Parse parse,
                             const std::string& default_text, const std::string& description) {
  auto store = [field, parse](const std::string& text) -> Status {
    Result<T> value = parse(text);
    if (!value.ok()) return value.status();
    *field = std::move(value).value();
    return Status::Ok();
  };
  return AddTextOption(cmd, flag, store, default_text, description);
}

// An enum flag: the names come from the enum's table and are listed in --help.
template <typename Enum, size_t N>
CLI::Option* AddEnumOption(CLI::App* cmd, const std::string& flag, Enum* field,
                           const NameValue<Enum> (&table)[N], const std::string& what,
                           const std::string& description) {
  auto parse = [&table, what](const std::string& text) { return ParseName(table, text, what); };
  return AddParsedOption(cmd, flag, field, parse, NameOf(table, *field),
                         description + ": " + JoinNames(table, " | ", " | "));
}

// The same with "auto" first, stored as std::nullopt.
template <typename Enum, size_t N>
CLI::Option* AddOptionalEnumOption(CLI::App* cmd, const std::string& flag, std::optional<Enum>* field,
                                   const NameValue<Enum> (&table)[N], const std::string& what,
                                   const std::string& description) {
  auto parse = [&table, what](const std::string& text) -> Result<std::optional<Enum>> {
    if (text == "auto") return std::optional<Enum>();
    SEER_ASSIGN_OR_RETURN(Enum value, ParseName(table, text, what));
    return std::optional<Enum>(value);
  };
  return AddParsedOption(cmd, flag, field, parse, *field ? NameOf(table, **field) : "auto",
                         description + ": auto | " + JoinNames(table, " | ", " | "));
}

// Byte sizes ("4096", "512M", "2G", "1.5GiB").
CLI::Option* AddBytesOption(CLI::App* cmd, const std::string& flag, int64_t* bytes,
                            const std::string& description);
// Byte sizes or "auto", stored as -1.
CLI::Option* AddBytesOrAutoOption(CLI::App* cmd, const std::string& flag, int64_t* bytes,
                                  const std::string& description);
// Fan-outs per layer, hop 1 first ("10,10,10"; -1 = all neighbors; a TOML array
// [10, 10, 10] in --config).
CLI::Option* AddFanoutsOption(CLI::App* cmd, const std::string& flag, std::vector<int>* fanouts,
                              const std::string& description);
// A flag without a value that stores `value` in *field when given (--cpu: use_cuda = false).
CLI::Option* AddSetFlag(CLI::App* cmd, const std::string& flag, bool* field, bool value,
                        const std::string& description);

}  // namespace seer::cli
