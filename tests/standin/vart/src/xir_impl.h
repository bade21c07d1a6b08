// xir_impl.h - the stand-in's xir::Subgraph and xir::Graph, as the xmodel reader builds them: a graph owns
// its tensors (one per op of the file) and its subgraph tree; what needs ops ends the process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "xir/graph/graph.hpp"

namespace standin_xir {

class SubgraphImpl final : public xir::Subgraph {
public:
    SubgraphImpl(xir::Graph* graph, SubgraphImpl* parent, const std::string& name);

    // Building (the reader only): children in topological order, then the tensors in and out.
    SubgraphImpl* add_child(const std::string& name);
    void set_tensors(std::vector<xir::Tensor*> inputs, std::vector<xir::Tensor*> outputs);

    using Subgraph::get_attr;
    using Subgraph::set_attr;

    const std::string get_name() const override { return name_; }
    xir::Subgraph* set_name(const std::string& subgraph_name) override;
    std::int32_t get_op_num() const override;
    std::set<xir::Op*> get_ops() override;
    const std::set<const xir::Op*> get_ops() const override;
    xir::Op* get_tensor_producer(const xir::Tensor* tensor) override;
    const xir::Op* get_tensor_producer(const xir::Tensor* tensor) const override;
    std::set<xir::Tensor*> get_input_tensors() override;
    const std::set<const xir::Tensor*> get_input_tensors() const override;
    std::vector<xir::Tensor*> get_sorted_input_tensors(const std::function<bool(xir::Tensor*, xir::Tensor*)>&) override;
    const std::vector<const xir::Tensor*> get_sorted_input_tensors(
        const std::function<bool(xir::Tensor*, xir::Tensor*)>&) const override;
    std::set<xir::Tensor*> get_output_tensors() override;
    const std::set<const xir::Tensor*> get_output_tensors() const override;
    std::vector<xir::Tensor*> get_sorted_output_tensors(
        const std::function<bool(xir::Tensor*, xir::Tensor*)>&) override;
    const std::vector<const xir::Tensor*> get_sorted_output_tensors(
        const std::function<bool(xir::Tensor*, xir::Tensor*)>&) const override;
    bool has_op(const std::string& op_name) const override;
    bool has_op(const xir::Op* op) const override;
    xir::Subgraph* find_op(const xir::Op* op) override;
    const xir::Subgraph* find_op(const xir::Op* op) const override;
    xir::Subgraph* find_op(const std::string& op_name) override;
    const xir::Subgraph* find_op(const std::string& op_name) const override;
    bool is_root() const override { return parent_ == nullptr; }
    bool is_leaf() const override { return children_.empty(); }
    xir::Subgraph* get_root() override;
    const xir::Subgraph* get_root() const override;
    std::int32_t get_depth() const override;
    xir::Subgraph* get_parent() override { return parent_; }
    const xir::Subgraph* get_parent() const override { return parent_; }
    void create_children() override;
    std::int32_t get_children_num() const override { return (std::int32_t)children_.size(); }
    std::set<xir::Subgraph*> get_children() override;
    const std::set<const xir::Subgraph*> get_children() const override;
    bool is_child(xir::Subgraph* subgraph) const override;
    xir::Subgraph* merge_children(std::set<xir::Subgraph*> subgraph_list) override;
    xir::Graph* get_graph() override { return graph_; }
    const xir::Graph* get_graph() const override { return graph_; }
    xir::Subgraph* get_subgraph(const std::string& name) override;
    const xir::Subgraph* get_subgraph(const std::string& name) const override;
    bool has_attrs() const override { return !attrs_->get_keys().empty(); }
    std::unique_ptr<xir::Attrs> get_attrs() const override { return xir::Attrs::clone(attrs_.get()); }
    xir::Subgraph* set_attrs(std::unique_ptr<xir::Attrs> attrs) override;
    bool has_attr(const std::string& key) const override { return attrs_->has_attr(key); }
    const xir::any get_attr(const std::string& key) const override;
    xir::Subgraph* set_attr(const std::string& key, const xir::any& value) override;
    std::vector<xir::Op*> topological_sort() override;
    const std::vector<const xir::Op*> topological_sort() const override;
    std::vector<xir::Subgraph*> children_topological_sort() override;
    const std::vector<const xir::Subgraph*> children_topological_sort() const override;
    std::vector<std::map<xir::OpTemplate*, xir::Op*>> isomorphism(xir::GraphTemplate* graph_template) override;
    void save_to_dot(const std::string& file_path) const override;
    const std::string to_string(const std::string& delimiter, const std::string& left_bracket,
                                const std::string& right_bracket) const override;

private:
    [[noreturn]] void no_ops(const char* function) const;

    xir::Graph* graph_;
    SubgraphImpl* parent_;
    std::string name_;
    std::unique_ptr<xir::Attrs> attrs_;
    std::vector<std::unique_ptr<SubgraphImpl>> children_;  // in topological order
    std::vector<xir::Tensor*> inputs_, outputs_;           // sorted by name
};

class GraphImpl final : public xir::Graph {
public:
    explicit GraphImpl(const std::string& name);

    // Building (the reader only): the graph owns its ops' output tensors.
    xir::Tensor* add_tensor(std::unique_ptr<xir::Tensor> tensor);
    SubgraphImpl* root() { return root_.get(); }

    using Graph::get_attr;
    using Graph::set_attr;

    const std::string get_name() const override { return name_; }
    xir::Op* add_op(const std::string& name, const std::string& type, std::unique_ptr<xir::Attrs> attrs,
                    const std::map<std::string, std::vector<xir::Op*>>& input_ops_map,
                    xir::Subgraph* subgraph) override;
    xir::Op* add_op(const std::string& name, const std::string& type, std::unique_ptr<xir::Attrs> attrs,
                    const std::map<std::string, std::vector<xir::Op*>>& input_ops_map,
                    const xir::DataType& output_data_type, xir::Subgraph* subgraph) override;
    void remove_op(xir::Op* op) override;
    void replace_ops(
        std::map<std::string, xir::Op*> replaced_ops,
        std::function<std::map<xir::Op*, xir::Op*>(xir::Graph*, std::map<std::string, xir::Op*>)> creator) override;
    xir::Op* get_op(const std::string& op_name) override;
    const xir::Op* get_op(const std::string& op_name) const override;
    xir::Tensor* get_tensor(const std::string& tensor_name) override;
    const xir::Tensor* get_tensor(const std::string& tensor_name) const override;
    int get_op_num() const override { return (int)tensors_.size(); }
    std::set<xir::Op*> get_ops() override;
    const std::set<const xir::Op*> get_ops() const override;
    std::set<xir::Tensor*> get_tensors() override;
    const std::set<const xir::Tensor*> get_tensors() const override;
    std::set<xir::Op*> get_head_ops() override;
    const std::set<const xir::Op*> get_head_ops() const override;
    std::set<xir::Op*> get_tail_ops() override;
    const std::set<const xir::Op*> get_tail_ops() const override;
    xir::Op* get_tensor_producer(const xir::Tensor* tensor) override;
    const xir::Op* get_tensor_producer(const xir::Tensor* tensor) const override;
    std::vector<xir::Op*> topological_sort() override;
    const std::vector<const xir::Op*> topological_sort() const override;
    void infer_shape() override;
    std::vector<std::map<xir::OpTemplate*, xir::Op*>> isomorphism(xir::GraphTemplate* graph_template) override;
    void save_to_dot(const std::string& file_path) const override;
    void visualize(const std::string& file_path, const std::string& format) const override;
    void serialize(const std::string& file_path) const override;
    void serialize_to_string(std::string* str) const override;
    const xir::Subgraph* get_root_subgraph() const override { return root_.get(); }
    xir::Subgraph* get_root_subgraph() override { return root_.get(); }
    xir::Subgraph* get_leaf_subgraph(const xir::Op* op) override;
    const xir::Subgraph* get_leaf_subgraph(const xir::Op* op) const override;
    xir::Subgraph* get_subgraph(const std::string& name) override { return root_->get_subgraph(name); }
    const xir::Subgraph* get_subgraph(const std::string& name) const override {
        return static_cast<const SubgraphImpl&>(*root_).get_subgraph(name);
    }
    bool has_attrs() const override { return !attrs_->get_keys().empty(); }
    std::unique_ptr<xir::Attrs> get_attrs() const override { return xir::Attrs::clone(attrs_.get()); }
    xir::Graph* set_attrs(std::unique_ptr<xir::Attrs> attrs) override;
    bool has_attr(const std::string& key) const override { return attrs_->has_attr(key); }
    const xir::any get_attr(const std::string& key) const override;
    xir::Graph* set_attr(const std::string& key, const xir::any& value) override;
    const std::string to_string(const std::string& delimiter, const std::string& left_bracket,
                                const std::string& right_bracket) const override;

private:
    [[noreturn]] void unsupported(const char* function) const;

    std::string name_;
    std::unique_ptr<xir::Attrs> attrs_;
    std::vector<std::unique_ptr<xir::Tensor>> tensors_;
    std::unique_ptr<SubgraphImpl> root_;
};

}  // namespace standin_xir
