// --device: auto, cpu or gpu.
#include "device_choice.hpp"

#include "qmarg/device.hpp"
#include "qmarg/error.hpp"

namespace qmarg_cli {

qmarg::Device choose_device(const std::string& flag, std::string& note) {
    if (flag == "cpu") {
        note = "the CPU";
        return qmarg::Device::Cpu;
    }
    const bool usable = qmarg::gpu_available();
    if (flag == "gpu" && !usable) {
        throw qmarg::Error("--device gpu: no usable GPU: " + qmarg::gpu_unavailable_reason());
    }
    if (usable) {
        note = "the GPU (" + qmarg::gpu_info().name + ")";
        return qmarg::Device::Gpu;
    }
    note = "the CPU (no usable GPU: " + qmarg::gpu_unavailable_reason() + ")";
    return qmarg::Device::Cpu;
}

}  // namespace qmarg_cli
