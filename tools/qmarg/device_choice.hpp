// Which device a command runs on: --device auto|cpu|gpu, and the line on
// stderr that says what was chosen and why.
#pragma once

#include <string>

#include "qmarg/types.hpp"

namespace qmarg_cli {

// "auto": the GPU when one is usable, else the CPU; "gpu" without a usable GPU
// is an Error saying why. `note` receives a description of the choice
// ("the GPU (NVIDIA H100 ...)", "the CPU (no usable GPU: ...)").
qmarg::Device choose_device(const std::string& flag, std::string& note);

}  // namespace qmarg_cli
