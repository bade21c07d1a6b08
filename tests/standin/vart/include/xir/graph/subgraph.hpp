// subgraph.hpp - xir::Subgraph (stand-in): a node of a graph's subgraph tree. The root's children are what a
// compiled .xmodel is cut into; each has the string attribute "device" ("USER", "CPU", "DPU"). An abstract
// interface with Vitis AI 3.5's virtual functions in its order and with its return types (its vtable is
// XIR's: tests/standin/facts/vart_3.5.txt); the implementation is the stand-in's libxir's. What needs ops
// (get_ops, find_op, topological_sort of ops, merge_children, isomorphism, ...) ends the process: the
// stand-in's graphs hold none.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "xir/XirExport.hpp"
#include "xir/graph/graph_template.hpp"
#include "xir/op/op.hpp"
#include "xir/util/any.hpp"
#include "xir/util/tool_function.hpp"

namespace xir {

class Graph;

class XIR_DLLESPEC Subgraph {
  public:
    virtual const std::string get_name() const = 0;
    virtual Subgraph* set_name(const std::string& subgraph_name) = 0;
    virtual std::int32_t get_op_num() const = 0;
    virtual std::set<Op*> get_ops() = 0;
    virtual const std::set<const Op*> get_ops() const = 0;
    virtual Op* get_tensor_producer(const Tensor* tensor) = 0;
    virtual const Op* get_tensor_producer(const Tensor* tensor) const = 0;

    // Tensors entering the subgraph (output tensors of ops outside it that its ops read) and leaving it (its
    // ops' output tensors read outside it or by none); its ops are its leaves' ops.
    virtual std::set<Tensor*> get_input_tensors() = 0;
    virtual const std::set<const Tensor*> get_input_tensors() const = 0;
    virtual std::vector<Tensor*> get_sorted_input_tensors(
        const std::function<bool(Tensor*, Tensor*)>& compare = TensorLexicographicalOrder) = 0;
    virtual const std::vector<const Tensor*> get_sorted_input_tensors(
        const std::function<bool(Tensor*, Tensor*)>& compare = TensorLexicographicalOrder) const = 0;
    virtual std::set<Tensor*> get_output_tensors() = 0;
    virtual const std::set<const Tensor*> get_output_tensors() const = 0;
    virtual std::vector<Tensor*> get_sorted_output_tensors(
        const std::function<bool(Tensor*, Tensor*)>& compare = TensorLexicographicalOrder) = 0;
    virtual const std::vector<const Tensor*> get_sorted_output_tensors(
        const std::function<bool(Tensor*, Tensor*)>& compare = TensorLexicographicalOrder) const = 0;

    virtual bool has_op(const std::string& op_name) const = 0;
    virtual bool has_op(const Op* op) const = 0;
    virtual Subgraph* find_op(const Op* op) = 0;
    virtual const Subgraph* find_op(const Op* op) const = 0;
    virtual Subgraph* find_op(const std::string& op_name) = 0;
    virtual const Subgraph* find_op(const std::string& op_name) const = 0;

    virtual bool is_root() const = 0;
    virtual bool is_leaf() const = 0;
    virtual Subgraph* get_root() = 0;
    virtual const Subgraph* get_root() const = 0;
    virtual std::int32_t get_depth() const = 0;  // the root's is 0
    virtual Subgraph* get_parent() = 0;
    virtual const Subgraph* get_parent() const = 0;
    virtual void create_children() = 0;
    virtual std::int32_t get_children_num() const = 0;
    virtual std::set<Subgraph*> get_children() = 0;
    virtual const std::set<const Subgraph*> get_children() const = 0;
    virtual bool is_child(Subgraph* subgraph) const = 0;
    virtual Subgraph* merge_children(std::set<Subgraph*> subgraph_list) = 0;
    virtual Graph* get_graph() = 0;
    virtual const Graph* get_graph() const = 0;
    // This subgraph or one below it, by name; nullptr if none.
    virtual Subgraph* get_subgraph(const std::string& name) = 0;
    virtual const Subgraph* get_subgraph(const std::string& name) const = 0;

    virtual bool has_attrs() const = 0;
    virtual std::unique_ptr<Attrs> get_attrs() const = 0;  // a copy
    virtual Subgraph* set_attrs(std::unique_ptr<Attrs> attrs) = 0;
    virtual bool has_attr(const std::string& key) const = 0;
    // A missing key ends the process.
    virtual const xir::any get_attr(const std::string& key) const = 0;
    virtual Subgraph* set_attr(const std::string& key, const xir::any& value) = 0;

    // A value of another type ends the process, as XIR's does.
    template <typename Dtype>
    const Dtype get_attr(const std::string& key) const {
        const xir::any value = this->get_attr(key);
        if (const Dtype* typed = xir::stdx::any_cast<Dtype>(&value)) return *typed;
        std::fprintf(stderr, "F xir: subgraph %s: attribute \"%s\" has another type\n", get_name().c_str(),
                     key.c_str());
        std::abort();
    }
    template <typename Dtype>
    Subgraph* set_attr(const std::string& key, const Dtype& value) {
        this->set_attr(key, xir::any{value});
        return this;
    }

    virtual std::vector<Op*> topological_sort() = 0;
    virtual const std::vector<const Op*> topological_sort() const = 0;
    // The children, each after the children whose ops' tensors it reads (ties in the file's order).
    virtual std::vector<Subgraph*> children_topological_sort() = 0;
    virtual const std::vector<const Subgraph*> children_topological_sort() const = 0;
    virtual std::vector<std::map<OpTemplate*, Op*>> isomorphism(GraphTemplate* graph_template) = 0;
    virtual void save_to_dot(const std::string& file_path) const = 0;
    virtual const std::string to_string(const std::string& delimiter = ",", const std::string& left_bracket = "{",
                                        const std::string& right_bracket = "}") const = 0;

  public:
    virtual ~Subgraph() = default;
};

}  // namespace xir
