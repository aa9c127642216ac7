// fuse_gates(): groups a circuit's operations (qmarg/fusion.hpp states the
// rules) and multiplies each group into one matrix.
//
// Grouping keeps one open group per qubit, as the gates arrive in order: the
// open groups hold disjoint qubits, and a qubit's open group holds every
// operation on that qubit since the group was opened. An operation therefore
// depends only on closed groups and on the open groups that hold its qubits,
// which it joins. So closing (emitting) any open group at any moment is a
// valid order: whatever must precede it is already emitted, and nothing
// emitted later precedes it. Merging the open groups an operation touches is
// valid for the same reason: they are independent of each other.
//
// The matrix of a group is built column by column: column c is basis state c
// of the group's qubits with each member applied to it in turn, in double.
#include "qmarg/fusion.hpp"

#include <algorithm>
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

#include "operation_name.hpp"
#include "qmarg/error.hpp"
#include "validation.hpp"

namespace qmarg {
namespace {

using Complex = std::complex<double>;

struct Group {
    std::vector<std::size_t> members;  // indices into circuit.operations, in the order they apply
    Qubits qubits;                     // ascending
    bool fusible = true;               // false: one operation on more than max_qubits qubits
};

Qubits qubits_of(const Operation& op) {
    Qubits qubits = op.targets;
    qubits.insert(qubits.end(), op.controls.begin(), op.controls.end());
    std::sort(qubits.begin(), qubits.end());
    return qubits;
}

Qubits set_union(const Qubits& a, const Qubits& b) {
    Qubits out;
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

// The greedy grouping; groups come out in an order in which they may be applied.
class Grouper {
public:
    Grouper(int num_qubits, int max_qubits) : max_qubits_(max_qubits), owner_(num_qubits, kNone) {}

    void add(std::size_t index, const Operation& op) {
        const Qubits qubits = qubits_of(op);
        std::vector<int> touched;  // open groups holding any of the operation's qubits
        for (int q : qubits) {
            const int g = owner_[q];
            if (g != kNone && std::find(touched.begin(), touched.end(), g) == touched.end()) touched.push_back(g);
        }
        if (static_cast<int>(qubits.size()) > max_qubits_) {
            for (int g : touched) close(g);
            closed_.push_back(Group{{index}, qubits, false});
            return;
        }
        // Close the largest touched group until the union fits: the operation
        // then keeps as much of its past as it can.
        Qubits united;
        for (;;) {
            united = qubits;
            for (int g : touched) united = set_union(united, open_[g].qubits);
            if (static_cast<int>(united.size()) <= max_qubits_) break;
            auto largest = std::max_element(touched.begin(), touched.end(), [&](int a, int b) {
                return open_[a].qubits.size() < open_[b].qubits.size();
            });
            close(*largest);
            touched.erase(largest);
        }
        Group merged;
        merged.qubits = united;
        for (int g : touched) {
            merged.members.insert(merged.members.end(), open_[g].members.begin(), open_[g].members.end());
            open_[g].members.clear();
            alive_[g] = false;
        }
        // Members of different groups act on disjoint qubits, so their
        // original order is as good as any.
        std::sort(merged.members.begin(), merged.members.end());
        merged.members.push_back(index);
        const int id = static_cast<int>(open_.size());
        open_.push_back(std::move(merged));
        alive_.push_back(true);
        for (int q : united) owner_[q] = id;
    }

    // Every group, open ones closed in the order of their first member.
    std::vector<Group> finish() {
        std::vector<int> still_open;
        for (int g = 0; g < static_cast<int>(open_.size()); ++g)
            if (alive_[g]) still_open.push_back(g);
        std::sort(still_open.begin(), still_open.end(),
                  [&](int a, int b) { return open_[a].members.front() < open_[b].members.front(); });
        for (int g : still_open) close(g);
        return std::move(closed_);
    }

private:
    static constexpr int kNone = -1;

    void close(int g) {
        for (int q : open_[g].qubits) owner_[q] = kNone;
        alive_[g] = false;
        closed_.push_back(std::move(open_[g]));
        open_[g] = Group{};
    }

    int max_qubits_;
    std::vector<int> owner_;  // the open group holding each qubit, or kNone
    std::vector<Group> open_;
    std::vector<bool> alive_;
    std::vector<Group> closed_;
};

// Neighbours in a valid order may always be multiplied together; do it
// wherever the union fits (this is where gates on disjoint qubits, such as a
// layer of one-qubit gates, become one pass).
std::vector<Group> merge_neighbours(std::vector<Group> groups, int max_qubits) {
    std::vector<Group> out;
    for (Group& g : groups) {
        if (!out.empty() && out.back().fusible && g.fusible) {
            Qubits united = set_union(out.back().qubits, g.qubits);
            if (static_cast<int>(united.size()) <= max_qubits) {
                out.back().qubits = std::move(united);
                out.back().members.insert(out.back().members.end(), g.members.begin(), g.members.end());
                continue;
            }
        }
        out.push_back(std::move(g));
    }
    return out;
}

// The group's matrix on `qubits` (ascending; qubits[j] is bit j of its index).
Matrix group_matrix(const Circuit& circuit, const Group& group) {
    const int width = static_cast<int>(group.qubits.size());
    const std::size_t dim = std::size_t{1} << width;
    auto bit_of = [&](int qubit) {
        return std::size_t{1} << (std::find(group.qubits.begin(), group.qubits.end(), qubit) - group.qubits.begin());
    };
    // Column-major, so that each column (one input basis state) is contiguous.
    std::vector<Complex> columns(dim * dim, Complex(0.0, 0.0));
    for (std::size_t c = 0; c < dim; ++c) columns[c * dim + c] = 1.0;

    std::vector<Complex> in, out;
    for (std::size_t member : group.members) {
        const Operation& op = circuit.operations[member];
        const int k = static_cast<int>(op.targets.size());
        const std::size_t op_dim = std::size_t{1} << k;
        std::vector<std::size_t> offset(op_dim, 0);  // bits of the group index set by row r of op's matrix
        for (std::size_t r = 0; r < op_dim; ++r)
            for (int j = 0; j < k; ++j)
                if ((r >> j) & 1u) offset[r] |= bit_of(op.targets[j]);
        const std::size_t target_bits = offset[op_dim - 1];
        std::size_t control_bits = 0;
        for (int q : op.controls) control_bits |= bit_of(q);
        in.assign(op_dim, 0.0);
        out.assign(op_dim, 0.0);
        for (std::size_t c = 0; c < dim; ++c) {
            Complex* column = &columns[c * dim];
            for (std::size_t base = 0; base < dim; ++base) {
                if ((base & target_bits) != 0 || (base & control_bits) != control_bits) continue;
                for (std::size_t j = 0; j < op_dim; ++j) in[j] = column[base | offset[j]];
                for (std::size_t r = 0; r < op_dim; ++r) {
                    Complex sum(0.0, 0.0);
                    for (std::size_t j = 0; j < op_dim; ++j)
                        sum += op.matrix(static_cast<int>(r), static_cast<int>(j)) * in[j];
                    out[r] = sum;
                }
                for (std::size_t r = 0; r < op_dim; ++r) column[base | offset[r]] = out[r];
            }
        }
    }
    Matrix matrix(static_cast<int>(dim));
    for (std::size_t r = 0; r < dim; ++r)
        for (std::size_t c = 0; c < dim; ++c) matrix(static_cast<int>(r), static_cast<int>(c)) = columns[c * dim + r];
    return matrix;
}

std::string group_name(const Circuit& circuit, const Group& group) {
    constexpr std::size_t kNamesShown = 6;
    std::string name = "fused(";
    for (std::size_t i = 0; i < group.members.size() && i < kNamesShown; ++i) {
        name += (i ? "," : "") + circuit.operations[group.members[i]].name;
    }
    if (group.members.size() > kNamesShown) {
        name += ",... " + std::to_string(group.members.size()) + " in all";
    }
    return name + ")";
}

}  // namespace

Circuit fuse_gates(const Circuit& circuit, int max_qubits) {
    if (max_qubits < 1 || max_qubits > kMaxFusedQubits) {
        throw Error("fuse_gates: max_qubits " + std::to_string(max_qubits) + " is out of range: a fused gate spans 1.." +
                    std::to_string(kMaxFusedQubits) + " qubits (the most targets apply_matrix takes on the GPU)");
    }
    Grouper grouper(circuit.num_qubits, max_qubits);
    for (std::size_t i = 0; i < circuit.operations.size(); ++i) {
        const Operation& op = circuit.operations[i];
        try {
            validation::check_gate(circuit.num_qubits, op.targets, op.matrix, op.controls, {});
        } catch (const Error& e) {
            throw Error("fuse_gates: " + describe_operation(circuit, i) + ": " + e.what());
        }
        grouper.add(i, op);
    }
    const std::vector<Group> groups = merge_neighbours(grouper.finish(), max_qubits);

    Circuit fused = circuit;
    fused.operations.clear();
    fused.operations.reserve(groups.size());
    for (const Group& group : groups) {
        if (group.members.size() == 1) {
            fused.operations.push_back(circuit.operations[group.members.front()]);
            continue;
        }
        Operation op;
        op.name = group_name(circuit, group);
        op.targets = group.qubits;
        op.matrix = group_matrix(circuit, group);
        op.location = circuit.operations[group.members.front()].location;
        fused.operations.push_back(std::move(op));
    }
    return fused;
}

}  // namespace qmarg
