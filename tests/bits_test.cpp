// The bit helpers of qmarg/bits.hpp that work on masks: deposit_bits and its
// inverse extract_bits (the atomic merge ranks a block's bins with them).
#include <cstdint>
#include <random>

#include <gtest/gtest.h>

#include "qmarg/bits.hpp"

namespace {

TEST(Bits, DepositAndExtractOnKnownMasks) {
    EXPECT_EQ(0b1010'0000u, qmarg::deposit_bits(0b11, 0b1010'0000));
    EXPECT_EQ(0b0010'0000u, qmarg::deposit_bits(0b01, 0b1010'0000));
    EXPECT_EQ(0b11u, qmarg::extract_bits(0b1110'0101, 0b1010'0000));
    EXPECT_EQ(0b101u, qmarg::extract_bits(0b1000'0001, 0b1100'0001));
    EXPECT_EQ(0u, qmarg::extract_bits(0xffff, 0));
    EXPECT_EQ(0u, qmarg::deposit_bits(0xffff, 0));
    EXPECT_EQ(~std::uint64_t{0}, qmarg::extract_bits(~std::uint64_t{0}, ~std::uint64_t{0}));
}

TEST(Bits, ExtractInvertsDepositOnRandomMasks) {
    std::mt19937_64 rng(12345);
    for (int trial = 0; trial < 1000; ++trial) {
        const std::uint64_t mask = rng() & rng();  // about a quarter of the bits
        const std::uint64_t value = rng();
        const std::uint64_t deposited = qmarg::deposit_bits(value, mask);
        EXPECT_EQ(0u, deposited & ~mask);
        const int width = __builtin_popcountll(mask);
        const std::uint64_t low = width == 64 ? value : value & ((std::uint64_t{1} << width) - 1);
        ASSERT_EQ(low, qmarg::extract_bits(deposited, mask)) << "mask " << mask << ", value " << value;
        ASSERT_EQ(value & mask, qmarg::deposit_bits(qmarg::extract_bits(value, mask), mask));
    }
}

}  // namespace
