// xir.cc - the stand-in's libxir: xir::Graph, Subgraph and Tensor, and Graph::deserialize (the file's bytes go
// to deserialize_from_string, xmodel_reader.cc). Pure software, as XIR's own graph reading is.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "xir/graph/graph.hpp"

namespace xir {

std::string DataType::to_string() const {
    static const char* const names[] = {"int", "uint", "xint", "xuint", "float", "bfloat", "unknown"};
    int t = type >= INT && type <= UNKNOWN ? (int)type : (int)UNKNOWN;
    return std::string(names[t]) + std::to_string(bit_width);
}

std::unique_ptr<Tensor> Tensor::create(const std::string& name, const std::vector<std::int32_t>& shape,
                                       const DataType& data_type) {
    return std::make_unique<Tensor>(name, shape, data_type);
}

Tensor::Tensor(const std::string& name, const std::vector<std::int32_t>& shape, const DataType& data_type)
    : name_(name), shape_(shape), data_type_(data_type) {}

Tensor::~Tensor() = default;

std::int64_t Tensor::get_element_num() const {
    std::int64_t n = 1;
    for (std::int32_t d : shape_) n *= d;
    return n;
}

std::int64_t Tensor::get_data_size() const { return get_element_num() * data_type_.bit_width / 8; }

Subgraph::Subgraph(const Graph* graph, const Subgraph* parent, const std::string& name)
    : graph_(graph), parent_(parent), name_(name) {}

Subgraph::~Subgraph() = default;

std::vector<Subgraph*> Subgraph::children_topological_sort() {
    std::vector<Subgraph*> out;
    for (auto& c : children_) out.push_back(c.get());
    return out;
}

std::vector<const Subgraph*> Subgraph::children_topological_sort() const {
    std::vector<const Subgraph*> out;
    for (auto& c : children_) out.push_back(c.get());
    return out;
}

std::set<const Tensor*> Subgraph::get_input_tensors() const { return {inputs_.begin(), inputs_.end()}; }
std::set<const Tensor*> Subgraph::get_output_tensors() const { return {outputs_.begin(), outputs_.end()}; }
std::vector<const Tensor*> Subgraph::get_sorted_input_tensors() const { return inputs_; }
std::vector<const Tensor*> Subgraph::get_sorted_output_tensors() const { return outputs_; }

Subgraph* Subgraph::add_child(const std::string& name) {
    children_.push_back(std::make_unique<Subgraph>(graph_, this, name));
    return children_.back().get();
}
void Subgraph::set_tensors(std::vector<const Tensor*> inputs, std::vector<const Tensor*> outputs) {
    inputs_ = std::move(inputs);
    outputs_ = std::move(outputs);
}

Graph::Graph(const std::string& name) : name_(name), root_(std::make_unique<Subgraph>(this, nullptr, "root")) {}

Graph::~Graph() = default;

const Tensor* Graph::add_tensor(std::unique_ptr<Tensor> tensor) {
    tensors_.push_back(std::move(tensor));
    return tensors_.back().get();
}

std::unique_ptr<Graph> Graph::deserialize(const std::string& pb_fname) {
    std::ifstream f(pb_fname, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "F xir: cannot open %s: %s\n", pb_fname.c_str(), std::strerror(errno));
        std::abort();
    }
    return deserialize_from_string(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
}

}  // namespace xir
