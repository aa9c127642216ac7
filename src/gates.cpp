// The named gates. Every one is apply_matrix with a matrix from
// gate_matrices.cpp, so it is validated and dispatched to the CPU or GPU
// exactly like a user's own matrix.

#include "qmarg/gates.hpp"

namespace qmarg {

template <class Real>
void h(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::h());
}
template <class Real>
void x(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::x());
}
template <class Real>
void y(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::y());
}
template <class Real>
void z(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::z());
}
template <class Real>
void s(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::s());
}
template <class Real>
void sdg(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::sdg());
}
template <class Real>
void t(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::t());
}
template <class Real>
void tdg(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::tdg());
}
template <class Real>
void sx(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::sx());
}
template <class Real>
void rx(StateVector<Real>& state, int qubit, double theta) {
    apply_matrix(state, {qubit}, gates::rx(theta));
}
template <class Real>
void ry(StateVector<Real>& state, int qubit, double theta) {
    apply_matrix(state, {qubit}, gates::ry(theta));
}
template <class Real>
void rz(StateVector<Real>& state, int qubit, double theta) {
    apply_matrix(state, {qubit}, gates::rz(theta));
}
template <class Real>
void phase(StateVector<Real>& state, int qubit, double lambda) {
    apply_matrix(state, {qubit}, gates::phase(lambda));
}
template <class Real>
void u3(StateVector<Real>& state, int qubit, double theta, double phi, double lambda) {
    apply_matrix(state, {qubit}, gates::u3(theta, phi, lambda));
}
template <class Real>
void cx(StateVector<Real>& state, int control, int target) {
    apply_matrix(state, {target}, gates::x(), {control});
}
template <class Real>
void cz(StateVector<Real>& state, int control, int target) {
    apply_matrix(state, {target}, gates::z(), {control});
}
template <class Real>
void swap(StateVector<Real>& state, int qubit_a, int qubit_b) {
    apply_matrix(state, {qubit_a, qubit_b}, gates::swap());
}
template <class Real>
void ccx(StateVector<Real>& state, int control_a, int control_b, int target) {
    apply_matrix(state, {target}, gates::x(), {control_a, control_b});
}

#define QMARG_INSTANTIATE(Real)                                                          \
    template void h<Real>(StateVector<Real>&, int);                                      \
    template void x<Real>(StateVector<Real>&, int);                                      \
    template void y<Real>(StateVector<Real>&, int);                                      \
    template void z<Real>(StateVector<Real>&, int);                                      \
    template void s<Real>(StateVector<Real>&, int);                                      \
    template void sdg<Real>(StateVector<Real>&, int);                                    \
    template void t<Real>(StateVector<Real>&, int);                                      \
    template void tdg<Real>(StateVector<Real>&, int);                                    \
    template void sx<Real>(StateVector<Real>&, int);                                     \
    template void rx<Real>(StateVector<Real>&, int, double);                             \
    template void ry<Real>(StateVector<Real>&, int, double);                             \
    template void rz<Real>(StateVector<Real>&, int, double);                             \
    template void phase<Real>(StateVector<Real>&, int, double);                          \
    template void u3<Real>(StateVector<Real>&, int, double, double, double);             \
    template void cx<Real>(StateVector<Real>&, int, int);                                \
    template void cz<Real>(StateVector<Real>&, int, int);                                \
    template void swap<Real>(StateVector<Real>&, int, int);                              \
    template void ccx<Real>(StateVector<Real>&, int, int, int);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace qmarg
