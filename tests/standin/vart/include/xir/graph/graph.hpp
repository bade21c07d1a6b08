// graph.hpp - xir::Graph (stand-in): a compiled model read from an .xmodel (XIR's serialized graph,
// tests/standin/vart/FORMAT.md). A runner created on one of its subgraphs does not own the graph: the graph
// must outlive every runner made from it. An abstract interface with Vitis AI 3.5's virtual functions in its
// order and with its return types (its vtable is XIR's: tests/standin/facts/vart_3.5.txt); deserialize gives
// the stand-in's implementation. The stand-in's graphs hold tensors, subgraphs and attributes, no ops: what
// needs ops (add_op, get_op, topological_sort, infer_shape, ...) and what writes a graph out (serialize,
// save_to_dot, visualize) ends the process.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "xir/XirExport.hpp"
#include "xir/graph/graph_template.hpp"
#include "xir/graph/subgraph.hpp"
#include "xir/op/op.hpp"
#include "xir/util/data_type.hpp"

namespace xir {

class XIR_DLLESPEC Graph {
  public:
    // An empty graph (its root subgraph only).
    static std::unique_ptr<Graph> create(std::string name);

    virtual const std::string get_name() const = 0;
    virtual Op* add_op(const std::string& name, const std::string& type, std::unique_ptr<Attrs> attrs,
                       const std::map<std::string, std::vector<Op*>>& input_ops_map, Subgraph* subgraph = nullptr) = 0;
    virtual Op* add_op(const std::string& name, const std::string& type, std::unique_ptr<Attrs> attrs,
                       const std::map<std::string, std::vector<Op*>>& input_ops_map,
                       const DataType& output_data_type, Subgraph* subgraph = nullptr) = 0;
    virtual void remove_op(Op* op) = 0;
    virtual void replace_ops(std::map<std::string, Op*> replaced_ops,
                             std::function<std::map<Op*, Op*>(Graph*, std::map<std::string, Op*>)> creator) = 0;
    virtual Op* get_op(const std::string& op_name) = 0;
    virtual const Op* get_op(const std::string& op_name) const = 0;
    // By name; nullptr if the graph has none.
    virtual Tensor* get_tensor(const std::string& tensor_name) = 0;
    virtual const Tensor* get_tensor(const std::string& tensor_name) const = 0;
    virtual int get_op_num() const = 0;  // one tensor per op: the number of tensors
    virtual std::set<Op*> get_ops() = 0;
    virtual const std::set<const Op*> get_ops() const = 0;
    virtual std::set<Tensor*> get_tensors() = 0;
    virtual const std::set<const Tensor*> get_tensors() const = 0;
    virtual std::set<Op*> get_head_ops() = 0;
    virtual const std::set<const Op*> get_head_ops() const = 0;
    virtual std::set<Op*> get_tail_ops() = 0;
    virtual const std::set<const Op*> get_tail_ops() const = 0;
    virtual Op* get_tensor_producer(const Tensor* tensor) = 0;
    virtual const Op* get_tensor_producer(const Tensor* tensor) const = 0;
    virtual std::vector<Op*> topological_sort() = 0;
    virtual const std::vector<const Op*> topological_sort() const = 0;
    virtual void infer_shape() = 0;
    virtual std::vector<std::map<OpTemplate*, Op*>> isomorphism(GraphTemplate* graph_template) = 0;
    virtual void save_to_dot(const std::string& file_path) const = 0;
    virtual void visualize(const std::string& file_path, const std::string& format) const = 0;
    virtual void serialize(const std::string& file_path) const = 0;
    virtual void serialize_to_string(std::string* str) const = 0;

    // Reads an .xmodel. A file that cannot be opened ends the process (as XIR's UNI_LOG_FATAL does); bytes
    // that are not a valid serialized XIR graph throw std::runtime_error naming the problem.
    static std::unique_ptr<Graph> deserialize(const std::string& file_path);
    // The same from the file's bytes (Vitis AI 2.5 and later).
    static std::unique_ptr<Graph> deserialize_from_string(const std::string& str);

    virtual const Subgraph* get_root_subgraph() const = 0;
    virtual Subgraph* get_root_subgraph() = 0;
    virtual Subgraph* get_leaf_subgraph(const Op* op) = 0;
    virtual const Subgraph* get_leaf_subgraph(const Op* op) const = 0;
    // Any subgraph of the tree, by name; nullptr if none.
    virtual Subgraph* get_subgraph(const std::string& name) = 0;
    virtual const Subgraph* get_subgraph(const std::string& name) const = 0;

    virtual bool has_attrs() const = 0;
    virtual std::unique_ptr<Attrs> get_attrs() const = 0;  // a copy
    virtual Graph* set_attrs(std::unique_ptr<Attrs> attrs) = 0;
    virtual bool has_attr(const std::string& key) const = 0;
    // A missing key ends the process.
    virtual const xir::any get_attr(const std::string& key) const = 0;
    virtual Graph* set_attr(const std::string& key, const xir::any& value) = 0;

    // A value of another type ends the process, as XIR's does.
    template <typename Dtype>
    const Dtype get_attr(const std::string& key) const {
        const xir::any value = this->get_attr(key);
        if (const Dtype* typed = xir::stdx::any_cast<Dtype>(&value)) return *typed;
        std::fprintf(stderr, "F xir: graph %s: attribute \"%s\" has another type\n", get_name().c_str(), key.c_str());
        std::abort();
    }
    template <typename Dtype>
    Graph* set_attr(const std::string& key, const Dtype& value) {
        this->set_attr(key, xir::any{value});
        return this;
    }

    virtual const std::string to_string(const std::string& delimiter = ",", const std::string& left_bracket = "{",
                                        const std::string& right_bracket = "}") const = 0;

  public:
    virtual ~Graph() = default;
};

}  // namespace xir
