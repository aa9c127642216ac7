// The SM clock and board power while a benchmark's timed runs execute, read
// from NVML (the driver's management library) on a thread that polls every
// few milliseconds. Dense gates on 5 or more targets hold an H100 at its
// board power limit: the clock then drops below its peak and the time of a
// run depends on the energy it spends, not only on its memory traffic and
// its products. The benchmarks record these numbers per case so that a
// reader can tell a kernel limited by power from one limited by its own
// stream of instructions.
//
// The clock is read as it is at each poll. The power is NVML's reading,
// which the driver averages over a window of its own (about a second on an
// H100), and the power-cap flag follows the controller that acts on that
// average: for runs shorter than the window both still carry the load that
// came before (on an H100, float gates of 1.5 ms right after the 700 W
// CGEMM read about 600 W and "capped" at 1965 MHz, and double k = 1 on qubit
// 0, 11.8 ms, 350 W as a sweep's first case and 669 W right after double k =
// 10). So a caller that wants the power of its own work runs that work for
// longer than the window before it starts the sampler (run_for_at_least).
// The GPU's temperature is sampled too: at the power limit a hotter chip
// leaks more, and the same work then gets a lower clock.
//
// NVML ships with the driver, not with the CUDA toolkit, and no Debian
// package this project builds with provides its header, so the library is
// opened at run time (libnvidia-ml.so.1) and the handful of functions used
// here are declared from the NVML API reference (their C ABI is stable
// across drivers). Without the library, or where the driver does not
// report a quantity, the sampler says so and the benchmark records nothing
// for it: no made-up numbers.
//
// Plain C++ (no CUDA): the caller names the GPU by its PCI bus id
// (cudaDeviceGetPCIBusId), so tests/power_sampler_test.cpp runs it anywhere.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "statistics.hpp"

namespace qmarg {
namespace bench {

// One poll. A quantity the driver did not report is negative.
struct PowerSample {
    double sm_mhz = -1;
    double power_w = -1;
    int capped = -1;  // 1: the clock is held down by the power limit, 0: not, -1: not reported
    double temperature_c = -1;  // the GPU's core temperature
};

// What the sampler saw between start() and stop(). A quantity no sample
// reported is 0.
struct PowerSummary {
    int samples = 0;
    double sm_mhz = 0;         // median SM clock
    double power_w = 0;        // median board power (NVML's reading, averaged by the driver)
    double power_limit_w = 0;  // the enforced board power limit
    double power_capped = 0;   // fraction of the samples that report it with the clock held down by that limit
    double temperature_c = 0;  // median GPU temperature in degrees Celsius
};

inline PowerSummary summarize_power(const std::vector<PowerSample>& samples, double power_limit_w) {
    PowerSummary summary;
    summary.samples = static_cast<int>(samples.size());
    summary.power_limit_w = power_limit_w;
    std::vector<double> mhz, watts, celsius;
    int capped = 0, reported = 0;
    for (const PowerSample& s : samples) {
        if (s.sm_mhz >= 0) mhz.push_back(s.sm_mhz);
        if (s.power_w >= 0) watts.push_back(s.power_w);
        if (s.temperature_c >= 0) celsius.push_back(s.temperature_c);
        if (s.capped >= 0) {
            ++reported;
            capped += s.capped;
        }
    }
    summary.sm_mhz = mhz.empty() ? 0 : median(mhz);
    summary.power_w = watts.empty() ? 0 : median(watts);
    summary.temperature_c = celsius.empty() ? 0 : median(celsius);
    summary.power_capped = reported > 0 ? static_cast<double>(capped) / reported : 0;
    return summary;
}

// Runs `work` at least `min_runs` times and, beyond that, until `min_ms` of
// wall-clock time have passed since the first run began; returns the number
// of runs. `work` must return only once its run is done (a GPU caller
// synchronises in it), so that the time counted is the GPU's. Used before a
// sampler starts, so that NVML's averaged power reads the work itself.
template <class Work>
int run_for_at_least(Work&& work, int min_runs, double min_ms) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point begin = Clock::now();
    int runs = 0;
    while (runs < min_runs || std::chrono::duration<double, std::milli>(Clock::now() - begin).count() < min_ms) {
        work();
        ++runs;
    }
    return runs;
}

class PowerSampler {
public:
    // Opens NVML and finds the GPU at `pci_bus_id` in it.
    explicit PowerSampler(const std::string& pci_bus_id) {
        library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (library_ == nullptr) {
            const char* error = dlerror();
            reason_ = std::string("cannot open libnvidia-ml.so.1: ") + (error != nullptr ? error : "no reason given");
            return;
        }
        init_ = symbol<Init>("nvmlInit_v2");
        shutdown_ = symbol<Shutdown>("nvmlShutdown");
        by_bus_id_ = symbol<HandleByPciBusId>("nvmlDeviceGetHandleByPciBusId_v2");
        clock_ = symbol<ClockInfo>("nvmlDeviceGetClockInfo");
        power_ = symbol<PowerUsage>("nvmlDeviceGetPowerUsage");
        limit_ = symbol<PowerLimit>("nvmlDeviceGetEnforcedPowerLimit", false);
        temperature_ = symbol<Temperature>("nvmlDeviceGetTemperature", false);
        // The newer name first; drivers before R535 know only the older one.
        reasons_ = symbol<EventReasons>("nvmlDeviceGetCurrentClocksEventReasons", false);
        if (reasons_ == nullptr) reasons_ = symbol<EventReasons>("nvmlDeviceGetCurrentClocksThrottleReasons", false);
        if (!reason_.empty()) return;
        if (const int status = init_(); status != kSuccess) {
            reason_ = "nvmlInit_v2 failed (NVML return code " + std::to_string(status) + ")";
            return;
        }
        initialised_ = true;
        if (const int status = by_bus_id_(pci_bus_id.c_str(), &device_); status != kSuccess) {
            reason_ = "NVML knows no GPU at PCI bus id " + pci_bus_id + " (NVML return code " +
                      std::to_string(status) + ")";
            return;
        }
        unsigned milliwatts = 0;
        if (limit_ != nullptr && limit_(device_, &milliwatts) == kSuccess) power_limit_w_ = milliwatts * 1e-3;
    }
    ~PowerSampler() {
        stop();
        if (initialised_) shutdown_();
        if (library_ != nullptr) dlclose(library_);
    }
    PowerSampler(const PowerSampler&) = delete;
    PowerSampler& operator=(const PowerSampler&) = delete;

    bool available() const { return reason_.empty(); }
    // Why available() is false.
    const std::string& unavailable_reason() const { return reason_; }
    // The enforced board power limit; 0 where the driver does not report it.
    double power_limit_w() const { return power_limit_w_; }

    // Starts polling (every `period_ms`) on a thread of its own.
    void start(int period_ms = 5) {
        if (!available()) return;
        stop();
        samples_.clear();
        running_ = true;
        thread_ = std::thread([this, period_ms] {
            while (running_) {
                PowerSample s;
                unsigned mhz = 0, milliwatts = 0, celsius = 0;
                unsigned long long reasons = 0;
                s.sm_mhz = clock_(device_, kClockSm, &mhz) == kSuccess ? mhz : -1.0;
                s.power_w = power_(device_, &milliwatts) == kSuccess ? milliwatts * 1e-3 : -1.0;
                s.capped = reasons_ != nullptr && reasons_(device_, &reasons) == kSuccess
                               ? ((reasons & kSwPowerCap) != 0 ? 1 : 0)
                               : -1;
                s.temperature_c =
                    temperature_ != nullptr && temperature_(device_, kTemperatureGpu, &celsius) == kSuccess
                        ? celsius
                        : -1.0;
                samples_.push_back(s);
                std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
            }
        });
    }

    // Stops polling and summarises the samples since start() (none where
    // the sampler is not available).
    PowerSummary stop() {
        if (thread_.joinable()) {
            running_ = false;
            thread_.join();
        }
        return summarize_power(samples_, power_limit_w_);
    }

private:
    // NVML's types as its reference defines them: nvmlReturn_t is an enum
    // (NVML_SUCCESS = 0), nvmlDevice_t an opaque pointer, NVML_CLOCK_SM = 1,
    // nvmlClocksEventReasonSwPowerCap = 0x4, NVML_TEMPERATURE_GPU = 0.
    using Device = struct nvmlDevice_st*;
    using Init = int (*)();
    using Shutdown = int (*)();
    using HandleByPciBusId = int (*)(const char*, Device*);
    using ClockInfo = int (*)(Device, int, unsigned*);
    using PowerUsage = int (*)(Device, unsigned*);
    using PowerLimit = int (*)(Device, unsigned*);
    using EventReasons = int (*)(Device, unsigned long long*);
    using Temperature = int (*)(Device, int, unsigned*);
    static constexpr int kSuccess = 0;
    static constexpr int kTemperatureGpu = 0;
    static constexpr int kClockSm = 1;
    static constexpr unsigned long long kSwPowerCap = 0x4ULL;

    template <class F>
    F symbol(const char* name, bool required = true) {
        void* found = dlsym(library_, name);
        if (found == nullptr && required && reason_.empty()) reason_ = std::string("libnvidia-ml.so.1 lacks ") + name;
        return reinterpret_cast<F>(found);
    }

    void* library_ = nullptr;
    bool initialised_ = false;
    std::string reason_;
    Init init_ = nullptr;
    Shutdown shutdown_ = nullptr;
    HandleByPciBusId by_bus_id_ = nullptr;
    ClockInfo clock_ = nullptr;
    PowerUsage power_ = nullptr;
    PowerLimit limit_ = nullptr;
    EventReasons reasons_ = nullptr;
    Temperature temperature_ = nullptr;
    Device device_ = nullptr;
    double power_limit_w_ = 0;
    std::atomic<bool> running_{false};
    std::thread thread_;
    std::vector<PowerSample> samples_;
};

}  // namespace bench
}  // namespace qmarg
