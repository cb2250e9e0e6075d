#include "flag_binding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "inspector/sampler.h"
#include "storage/base/byte_size.h"

namespace seer::cli {

Status FlagError(const Status& status, const std::string& flag) {
  if (status.message().find(flag) != std::string::npos) return status;
  return status.WithContext(flag);
}

std::string ByteSizeText(int64_t bytes) {
  for (auto [shift, suffix] : {std::pair{40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}}) {
    const int64_t unit = int64_t{1} << shift;
    if (bytes > 0 && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  }
  return std::to_string(bytes);
}

CLI::Option* AddTextOption(CLI::App* cmd, const std::string& flag,
                           std::function<Status(const std::string&)> store,
                           const std::string& default_text, const std::string& description) {
  auto checked = [store = std::move(store), flag](const std::string& text) {
    Status status = store(text);
    if (!status.ok()) throw StatusError(FlagError(status, flag));
  };
  return cmd->add_option_function<std::string>(flag, checked, description)
      ->type_name("TEXT")
      ->default_str(default_text);
}

CLI::Option* AddBytesOption(CLI::App* cmd, const std::string& flag, int64_t* bytes,
                            const std::string& description) {
  return AddParsedOption(cmd, flag, bytes, ParseBytes, ByteSizeText(*bytes), description);
}

CLI::Option* AddBytesOrAutoOption(CLI::App* cmd, const std::string& flag, int64_t* bytes,
                                  const std::string& description) {
  auto parse = [](const std::string& text) -> Result<int64_t> {
    if (text == "auto") return int64_t{-1};
    return ParseBytes(text);
  };
  return AddParsedOption(cmd, flag, bytes, parse, *bytes < 0 ? "auto" : ByteSizeText(*bytes),
                         description);
}

CLI::Option* AddFanoutsOption(CLI::App* cmd, const std::string& flag, std::vector<int>* fanouts,
                              const std::string& description) {
  // A --config array (fanouts = [10, 10]) arrives as one value per element: joined with
  // ',' it reads as the command line's "10,10".
  return AddParsedOption(cmd, flag, fanouts, ParseFanouts, fmt::format("{}", fmt::join(*fanouts, ",")),
                         description)
      ->multi_option_policy(CLI::MultiOptionPolicy::Join)
      ->delimiter(',');
}

CLI::Option* AddSetFlag(CLI::App* cmd, const std::string& flag, bool* field, bool value,
                        const std::string& description) {
  return cmd->add_flag_callback(flag, [field, value] { *field = value; }, description);
}

}  // namespace seer::cli
