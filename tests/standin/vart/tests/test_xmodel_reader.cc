// test_xmodel_reader.cc - the stand-in libxir's reader of XIR's serialized graph: a packed file's tree and
// tensors; XIR's subgraph semantics on a graph written here field by field; and what it refuses (truncated,
// garbage, wrong wire types, over-long varints, nesting too deep, inconsistent graphs) with std::runtime_error,
// which the vart driver reports as a bad model, never a crash. argv[1]: the folder of make_test_models.py.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "xir/graph/graph.hpp"

#include "check.h"

namespace {

// ---- a protobuf writer for hand-made files ----

std::string varint(std::uint64_t v) {
    std::string out;
    for (; v >= 0x80; v >>= 7) out += (char)(0x80 | (v & 0x7f));
    return out + (char)v;
}
std::string tag(std::uint32_t field, std::uint32_t type) { return varint((std::uint64_t)field << 3 | type); }
std::string len(std::uint32_t field, const std::string& bytes) { return tag(field, 2) + varint(bytes.size()) + bytes; }
std::string num(std::uint32_t field, std::uint64_t v) { return tag(field, 0) + varint(v); }

// AttrValue of an int32 or a string, as an entry of a map<string, AttrValue> field.
std::string int_attr(std::uint32_t field, const std::string& key, std::int32_t v) {
    return len(field, len(1, key) + len(2, num(5, (std::uint64_t)(std::int64_t)v)));
}
std::string str_attr(std::uint32_t field, const std::string& key, const std::string& v) {
    return len(field, len(1, key) + len(2, len(11, v)));
}

// An op with an xint8 output tensor of its own name; dims unpacked, as a writer may give them.
std::string op(const std::string& name, const std::vector<std::string>& reads, std::int32_t fix_point = 0) {
    std::string args;
    for (const std::string& r : reads) args += len(2, r);
    std::string tensor =
        len(1, name) + num(2, 1) + num(2, 4) + num(5, 2) + num(6, 8) + int_attr(10, "fix_point", fix_point);
    return len(
        5, len(1, name) + len(2, "test-op") + (reads.empty() ? "" : len(4, len(1, "input") + args)) + len(5, tensor));
}
std::string leaf(const std::string& name, const std::vector<std::string>& ops) {
    std::string s = len(1, name);
    for (const std::string& o : ops) s += len(3, o);
    return s;
}
std::string parent(const std::string& name, const std::string& device, const std::vector<std::string>& children) {
    std::string s = len(1, name) + str_attr(5, "device", device);
    for (const std::string& c : children) s += len(10, c);
    return s;
}

std::unique_ptr<xir::Graph> parse(const std::string& bytes) { return xir::Graph::deserialize_from_string(bytes); }

// `bytes` refused with a message containing `why`.
void refused(const std::string& bytes, const char* why) {
    try {
        parse(bytes);
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).find(why) != std::string::npos) return;
        fprintf(stderr, "refused for \"%s\", expected \"%s\"\n", e.what(), why);
        exit(1);
    }
    fprintf(stderr, "accepted a file that should be refused (%s)\n", why);
    exit(1);
}

// Of a const subgraph's tensors (const xir::Tensor*) or a non-const one's (xir::Tensor*), as XIR gives them.
template <typename TensorPtr>
std::vector<std::string> names(const std::vector<TensorPtr>& ts) {
    std::vector<std::string> out;
    for (const xir::Tensor* t : ts) out.push_back(t->get_name());
    return out;
}

const xir::Subgraph* child(const xir::Subgraph* s, const std::string& name) {
    for (const xir::Subgraph* c : s->children_topological_sort())
        if (c->get_name() == name) return c;
    CHECK(!"no such child");
    return nullptr;
}

// ---- the tests ----

// A packed file (make_xmodel.py through accel.compiler.xir.write): the tree, XIR's boundaries, the tensors.
void test_packed(const std::string& dir) {
    auto g = xir::Graph::deserialize(dir + "/conv.xmodel");
    CHECK(g->get_name() == "conv");
    std::vector<std::string> order;
    for (const xir::Subgraph* c : g->get_root_subgraph()->children_topological_sort()) order.push_back(c->get_name());
    CHECK(order == std::vector<std::string>({"subgraph_x", "subgraph_conv", "subgraph_y_fix2float"}));
    const xir::Subgraph* dpu = child(g->get_root_subgraph(), "subgraph_conv");
    CHECK(dpu->get_attr<std::string>("device") == "DPU" && !dpu->get_attr<std::vector<char>>("standin_accm").empty());
    CHECK(dpu->get_children_num() == 3 && !dpu->is_leaf());  // upload, standin-accm, download: a leaf each
    CHECK(names(dpu->get_sorted_input_tensors()) == std::vector<std::string>({"x"}));
    CHECK(names(dpu->get_sorted_output_tensors()) == std::vector<std::string>({"y"}));
    const xir::Tensor* x = dpu->get_sorted_input_tensors()[0];
    CHECK(x->get_shape() == std::vector<std::int32_t>({1, 8, 8, 3}) && x->get_attr<int>("fix_point") == 6);
    CHECK(x->get_data_type() == xir::DataType(xir::DataType::XINT, 8) && x->get_attr<int>("standin_nchw") == 1);
    CHECK(x->get_attr<bool>("if_signed") && x->get_attr<std::string>("round_mode") == "DPU_ROUND");
    CHECK(dpu->get_input_tensors().count(x) == 1 && dpu->get_output_tensors().size() == 1);
    const xir::Subgraph* user = child(g->get_root_subgraph(), "subgraph_x");
    CHECK(user->get_sorted_input_tensors().empty() && names(user->get_sorted_output_tensors())[0] == "x");
    CHECK(g->get_root_subgraph()->get_sorted_input_tensors().empty());
    CHECK(names(g->get_root_subgraph()->get_sorted_output_tensors()) == std::vector<std::string>({"y_fix2float"}));

    // Every prefix of the file is refused, or (cut after the subgraph tree, before the graph's attributes) reads
    // as the same graph without them.
    std::ifstream f(dir + "/conv.xmodel", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t refusals = 0;
    for (size_t n = 0; n < bytes.size(); n += n < 600 ? 1 : 61) {
        try {
            auto cut = parse(bytes.substr(0, n));
            CHECK(n > bytes.size() / 2);
            CHECK(names(child(cut->get_root_subgraph(), "subgraph_conv")->get_sorted_output_tensors())[0] == "y");
        } catch (const std::runtime_error&) {
            refusals++;
        }
    }
    CHECK(refusals > 600);
}

// XIR's semantics on a graph written field by field: a -> b -> c, b -> d; subgraph "s" holds b and c (in two
// leaves), "t" holds d, "u" holds a; written in the order t, s, u.
void test_semantics() {
    const std::string ops = op("a", {}, 3) + op("b", {"a"}) + op("c", {"b"}) + op("d", {"b"});
    const std::string s = parent("s", "DPU", {leaf("s_b", {"b"}), leaf("s_c", {"c"})});
    const std::string root = parent("root", "", {parent("t", "CPU", {leaf("t_d", {"d"})}), s, leaf("u", {"a"})});
    // Unknown fields (a varint, a fixed64, a fixed32, bytes) are skipped; a repeated name: the last one wins.
    const std::string extra =
        num(99, 7) + tag(98, 1) + std::string(8, '\1') + tag(97, 5) + std::string(4, '\2') + len(101, "op definitions");
    auto g = parse(len(1, "first") + extra + ops + len(10, root) + len(1, "graph"));
    CHECK(g->get_name() == "graph");
    std::vector<std::string> order;
    for (const xir::Subgraph* c : g->get_root_subgraph()->children_topological_sort()) order.push_back(c->get_name());
    CHECK(order == std::vector<std::string>({"u", "s", "t"}));  // by what reads what, not the file's order
    const xir::Subgraph* sub = child(g->get_root_subgraph(), "s");
    CHECK(names(sub->get_sorted_input_tensors()) == std::vector<std::string>({"a"}));
    CHECK(names(sub->get_sorted_output_tensors()) ==
          std::vector<std::string>({"b", "c"}));  // b read outside, c by none
    CHECK(sub->get_sorted_input_tensors()[0]->get_attr<int>("fix_point") == 3);
    const xir::Subgraph* leaf_c = child(sub, "s_c");
    CHECK(leaf_c->is_leaf() && names(leaf_c->get_sorted_input_tensors())[0] == "b");
    CHECK(sub->get_attr<std::string>("device") == "DPU");

    // Packed dims read as unpacked ones.
    const std::string packed_tensor = len(1, "p") + len(2, varint(2) + varint(300)) + num(5, 4) + num(6, 32);
    auto p = parse(len(5, len(1, "p") + len(2, "data") + len(5, packed_tensor)) + len(10, leaf("root", {"p"})));
    const xir::Tensor* pt = p->get_root_subgraph()->get_sorted_output_tensors()[0];
    CHECK(pt->get_shape() == std::vector<std::int32_t>({2, 300}));
    CHECK(pt->get_data_type() == xir::DataType(xir::DataType::FLOAT, 32));
}

void test_refusals() {
    const std::string root = len(10, parent("root", "", {leaf("l", {"a"})}));
    const std::string good = op("a", {}) + root;
    CHECK(parse(good) != nullptr);
    refused("", "no ops");
    refused("not a serialized XIR graph", "wire type");
    refused(len(1, "g") + tag(5, 2) + varint(1000) + "short", "truncated");
    refused(num(1, 3) + good, "wire type");                                  // the graph's name as a number
    refused(tag(1, 3) + good, "wire type");                                  // a group
    refused(std::string(1, '\0') + good, "invalid number");                  // field 0
    refused(tag(99, 0) + std::string(11, '\xff') + "\x01" + good, "varint");  // 12 bytes
    refused(good.substr(0, good.size() - 1), "truncated");
    refused(op("a", {}), "no subgraph tree");
    refused(op("a", {}) + op("a", {}) + root, "two ops are named");
    refused(op("a", {"zz"}) + root, "does not have");
    refused(op("a", {"b"}) + op("b", {"a"}) + root, "cycle");
    refused(op("a", {}) + len(10, parent("root", "", {leaf("l", {"a"}), leaf("m", {"a"})})), "two subgraphs");
    refused(op("a", {}) + len(10, parent("root", "", {leaf("l", {"q"})})), "does not have");
    refused(op("a", {}) + op("b", {"a"}) + op("c", {"b"}) +
                len(10, parent("root", "", {leaf("l", {"a", "c"}), leaf("m", {"b"})})),
            "read each other");
    std::string nine_dims = len(1, "a") + num(5, 2) + num(6, 8);
    for (int i = 0; i < 9; i++) nine_dims += num(2, 1);
    refused(len(5, len(1, "a") + len(2, "t") + len(5, nine_dims)) + root, "9 dims");
    refused(len(5, len(1, "a") + len(2, "t") + len(5, len(1, "a") + num(2, 0) + num(5, 2) + num(6, 8))) + root,
            "a dim of 0");
    const std::string bad_type = len(1, "a") + num(2, 1) + num(5, 9) + num(6, 8);
    refused(len(5, len(1, "a") + len(2, "t") + len(5, bad_type)) + root, "data type 9");
    refused(len(5, len(1, "a") + len(2, "t") +
                       len(5, len(1, "a") + num(2, 1) + num(5, 2) + num(6, 8) + len(10, len(1, "fix_point")))) +
                root,
            "has no value");

    // Too deep: subgraphs nested past XIR's tree depth, and messages nested past the wire reader's limit.
    std::string deep = leaf("l", {"a"});
    for (int i = 0; i < 20; i++) deep = parent("s" + std::to_string(i), "", {deep});
    refused(op("a", {}) + len(10, deep), "nested");
    for (int i = 0; i < 60; i++) deep = parent("t" + std::to_string(i), "", {deep});
    refused(op("a", {}) + len(10, deep), "nested");

    // Garbage: random bytes (a fixed seed) are refused, never read past their end.
    std::uint64_t state = 88172645463325252ull;
    for (int round = 0; round < 2000; round++) {
        std::string junk(1 + round % 300, '\0');
        for (char& c : junk) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            c = (char)(state >> 24);
        }
        try {
            parse(junk);
            CHECK(!"random bytes accepted");
        } catch (const std::runtime_error&) {
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    CHECK(argc >= 2);
    test_packed(argv[1]);
    test_semantics();
    test_refusals();
    printf("standin xmodel reader: ok\n");
    return 0;
}
