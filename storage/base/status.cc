#include "storage/base/status.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace seer {

Status ErrnoStatus(int err, const std::string& operation, const std::string& path,
                   int64_t offset_bytes, int64_t length_bytes) {
  if (err < 0) err = -err;
  std::string message = operation + " " + path;
  if (offset_bytes >= 0) {
    message += " at offset " + std::to_string(offset_bytes);
    if (length_bytes >= 0) message += " (+" + std::to_string(length_bytes) + " bytes)";
  }
  message += ": ";
  message += std::strerror(err);
  StatusCode code = StatusCode::kIoError;
  if (err == ENOENT) code = StatusCode::kNotFound;
  if (err == EEXIST) code = StatusCode::kAlreadyExists;
  if (err == ENOSYS || err == EPERM || err == EOPNOTSUPP) code = StatusCode::kUnsupported;
  return Status(code, std::move(message), err);
}

}  // namespace seer
