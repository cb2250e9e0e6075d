#include "storage/base/exception_status.h"

#include <new>
#include <stdexcept>

namespace seer {

std::string ExceptionSummary(const std::exception& e) {
  std::string text = e.what() == nullptr ? "" : e.what();
  const size_t newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text.empty() ? "unknown" : text;
}

Status StatusFromCurrentException(const std::string& context) {
  // "CONTEXT: " before what the exception says, "CONTEXT failed: " before a broken
  // contract; nothing with an empty context (the CLI's last resort prints WHAT alone).
  const std::string prefix = context.empty() ? "" : context + ": ";
  const std::string failed = context.empty() ? "" : context + " failed: ";
  try {
    throw;
  } catch (const StatusError& e) {
    return Status(e.status().code(), prefix + e.status().message(), e.status().sys_errno());
  } catch (const std::bad_alloc& e) {
    return Status(StatusCode::kResourceExhausted, prefix + "out of memory (" + ExceptionSummary(e) + ")");
  } catch (const std::invalid_argument& e) {
    return Status(StatusCode::kInvalidArgument, prefix + ExceptionSummary(e));
  } catch (const std::out_of_range& e) {
    return Status(StatusCode::kInvalidArgument, prefix + ExceptionSummary(e));
  } catch (const std::exception& e) {
    // c10::Error and every other library exception: a broken contract.
    return Status(StatusCode::kInternal, failed + ExceptionSummary(e));
  } catch (...) {
    return Status(StatusCode::kInternal, failed + "unknown exception");
  }
}

Status RunGuarded(const std::string& context, const std::function<Status()>& body) {
  try {
    return body();
  } catch (...) {
    return StatusFromCurrentException(context);
  }
}

}  // namespace seer
