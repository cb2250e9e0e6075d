// Status and Result<T>: how Seer reports environment failures (open, read, write,
// ENOSPC, EOF, io_uring refused, corrupt or mismatched files). Library code returns
// them; only tools/ turns them into a message and an exit code. Broken contracts
// (ids out of range inside the library, wrong shapes) throw std::logic_error instead.
//
// A Status is cheap to move, holds an error code and a one-line message that already
// names the operation, the path and the position ("read features.bin at offset 4096
// (+512 bytes): Input/output error"). Thread-safe as values: no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace seer {

enum class StatusCode {
  kOk = 0,
  kIoError,          // a syscall failed (errno carried)
  kNotFound,         // a file or directory is missing
  kInvalidArgument,  // a user-supplied value is wrong (bad flag value, bad id)
  kCorrupt,          // a file exists but its content is malformed or inconsistent
  kUnexpectedEof,    // a file ended before the bytes we needed
  kUnsupported,      // the environment refuses a feature (io_uring, O_DIRECT)
  kAlreadyExists,    // refusing to overwrite
  kResourceExhausted,// a memory budget cannot be met
  kInternal,         // a broken contract caught at a thread boundary (an unexpected exception)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  Status(StatusCode code, std::string message, int sys_errno = 0)
      : code_(code), sys_errno_(sys_errno), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  int sys_errno() const { return sys_errno_; }
  const std::string& message() const { return message_; }
  std::string ToString() const { return ok() ? std::string("OK") : message_; }

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_, sys_errno_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  int sys_errno_ = 0;
  std::string message_;
};

// The one helper that turns an errno (positive or negative) into a Status naming the
// operation, the path and, when offset_bytes >= 0, the byte range.
Status ErrnoStatus(int err, const std::string& operation, const std::string& path,
                   int64_t offset_bytes = -1, int64_t length_bytes = -1);

inline Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status Corrupt(std::string message) {
  return Status(StatusCode::kCorrupt, std::move(message));
}

// Thrown by Result<T>::value() on an error, and by tools that want to unwind.
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(Status status)
      : std::runtime_error(status.message()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) throw std::logic_error("Result constructed from an OK status");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    if (!ok()) throw StatusError(status_);
    return *value_;
  }
  const T& value() const& {
    if (!ok()) throw StatusError(status_);
    return *value_;
  }
  T&& value() && {
    if (!ok()) throw StatusError(status_);
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace seer

// Early-return helpers for functions returning Status or Result<T>.
#define SEER_CONCAT_INNER(a, b) a##b
#define SEER_CONCAT(a, b) SEER_CONCAT_INNER(a, b)

#define SEER_RETURN_IF_ERROR(expr)            \
  do {                                        \
    ::seer::Status _seer_st = (expr);         \
    if (!_seer_st.ok()) return _seer_st;      \
  } while (0)

#define SEER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#define SEER_ASSIGN_OR_RETURN(lhs, expr) \
  SEER_ASSIGN_OR_RETURN_IMPL(SEER_CONCAT(_seer_res_, __LINE__), lhs, expr)
