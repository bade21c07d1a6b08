// xir_graph.cc - the stand-in's xir::Graph (xir_impl.h): the tensors and the subgraph tree the reader built
// (xmodel_reader.cc), and Graph::deserialize, which hands a file's bytes to deserialize_from_string. What needs
// ops or writes a graph out ends the process: pure software, as XIR's own graph reading is, but read-only.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "fatal.h"
#include "xir_impl.h"

namespace standin_xir {

using xir::Op;
using xir::Tensor;

GraphImpl::GraphImpl(const std::string& name)
    : name_(name), attrs_(xir::Attrs::create()), root_(std::make_unique<SubgraphImpl>(this, nullptr, "root")) {}

Tensor* GraphImpl::add_tensor(std::unique_ptr<Tensor> tensor) {
    tensors_.push_back(std::move(tensor));
    return tensors_.back().get();
}

void GraphImpl::unsupported(const char* function) const {
    standin_vart::fatal("graph %s: Graph::%s: the stand-in's graphs hold no ops and are read-only", name_.c_str(),
                        function);
}

Op* GraphImpl::add_op(const std::string&, const std::string&, std::unique_ptr<xir::Attrs>,
                      const std::map<std::string, std::vector<Op*>>&, xir::Subgraph*) {
    unsupported("add_op");
}
Op* GraphImpl::add_op(const std::string&, const std::string&, std::unique_ptr<xir::Attrs>,
                      const std::map<std::string, std::vector<Op*>>&, const xir::DataType&, xir::Subgraph*) {
    unsupported("add_op");
}
void GraphImpl::remove_op(Op*) { unsupported("remove_op"); }
void GraphImpl::replace_ops(std::map<std::string, Op*>,
                            std::function<std::map<Op*, Op*>(xir::Graph*, std::map<std::string, Op*>)>) {
    unsupported("replace_ops");
}
Op* GraphImpl::get_op(const std::string&) { unsupported("get_op"); }
const Op* GraphImpl::get_op(const std::string&) const { unsupported("get_op"); }

Tensor* GraphImpl::get_tensor(const std::string& tensor_name) {
    for (auto& t : tensors_)
        if (t->get_name() == tensor_name) return t.get();
    return nullptr;
}
const Tensor* GraphImpl::get_tensor(const std::string& tensor_name) const {
    return const_cast<GraphImpl*>(this)->get_tensor(tensor_name);
}

std::set<Op*> GraphImpl::get_ops() { unsupported("get_ops"); }
const std::set<const Op*> GraphImpl::get_ops() const { unsupported("get_ops"); }
std::set<Tensor*> GraphImpl::get_tensors() {
    std::set<Tensor*> out;
    for (auto& t : tensors_) out.insert(t.get());
    return out;
}
const std::set<const Tensor*> GraphImpl::get_tensors() const {
    std::set<const Tensor*> out;
    for (auto& t : tensors_) out.insert(t.get());
    return out;
}
std::set<Op*> GraphImpl::get_head_ops() { unsupported("get_head_ops"); }
const std::set<const Op*> GraphImpl::get_head_ops() const { unsupported("get_head_ops"); }
std::set<Op*> GraphImpl::get_tail_ops() { unsupported("get_tail_ops"); }
const std::set<const Op*> GraphImpl::get_tail_ops() const { unsupported("get_tail_ops"); }
Op* GraphImpl::get_tensor_producer(const Tensor*) { unsupported("get_tensor_producer"); }
const Op* GraphImpl::get_tensor_producer(const Tensor*) const { unsupported("get_tensor_producer"); }
std::vector<Op*> GraphImpl::topological_sort() { unsupported("topological_sort"); }
const std::vector<const Op*> GraphImpl::topological_sort() const { unsupported("topological_sort"); }
void GraphImpl::infer_shape() { unsupported("infer_shape"); }
std::vector<std::map<xir::OpTemplate*, Op*>> GraphImpl::isomorphism(xir::GraphTemplate*) { unsupported("isomorphism"); }
void GraphImpl::save_to_dot(const std::string&) const { unsupported("save_to_dot"); }
void GraphImpl::visualize(const std::string&, const std::string&) const { unsupported("visualize"); }
void GraphImpl::serialize(const std::string&) const { unsupported("serialize"); }
void GraphImpl::serialize_to_string(std::string*) const { unsupported("serialize_to_string"); }
xir::Subgraph* GraphImpl::get_leaf_subgraph(const Op*) { unsupported("get_leaf_subgraph"); }
const xir::Subgraph* GraphImpl::get_leaf_subgraph(const Op*) const { unsupported("get_leaf_subgraph"); }

xir::Graph* GraphImpl::set_attrs(std::unique_ptr<xir::Attrs> attrs) {
    attrs_ = attrs ? std::move(attrs) : xir::Attrs::create();
    return this;
}
const xir::any GraphImpl::get_attr(const std::string& key) const {
    if (!attrs_->has_attr(key)) standin_vart::fatal("graph %s has no attribute \"%s\"", name_.c_str(), key.c_str());
    return attrs_->get_attr(key);
}
xir::Graph* GraphImpl::set_attr(const std::string& key, const xir::any& value) {
    attrs_->set_attr(key, value);
    return this;
}

const std::string GraphImpl::to_string(const std::string& delimiter, const std::string& left_bracket,
                                       const std::string& right_bracket) const {
    return "xir::Graph" + left_bracket + "name = " + name_ + delimiter +
           " tensor_num = " + std::to_string(tensors_.size()) + right_bracket;
}

}  // namespace standin_xir

namespace xir {

std::unique_ptr<Graph> Graph::create(std::string name) { return std::make_unique<standin_xir::GraphImpl>(name); }

std::unique_ptr<Graph> Graph::deserialize(const std::string& file_path) {
    std::ifstream f(file_path, std::ios::binary);
    if (!f) standin_vart::fatal("cannot open %s: %s", file_path.c_str(), std::strerror(errno));
    return deserialize_from_string(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
}

}  // namespace xir
