// test_facts.cc - the stand-in VART/XIR's ABI next to Vitis AI 3.5's (tests/standin/facts/vart_3.5.txt): every
// virtual function's vtable slot, each class's slot count, the enums' values and the sizes a caller relies on,
// computed from the headers this is compiled against. Fails on any difference and on any key missing from
// either side.
//   test_facts FACTS_FILE   compare (the ctest)
//   test_facts --print      print what the headers give (compiled against the real headers: how the facts
//                           file was checked; see its header)
// A slot comes from a pointer to a virtual member function: under the Itanium C++ ABI it holds 1 + the byte
// offset of the function's entry in the vtable, so slot = (word - 1) / sizeof(void*); under ARM's variant of it
// (AArch64 and 32-bit Arm, where the low bit of a code address is taken) the first word is the offset itself and
// the second word's low bit says "virtual". A full signature is given
// for every function, so a different parameter or return type does not compile (XIR's const scalar return types
// are part of those signatures: -Wno-ignored-qualifiers).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vart/runner.hpp"
#include "vart/runner_ext.hpp"
#include "vart/tensor_buffer.hpp"
#include "xir/attrs/attrs.hpp"
#include "xir/graph/graph.hpp"
#include "xir/graph/subgraph.hpp"
#include "xir/tensor/tensor.hpp"
#include "xir/util/data_type.hpp"

namespace {

using Facts = std::map<std::string, std::string>;

template <typename F>
std::string slot_of(F f) {
    static_assert(sizeof f == 2 * sizeof(void*), "an Itanium C++ ABI pointer to member function");
    std::uintptr_t word[2];
    std::memcpy(word, &f, sizeof word);
#if defined(__aarch64__) || defined(__arm__)
    if (!(word[1] & 1)) return "not-virtual";
    return std::to_string(word[0] / sizeof(void*));
#else
    if (!(word[0] & 1)) return "not-virtual";
    return std::to_string((word[0] - 1) / sizeof(void*));
#endif
}

// A class derived with one more virtual function: its slot is the base's slot count (the destructor's two
// Itanium slots, complete and deleting, included).
struct TensorProbe : xir::Tensor { virtual void probe() = 0; };
struct SubgraphProbe : xir::Subgraph { virtual void probe() = 0; };
struct GraphProbe : xir::Graph { virtual void probe() = 0; };
struct AttrsProbe : xir::Attrs { virtual void probe() = 0; };
struct TensorBufferProbe : vart::TensorBuffer {
    using vart::TensorBuffer::TensorBuffer;
    virtual void probe() = 0;
};
struct RunnerProbe : vart::Runner { virtual void probe() = 0; };
struct RunnerExtProbe : vart::RunnerExt { virtual void probe() = 0; };

#define SLOT(cls, key, type, member) facts["slot." cls "." key] = slot_of(static_cast<type>(member))
#define SLOTS(cls, derived) facts["slots." cls] = slot_of(&derived::probe)
#define FACT(key, value) facts[key] = std::to_string(value)

void tensor_facts(Facts& facts) {
    using xir::Tensor;
    using S = std::string;
    using Shape = std::vector<std::int32_t>;
    SLOT("xir::Tensor", "get_name", const S (Tensor::*)() const, &Tensor::get_name);
    SLOT("xir::Tensor", "get_producer.const", const xir::Op* (Tensor::*)() const, &Tensor::get_producer);
    SLOT("xir::Tensor", "get_producer", xir::Op * (Tensor::*)(), &Tensor::get_producer);
    SLOT("xir::Tensor", "get_shape", const Shape (Tensor::*)() const, &Tensor::get_shape);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    SLOT("xir::Tensor", "get_dims", const Shape (Tensor::*)() const, &Tensor::get_dims);
    SLOT("xir::Tensor", "get_dim_num", const std::int32_t (Tensor::*)() const, &Tensor::get_dim_num);
    SLOT("xir::Tensor", "get_dim_size", const std::int32_t (Tensor::*)(std::int32_t) const, &Tensor::get_dim_size);
    SLOT("xir::Tensor", "get_bit_width", const std::int32_t (Tensor::*)() const, &Tensor::get_bit_width);
#pragma GCC diagnostic pop
    SLOT("xir::Tensor", "get_element_num", const std::int64_t (Tensor::*)() const, &Tensor::get_element_num);
    SLOT("xir::Tensor", "get_data_type", const xir::DataType& (Tensor::*)() const, &Tensor::get_data_type);
    SLOT("xir::Tensor", "get_data_size", const std::uint64_t (Tensor::*)() const, &Tensor::get_data_size);
    SLOT("xir::Tensor", "get_attrs", std::unique_ptr<xir::Attrs> (Tensor::*)() const, &Tensor::get_attrs);
    SLOT("xir::Tensor", "set_attrs", Tensor * (Tensor::*)(std::unique_ptr<xir::Attrs>), &Tensor::set_attrs);
    SLOT("xir::Tensor", "has_attr", const bool (Tensor::*)(const S&) const, &Tensor::has_attr);
    SLOT("xir::Tensor", "get_attr", const xir::any (Tensor::*)(const S&) const, &Tensor::get_attr);
    SLOT("xir::Tensor", "set_attr", Tensor * (Tensor::*)(const S&, const xir::any&), &Tensor::set_attr);
    SLOT("xir::Tensor", "rename", Tensor * (Tensor::*)(const S&), &Tensor::rename);
    SLOT("xir::Tensor", "to_string", const S (Tensor::*)(const S&, const S&, const S&) const, &Tensor::to_string);
    SLOTS("xir::Tensor", TensorProbe);
    FACT("sizeof.xir::Tensor::get_data_size.return", sizeof(std::declval<const Tensor&>().get_data_size()));
    FACT("signed.xir::Tensor::get_data_size.return",
         std::is_signed<decltype(std::declval<const Tensor&>().get_data_size())>::value);
    FACT("sizeof.xir::Tensor::get_element_num.return", sizeof(std::declval<const Tensor&>().get_element_num()));
    FACT("signed.xir::Tensor::get_element_num.return",
         std::is_signed<decltype(std::declval<const Tensor&>().get_element_num())>::value);
}

void subgraph_facts(Facts& facts) {
    using xir::Op;
    using xir::Subgraph;
    using xir::Tensor;
    using S = std::string;
    using Order = std::function<bool(Tensor*, Tensor*)>;
    using Matches = std::vector<std::map<xir::OpTemplate*, Op*>>;
    SLOT("xir::Subgraph", "get_name", const S (Subgraph::*)() const, &Subgraph::get_name);
    SLOT("xir::Subgraph", "set_name", Subgraph * (Subgraph::*)(const S&), &Subgraph::set_name);
    SLOT("xir::Subgraph", "get_op_num", std::int32_t (Subgraph::*)() const, &Subgraph::get_op_num);
    SLOT("xir::Subgraph", "get_ops", std::set<Op*> (Subgraph::*)(), &Subgraph::get_ops);
    SLOT("xir::Subgraph", "get_ops.const", const std::set<const Op*> (Subgraph::*)() const, &Subgraph::get_ops);
    SLOT("xir::Subgraph", "get_tensor_producer", Op * (Subgraph::*)(const Tensor*), &Subgraph::get_tensor_producer);
    SLOT("xir::Subgraph", "get_tensor_producer.const", const Op* (Subgraph::*)(const Tensor*) const,
         &Subgraph::get_tensor_producer);
    SLOT("xir::Subgraph", "get_input_tensors", std::set<Tensor*> (Subgraph::*)(), &Subgraph::get_input_tensors);
    SLOT("xir::Subgraph", "get_input_tensors.const", const std::set<const Tensor*> (Subgraph::*)() const,
         &Subgraph::get_input_tensors);
    SLOT("xir::Subgraph", "get_sorted_input_tensors", std::vector<Tensor*> (Subgraph::*)(const Order&),
         &Subgraph::get_sorted_input_tensors);
    SLOT("xir::Subgraph", "get_sorted_input_tensors.const",
         const std::vector<const Tensor*> (Subgraph::*)(const Order&) const, &Subgraph::get_sorted_input_tensors);
    SLOT("xir::Subgraph", "get_output_tensors", std::set<Tensor*> (Subgraph::*)(), &Subgraph::get_output_tensors);
    SLOT("xir::Subgraph", "get_output_tensors.const", const std::set<const Tensor*> (Subgraph::*)() const,
         &Subgraph::get_output_tensors);
    SLOT("xir::Subgraph", "get_sorted_output_tensors", std::vector<Tensor*> (Subgraph::*)(const Order&),
         &Subgraph::get_sorted_output_tensors);
    SLOT("xir::Subgraph", "get_sorted_output_tensors.const",
         const std::vector<const Tensor*> (Subgraph::*)(const Order&) const, &Subgraph::get_sorted_output_tensors);
    SLOT("xir::Subgraph", "has_op.name", bool (Subgraph::*)(const S&) const, &Subgraph::has_op);
    SLOT("xir::Subgraph", "has_op.op", bool (Subgraph::*)(const Op*) const, &Subgraph::has_op);
    SLOT("xir::Subgraph", "find_op.op", Subgraph * (Subgraph::*)(const Op*), &Subgraph::find_op);
    SLOT("xir::Subgraph", "find_op.op.const", const Subgraph* (Subgraph::*)(const Op*) const, &Subgraph::find_op);
    SLOT("xir::Subgraph", "find_op.name", Subgraph * (Subgraph::*)(const S&), &Subgraph::find_op);
    SLOT("xir::Subgraph", "find_op.name.const", const Subgraph* (Subgraph::*)(const S&) const, &Subgraph::find_op);
    SLOT("xir::Subgraph", "is_root", bool (Subgraph::*)() const, &Subgraph::is_root);
    SLOT("xir::Subgraph", "is_leaf", bool (Subgraph::*)() const, &Subgraph::is_leaf);
    SLOT("xir::Subgraph", "get_root", Subgraph * (Subgraph::*)(), &Subgraph::get_root);
    SLOT("xir::Subgraph", "get_root.const", const Subgraph* (Subgraph::*)() const, &Subgraph::get_root);
    SLOT("xir::Subgraph", "get_depth", std::int32_t (Subgraph::*)() const, &Subgraph::get_depth);
    SLOT("xir::Subgraph", "get_parent", Subgraph * (Subgraph::*)(), &Subgraph::get_parent);
    SLOT("xir::Subgraph", "get_parent.const", const Subgraph* (Subgraph::*)() const, &Subgraph::get_parent);
    SLOT("xir::Subgraph", "create_children", void (Subgraph::*)(), &Subgraph::create_children);
    SLOT("xir::Subgraph", "get_children_num", std::int32_t (Subgraph::*)() const, &Subgraph::get_children_num);
    SLOT("xir::Subgraph", "get_children", std::set<Subgraph*> (Subgraph::*)(), &Subgraph::get_children);
    SLOT("xir::Subgraph", "get_children.const", const std::set<const Subgraph*> (Subgraph::*)() const,
         &Subgraph::get_children);
    SLOT("xir::Subgraph", "is_child", bool (Subgraph::*)(Subgraph*) const, &Subgraph::is_child);
    SLOT("xir::Subgraph", "merge_children", Subgraph * (Subgraph::*)(std::set<Subgraph*>), &Subgraph::merge_children);
    SLOT("xir::Subgraph", "get_graph", xir::Graph * (Subgraph::*)(), &Subgraph::get_graph);
    SLOT("xir::Subgraph", "get_graph.const", const xir::Graph* (Subgraph::*)() const, &Subgraph::get_graph);
    SLOT("xir::Subgraph", "get_subgraph", Subgraph * (Subgraph::*)(const S&), &Subgraph::get_subgraph);
    SLOT("xir::Subgraph", "get_subgraph.const", const Subgraph* (Subgraph::*)(const S&) const, &Subgraph::get_subgraph);
    SLOT("xir::Subgraph", "has_attrs", bool (Subgraph::*)() const, &Subgraph::has_attrs);
    SLOT("xir::Subgraph", "get_attrs", std::unique_ptr<xir::Attrs> (Subgraph::*)() const, &Subgraph::get_attrs);
    SLOT("xir::Subgraph", "set_attrs", Subgraph * (Subgraph::*)(std::unique_ptr<xir::Attrs>), &Subgraph::set_attrs);
    SLOT("xir::Subgraph", "has_attr", bool (Subgraph::*)(const S&) const, &Subgraph::has_attr);
    SLOT("xir::Subgraph", "get_attr", const xir::any (Subgraph::*)(const S&) const, &Subgraph::get_attr);
    SLOT("xir::Subgraph", "set_attr", Subgraph * (Subgraph::*)(const S&, const xir::any&), &Subgraph::set_attr);
    SLOT("xir::Subgraph", "topological_sort", std::vector<Op*> (Subgraph::*)(), &Subgraph::topological_sort);
    SLOT("xir::Subgraph", "topological_sort.const", const std::vector<const Op*> (Subgraph::*)() const,
         &Subgraph::topological_sort);
    SLOT("xir::Subgraph", "children_topological_sort", std::vector<Subgraph*> (Subgraph::*)(),
         &Subgraph::children_topological_sort);
    SLOT("xir::Subgraph", "children_topological_sort.const", const std::vector<const Subgraph*> (Subgraph::*)() const,
         &Subgraph::children_topological_sort);
    SLOT("xir::Subgraph", "isomorphism", Matches (Subgraph::*)(xir::GraphTemplate*), &Subgraph::isomorphism);
    SLOT("xir::Subgraph", "save_to_dot", void (Subgraph::*)(const S&) const, &Subgraph::save_to_dot);
    SLOT("xir::Subgraph", "to_string", const S (Subgraph::*)(const S&, const S&, const S&) const, &Subgraph::to_string);
    SLOTS("xir::Subgraph", SubgraphProbe);
}

void graph_facts(Facts& facts) {
    using xir::Graph;
    using xir::Op;
    using xir::Subgraph;
    using xir::Tensor;
    using S = std::string;
    using Inputs = std::map<S, std::vector<Op*>>;
    using Creator = std::function<std::map<Op*, Op*>(Graph*, std::map<S, Op*>)>;
    using Matches = std::vector<std::map<xir::OpTemplate*, Op*>>;
    SLOT("xir::Graph", "get_name", const S (Graph::*)() const, &Graph::get_name);
    SLOT("xir::Graph", "add_op",
         Op * (Graph::*)(const S&, const S&, std::unique_ptr<xir::Attrs>, const Inputs&, Subgraph*), &Graph::add_op);
    SLOT("xir::Graph", "add_op.data_type",
         Op * (Graph::*)(const S&, const S&, std::unique_ptr<xir::Attrs>, const Inputs&, const xir::DataType&,
                         Subgraph*),
         &Graph::add_op);
    SLOT("xir::Graph", "remove_op", void (Graph::*)(Op*), &Graph::remove_op);
    SLOT("xir::Graph", "replace_ops", void (Graph::*)(std::map<S, Op*>, Creator), &Graph::replace_ops);
    SLOT("xir::Graph", "get_op", Op * (Graph::*)(const S&), &Graph::get_op);
    SLOT("xir::Graph", "get_op.const", const Op* (Graph::*)(const S&) const, &Graph::get_op);
    SLOT("xir::Graph", "get_tensor", Tensor * (Graph::*)(const S&), &Graph::get_tensor);
    SLOT("xir::Graph", "get_tensor.const", const Tensor* (Graph::*)(const S&) const, &Graph::get_tensor);
    SLOT("xir::Graph", "get_op_num", int (Graph::*)() const, &Graph::get_op_num);
    SLOT("xir::Graph", "get_ops", std::set<Op*> (Graph::*)(), &Graph::get_ops);
    SLOT("xir::Graph", "get_ops.const", const std::set<const Op*> (Graph::*)() const, &Graph::get_ops);
    SLOT("xir::Graph", "get_tensors", std::set<Tensor*> (Graph::*)(), &Graph::get_tensors);
    SLOT("xir::Graph", "get_tensors.const", const std::set<const Tensor*> (Graph::*)() const, &Graph::get_tensors);
    SLOT("xir::Graph", "get_head_ops", std::set<Op*> (Graph::*)(), &Graph::get_head_ops);
    SLOT("xir::Graph", "get_head_ops.const", const std::set<const Op*> (Graph::*)() const, &Graph::get_head_ops);
    SLOT("xir::Graph", "get_tail_ops", std::set<Op*> (Graph::*)(), &Graph::get_tail_ops);
    SLOT("xir::Graph", "get_tail_ops.const", const std::set<const Op*> (Graph::*)() const, &Graph::get_tail_ops);
    SLOT("xir::Graph", "get_tensor_producer", Op * (Graph::*)(const Tensor*), &Graph::get_tensor_producer);
    SLOT("xir::Graph", "get_tensor_producer.const", const Op* (Graph::*)(const Tensor*) const,
         &Graph::get_tensor_producer);
    SLOT("xir::Graph", "topological_sort", std::vector<Op*> (Graph::*)(), &Graph::topological_sort);
    SLOT("xir::Graph", "topological_sort.const", const std::vector<const Op*> (Graph::*)() const,
         &Graph::topological_sort);
    SLOT("xir::Graph", "infer_shape", void (Graph::*)(), &Graph::infer_shape);
    SLOT("xir::Graph", "isomorphism", Matches (Graph::*)(xir::GraphTemplate*), &Graph::isomorphism);
    SLOT("xir::Graph", "save_to_dot", void (Graph::*)(const S&) const, &Graph::save_to_dot);
    SLOT("xir::Graph", "visualize", void (Graph::*)(const S&, const S&) const, &Graph::visualize);
    SLOT("xir::Graph", "serialize", void (Graph::*)(const S&) const, &Graph::serialize);
    SLOT("xir::Graph", "serialize_to_string", void (Graph::*)(S*) const, &Graph::serialize_to_string);
    SLOT("xir::Graph", "get_root_subgraph.const", const Subgraph* (Graph::*)() const, &Graph::get_root_subgraph);
    SLOT("xir::Graph", "get_root_subgraph", Subgraph * (Graph::*)(), &Graph::get_root_subgraph);
    SLOT("xir::Graph", "get_leaf_subgraph", Subgraph * (Graph::*)(const Op*), &Graph::get_leaf_subgraph);
    SLOT("xir::Graph", "get_leaf_subgraph.const", const Subgraph* (Graph::*)(const Op*) const,
         &Graph::get_leaf_subgraph);
    SLOT("xir::Graph", "get_subgraph", Subgraph * (Graph::*)(const S&), &Graph::get_subgraph);
    SLOT("xir::Graph", "get_subgraph.const", const Subgraph* (Graph::*)(const S&) const, &Graph::get_subgraph);
    SLOT("xir::Graph", "has_attrs", bool (Graph::*)() const, &Graph::has_attrs);
    SLOT("xir::Graph", "get_attrs", std::unique_ptr<xir::Attrs> (Graph::*)() const, &Graph::get_attrs);
    SLOT("xir::Graph", "set_attrs", Graph * (Graph::*)(std::unique_ptr<xir::Attrs>), &Graph::set_attrs);
    SLOT("xir::Graph", "has_attr", bool (Graph::*)(const S&) const, &Graph::has_attr);
    SLOT("xir::Graph", "get_attr", const xir::any (Graph::*)(const S&) const, &Graph::get_attr);
    SLOT("xir::Graph", "set_attr", Graph * (Graph::*)(const S&, const xir::any&), &Graph::set_attr);
    SLOT("xir::Graph", "to_string", const S (Graph::*)(const S&, const S&, const S&) const, &Graph::to_string);
    SLOTS("xir::Graph", GraphProbe);
    // Static, not in the vtable: that they exist with these types is the fact (a mismatch does not compile).
    using Reader = std::unique_ptr<Graph> (*)(const S&);
    FACT("exists.xir::Graph::deserialize", (std::is_same<decltype(&Graph::deserialize), Reader>::value));
    FACT("exists.xir::Graph::deserialize_from_string",
         (std::is_same<decltype(&Graph::deserialize_from_string), Reader>::value));
}

void attrs_facts(Facts& facts) {
    using xir::Attrs;
    using S = std::string;
    SLOT("xir::Attrs", "has_attr", bool (Attrs::*)(const S&, const std::type_info&) const, &Attrs::has_attr);
    SLOT("xir::Attrs", "get_attr.const", const xir::any& (Attrs::*)(const S&) const, &Attrs::get_attr);
    SLOT("xir::Attrs", "get_attr", xir::any & (Attrs::*)(const S&), &Attrs::get_attr);
    SLOT("xir::Attrs", "get_keys", std::vector<S> (Attrs::*)() const, &Attrs::get_keys);
    SLOT("xir::Attrs", "set_attr", Attrs * (Attrs::*)(const S&, const xir::any&), &Attrs::set_attr);
    SLOT("xir::Attrs", "del_attr", bool (Attrs::*)(const S&), &Attrs::del_attr);
    SLOT("xir::Attrs", "debug_info", S (Attrs::*)() const, &Attrs::debug_info);
    SLOTS("xir::Attrs", AttrsProbe);
}

void data_type_facts(Facts& facts) {
    using T = xir::DataType;
    FACT("enum.xir::DataType::INT", T::INT);
    FACT("enum.xir::DataType::UINT", T::UINT);
    FACT("enum.xir::DataType::XINT", T::XINT);
    FACT("enum.xir::DataType::XUINT", T::XUINT);
    FACT("enum.xir::DataType::FLOAT", T::FLOAT);
    FACT("enum.xir::DataType::BFLOAT", T::BFLOAT);
    FACT("enum.xir::DataType::UNKNOWN", T::UNKNOWN);
    FACT("sizeof.xir::DataType::Type", sizeof(T::Type));
    FACT("sizeof.xir::DataType", sizeof(T));
    FACT("offsetof.xir::DataType::type", offsetof(T, type));
    FACT("offsetof.xir::DataType::bit_width", offsetof(T, bit_width));
}

void tensor_buffer_facts(Facts& facts) {
    using vart::TensorBuffer;
    using Index = const std::vector<std::int32_t>;
    using Where = std::pair<std::uint64_t, std::size_t>;
    SLOT("vart::TensorBuffer", "data", Where (TensorBuffer::*)(Index), &TensorBuffer::data);
    SLOT("vart::TensorBuffer", "get_location", TensorBuffer::location_t (TensorBuffer::*)() const,
         &TensorBuffer::get_location);
    SLOT("vart::TensorBuffer", "data_phy", Where (TensorBuffer::*)(Index), &TensorBuffer::data_phy);
    SLOT("vart::TensorBuffer", "sync_for_read", void (TensorBuffer::*)(std::uint64_t, std::size_t),
         &TensorBuffer::sync_for_read);
    SLOT("vart::TensorBuffer", "sync_for_write", void (TensorBuffer::*)(std::uint64_t, std::size_t),
         &TensorBuffer::sync_for_write);
    SLOT("vart::TensorBuffer", "copy_from_host",
         void (TensorBuffer::*)(std::size_t, const void*, std::size_t, std::size_t), &TensorBuffer::copy_from_host);
    SLOT("vart::TensorBuffer", "copy_to_host", void (TensorBuffer::*)(std::size_t, void*, std::size_t, std::size_t),
         &TensorBuffer::copy_to_host);
    SLOT("vart::TensorBuffer", "to_string", std::string (TensorBuffer::*)() const, &TensorBuffer::to_string);
    SLOTS("vart::TensorBuffer", TensorBufferProbe);
    using L = TensorBuffer::location_t;
    const std::pair<const char*, L> locations[] = {
        {"HOST_VIRT", L::HOST_VIRT}, {"HOST_PHY", L::HOST_PHY}, {"DEVICE_0", L::DEVICE_0}, {"DEVICE_1", L::DEVICE_1},
        {"DEVICE_2", L::DEVICE_2},   {"DEVICE_3", L::DEVICE_3}, {"DEVICE_4", L::DEVICE_4}, {"DEVICE_5", L::DEVICE_5},
        {"DEVICE_6", L::DEVICE_6},   {"DEVICE_7", L::DEVICE_7}};
    for (const auto& l : locations)
        facts[std::string("enum.vart::TensorBuffer::location_t::") + l.first] = std::to_string((int)l.second);
    FACT("sizeof.vart::TensorBuffer::location_t", sizeof(L));
    // A subclass's members follow the vtable pointer and tensor_ (the driver's HostView is one).
    FACT("sizeof.vart::TensorBuffer", sizeof(TensorBuffer));
    FACT("sizeof.vart::TensorBuffer::data.return.first", sizeof(Where::first_type));
    FACT("sizeof.vart::TensorBuffer::data.return.second", sizeof(Where::second_type));
}

void runner_facts(Facts& facts) {
    using vart::Runner;
    using vart::RunnerExt;
    using Buffers = std::vector<vart::TensorBuffer*>;
    using Tensors = std::vector<const xir::Tensor*>;
    using Started = std::pair<std::uint32_t, int>;
    SLOT("vart::Runner", "execute_async", Started (Runner::*)(const Buffers&, const Buffers&), &Runner::execute_async);
    SLOT("vart::Runner", "wait", int (Runner::*)(int, int), &Runner::wait);
    SLOT("vart::Runner", "get_tensor_format", Runner::TensorFormat (Runner::*)(), &Runner::get_tensor_format);
    SLOT("vart::Runner", "get_input_tensors", Tensors (Runner::*)(), &Runner::get_input_tensors);
    SLOT("vart::Runner", "get_output_tensors", Tensors (Runner::*)(), &Runner::get_output_tensors);
    SLOTS("vart::Runner", RunnerProbe);
    SLOT("vart::RunnerExt", "get_inputs", Buffers (RunnerExt::*)(), &RunnerExt::get_inputs);
    SLOT("vart::RunnerExt", "get_outputs", Buffers (RunnerExt::*)(), &RunnerExt::get_outputs);
    SLOTS("vart::RunnerExt", RunnerExtProbe);
    FACT("enum.vart::Runner::TensorFormat::NHWC", (int)Runner::TensorFormat::NHWC);
    FACT("enum.vart::Runner::TensorFormat::NCHW", (int)Runner::TensorFormat::NCHW);
    FACT("sizeof.vart::Runner::execute_async.return.first", sizeof(Started::first_type));
    FACT("sizeof.vart::Runner", sizeof(Runner));
}

Facts compute() {
    Facts facts;
    tensor_facts(facts);
    subgraph_facts(facts);
    graph_facts(facts);
    attrs_facts(facts);
    data_type_facts(facts);
    tensor_buffer_facts(facts);
    runner_facts(facts);
    return facts;
}

// KEY VALUE lines; '#' starts a comment.
bool read_facts(const char* path, Facts& out) {
    std::ifstream f(path);
    if (!f) return false;
    std::string line;
    while (std::getline(f, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::string key, value, extra;
        if (!(words >> key)) continue;
        if (!(words >> value) || (words >> extra)) {
            std::fprintf(stderr, "%s: bad line \"%s\"\n", path, line.c_str());
            return false;
        }
        out[key] = value;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    const Facts mine = compute();
    if (argc == 2 && std::strcmp(argv[1], "--print") == 0) {
        for (const auto& kv : mine) std::printf("%s %s\n", kv.first.c_str(), kv.second.c_str());
        return 0;
    }
    Facts real;
    if (argc != 2 || !read_facts(argv[1], real)) {
        std::fprintf(stderr, "usage: %s FACTS_FILE | --print\n", argv[0]);
        return 2;
    }
    int bad = 0;
    std::printf("%-60s %-12s %s\n", "KEY", "STAND-IN", "REAL");
    for (const auto& kv : real) {
        const auto it = mine.find(kv.first);
        const std::string have = it == mine.end() ? "(missing)" : it->second;
        const bool ok = have == kv.second;
        bad += !ok;
        std::printf("%-60s %-12s %s%s\n", kv.first.c_str(), have.c_str(), kv.second.c_str(),
                    ok ? "" : "   <-- DIFFERS");
    }
    for (const auto& kv : mine)
        if (!real.count(kv.first)) {
            bad++;
            std::printf("%-60s %-12s (missing from the facts file)   <-- DIFFERS\n", kv.first.c_str(),
                        kv.second.c_str());
        }
    std::printf("%zu facts, %d differ\n", real.size(), bad);
    return bad ? 1 : 0;
}
