// The one rule that turns an exception into a Status, for every thread and command
// boundary (pipeline stages, the executor thread, the CLI's main):
//   StatusError          its Status, the message prefixed with the context
//   std::bad_alloc       kResourceExhausted "CONTEXT: out of memory (WHAT)"
//   std::invalid_argument, std::out_of_range
//                        kInvalidArgument   "CONTEXT: WHAT"   (a bad value reached a check)
//   any other exception  kInternal          "CONTEXT failed: WHAT" (a broken contract)
// WHAT is the exception's first line (libtorch appends a C++ backtrace after it). An
// empty CONTEXT adds no prefix.
// Thread-safe; never throws except std::bad_alloc while building the message.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "storage/base/status.h"

namespace seer {

// The first line of e.what() without trailing blanks ("unknown" when empty).
std::string ExceptionSummary(const std::exception& e);

// The Status for the exception being handled (call only inside a catch block).
Status StatusFromCurrentException(const std::string& context);

// Runs body; any exception it throws becomes StatusFromCurrentException(context).
Status RunGuarded(const std::string& context, const std::function<Status()>& body);

}  // namespace seer
