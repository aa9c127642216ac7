// Small formatting helpers for error messages and reports.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace qmarg {
namespace detail {

// "16.0 GiB", "512 B": binary units, one decimal.
inline std::string human_bytes(long double bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int unit = 0;
    while (bytes >= 1024 && unit < 6) {
        bytes /= 1024;
        ++unit;
    }
    char text[32];
    if (unit == 0) {
        std::snprintf(text, sizeof text, "%.0Lf B", bytes);
    } else {
        std::snprintf(text, sizeof text, "%.1Lf %s", bytes, units[unit]);
    }
    return text;
}

}  // namespace detail
}  // namespace qmarg
