#include "qmarg/matrix.hpp"

#include <string>
#include <utility>

#include "qmarg/error.hpp"

namespace qmarg {
namespace {
void check_dim(int dim) {
    if (dim < 1 || dim > (1 << 15)) {
        throw Error("matrix dimension " + std::to_string(dim) + " is out of range (1.." + std::to_string(1 << 15) +
                    ")");
    }
}
}  // namespace

Matrix::Matrix(int dim) : dim_(dim) {
    check_dim(dim);
    data_.assign(static_cast<std::size_t>(dim) * dim, value_type{0.0, 0.0});
}

Matrix::Matrix(int dim, std::initializer_list<value_type> row_major)
    : Matrix(dim, std::vector<value_type>(row_major)) {}

Matrix::Matrix(int dim, std::vector<value_type> row_major) : dim_(dim), data_(std::move(row_major)) {
    check_dim(dim);
    if (data_.size() != static_cast<std::size_t>(dim) * dim) {
        throw Error("a " + std::to_string(dim) + "x" + std::to_string(dim) + " matrix needs " +
                    std::to_string(static_cast<std::size_t>(dim) * dim) + " entries, got " +
                    std::to_string(data_.size()));
    }
}

Matrix Matrix::identity(int dim) {
    Matrix m(dim);
    for (int i = 0; i < dim; ++i) m(i, i) = 1.0;
    return m;
}

Matrix Matrix::operator*(const Matrix& other) const {
    if (other.dim_ != dim_) {
        throw Error("cannot multiply a " + std::to_string(dim_) + "x" + std::to_string(dim_) + " matrix by a " +
                    std::to_string(other.dim_) + "x" + std::to_string(other.dim_) + " one");
    }
    Matrix out(dim_);
    for (int r = 0; r < dim_; ++r)
        for (int j = 0; j < dim_; ++j)
            for (int c = 0; c < dim_; ++c) out(r, c) += (*this)(r, j) * other(j, c);
    return out;
}

Matrix Matrix::adjoint() const {
    Matrix out(dim_);
    for (int r = 0; r < dim_; ++r)
        for (int c = 0; c < dim_; ++c) out(c, r) = std::conj((*this)(r, c));
    return out;
}

}  // namespace qmarg
