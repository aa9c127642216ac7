// Matrix: a small dense complex matrix (2^k x 2^k for a k-qubit gate), row-major,
// always in double precision; it is converted to the state's precision where it
// is applied.
#pragma once

#include <complex>
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace qmarg {

class Matrix {
public:
    using value_type = std::complex<double>;

    Matrix() = default;
    // A dim x dim zero matrix.
    explicit Matrix(int dim);
    // A dim x dim matrix from its entries in row-major order; throws Error if
    // the count is not dim*dim.
    Matrix(int dim, std::initializer_list<value_type> row_major);
    Matrix(int dim, std::vector<value_type> row_major);

    static Matrix identity(int dim);

    int dim() const { return dim_; }
    value_type& operator()(int row, int col) { return data_[static_cast<std::size_t>(row) * dim_ + col]; }
    const value_type& operator()(int row, int col) const {
        return data_[static_cast<std::size_t>(row) * dim_ + col];
    }
    const value_type* data() const { return data_.data(); }
    value_type* data() { return data_.data(); }

    // Matrix product (this * other) and conjugate transpose.
    Matrix operator*(const Matrix& other) const;
    Matrix adjoint() const;

private:
    int dim_ = 0;
    std::vector<value_type> data_;
};

}  // namespace qmarg
