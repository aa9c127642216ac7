// Umbrella header: everything a program linking qmarg::qmarg needs.
#pragma once

#include "qmarg/benchmark.hpp"
#include "qmarg/bits.hpp"
#include "qmarg/circuit.hpp"
#include "qmarg/device.hpp"
#include "qmarg/device_buffer.hpp"
#include "qmarg/error.hpp"
#include "qmarg/fusion.hpp"
#include "qmarg/gates.hpp"
#include "qmarg/marginal.hpp"
#include "qmarg/marginal_queries.hpp"
#include "qmarg/matrix.hpp"
#include "qmarg/qasm.hpp"
#include "qmarg/reductions.hpp"
#include "qmarg/sampling.hpp"
#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"
