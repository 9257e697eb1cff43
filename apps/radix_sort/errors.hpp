#pragma once
// The program's one error type: its message is printed as the single line "radix_sort: error: <message>".

#include <stdexcept>
#include <string>

namespace radix_sort {

/// A failure the user can act on (bad input, unwritable output, not enough GPU memory).
class AppError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A command line that does not parse or does not make sense.
class UsageError : public AppError {
 public:
  using AppError::AppError;
};

/// Throws AppError("<what>: <strerror(errno)>"); for EFBIG under a file-size limit, the limit follows in bytes.
[[noreturn]] void throw_system_error(const std::string& what);

}  // namespace radix_sort
