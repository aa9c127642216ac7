// qmarg::Error is the one exception type users catch from this library.
//
// Every public call validates its input and throws Error (or a subclass) whose
// message names the bad value and the limit it broke. A library never calls
// exit(): the caller decides what a failure means for its program.
#pragma once

#include <stdexcept>
#include <string>

namespace qmarg {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A failure reported by the CUDA runtime (out of memory included). The message
// carries the CUDA error string and the operation that failed.
class CudaError : public Error {
public:
    explicit CudaError(const std::string& message) : Error(message) {}
};

}  // namespace qmarg
