// subgraph.hpp - xir::Subgraph (stand-in): a node of a graph's subgraph tree. The root's children are
// what a compiled .xmodel is cut into; each has the string attribute "device" ("USER", "CPU", "DPU").
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "xir/attrs/attrs.hpp"
#include "xir/tensor/tensor.hpp"
#include "xir/util/standin_export.hpp"

namespace xir {

class Graph;

class XIR_STANDIN_API Subgraph {
  public:
    Subgraph(const Graph* graph, const Subgraph* parent, const std::string& name);
    Subgraph(const Subgraph&) = delete;
    Subgraph& operator=(const Subgraph&) = delete;
    ~Subgraph();

    const std::string get_name() const { return name_; }
    const Graph* get_graph() const { return graph_; }
    const Subgraph* get_parent() const { return parent_; }
    bool is_root() const { return parent_ == nullptr; }
    bool is_leaf() const { return children_.empty(); }
    std::int32_t get_children_num() const { return (std::int32_t)children_.size(); }

    // The children in an order where every child comes after the children whose ops' tensors it reads (ties
    // in the file's order).
    std::vector<Subgraph*> children_topological_sort();
    std::vector<const Subgraph*> children_topological_sort() const;

    // Tensors entering the subgraph (the output tensors of ops outside it that its ops read) and leaving it
    // (its ops' output tensors read by an op outside it or by none); its ops are its leaves' ops. As sets (the
    // vendor's type) and sorted by tensor name (XIR's TensorLexicographicalOrder, VART's runners' order).
    std::set<const Tensor*> get_input_tensors() const;
    std::set<const Tensor*> get_output_tensors() const;
    std::vector<const Tensor*> get_sorted_input_tensors() const;
    std::vector<const Tensor*> get_sorted_output_tensors() const;

    bool has_attr(const std::string& key) const { return attrs_.has_attr(key); }
    template <typename Dtype>
    const Dtype get_attr(const std::string& key) const {
        return attrs_.get_attr<Dtype>(key);
    }
    template <typename Dtype>
    Subgraph* set_attr(const std::string& key, const Dtype& value) {
        attrs_.set_attr(key, value);
        return this;
    }

    // Building (the stand-in's reader only): children in topological order, then the tensors in and out.
    Subgraph* add_child(const std::string& name);
    void set_tensors(std::vector<const Tensor*> inputs, std::vector<const Tensor*> outputs);

  private:
    const Graph* graph_;
    const Subgraph* parent_;
    std::string name_;
    Attrs attrs_;
    std::vector<std::unique_ptr<Subgraph>> children_;
    std::vector<const Tensor*> inputs_, outputs_;  // sorted by name
};

}  // namespace xir
