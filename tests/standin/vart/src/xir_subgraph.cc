// xir_subgraph.cc - the stand-in's xir::Subgraph (xir_impl.h): a node of the tree with its attributes and the
// tensors crossing its boundary, as the reader found them.
#include <algorithm>

#include "fatal.h"
#include "xir_impl.h"

namespace standin_xir {

using xir::Tensor;

SubgraphImpl::SubgraphImpl(xir::Graph* graph, SubgraphImpl* parent, const std::string& name)
    : graph_(graph), parent_(parent), name_(name), attrs_(xir::Attrs::create()) {}

SubgraphImpl* SubgraphImpl::add_child(const std::string& name) {
    children_.push_back(std::make_unique<SubgraphImpl>(graph_, this, name));
    return children_.back().get();
}

void SubgraphImpl::set_tensors(std::vector<Tensor*> inputs, std::vector<Tensor*> outputs) {
    inputs_ = std::move(inputs);
    outputs_ = std::move(outputs);
}

void SubgraphImpl::no_ops(const char* function) const {
    standin_vart::fatal("subgraph %s: Subgraph::%s: the stand-in's graphs hold no ops", name_.c_str(), function);
}

xir::Subgraph* SubgraphImpl::set_name(const std::string& subgraph_name) {
    name_ = subgraph_name;
    return this;
}

std::int32_t SubgraphImpl::get_op_num() const { no_ops("get_op_num"); }
std::set<xir::Op*> SubgraphImpl::get_ops() { no_ops("get_ops"); }
const std::set<const xir::Op*> SubgraphImpl::get_ops() const { no_ops("get_ops"); }
xir::Op* SubgraphImpl::get_tensor_producer(const Tensor*) { no_ops("get_tensor_producer"); }
const xir::Op* SubgraphImpl::get_tensor_producer(const Tensor*) const { no_ops("get_tensor_producer"); }

namespace {
template <typename T>
std::vector<T*> sorted(const std::vector<Tensor*>& tensors, const std::function<bool(Tensor*, Tensor*)>& compare) {
    std::vector<Tensor*> out = tensors;
    std::stable_sort(out.begin(), out.end(), compare);
    return {out.begin(), out.end()};
}
}  // namespace

std::set<Tensor*> SubgraphImpl::get_input_tensors() { return {inputs_.begin(), inputs_.end()}; }
const std::set<const Tensor*> SubgraphImpl::get_input_tensors() const { return {inputs_.begin(), inputs_.end()}; }
std::vector<Tensor*> SubgraphImpl::get_sorted_input_tensors(const std::function<bool(Tensor*, Tensor*)>& compare) {
    return sorted<Tensor>(inputs_, compare);
}
const std::vector<const Tensor*> SubgraphImpl::get_sorted_input_tensors(
    const std::function<bool(Tensor*, Tensor*)>& compare) const {
    return sorted<const Tensor>(inputs_, compare);
}
std::set<Tensor*> SubgraphImpl::get_output_tensors() { return {outputs_.begin(), outputs_.end()}; }
const std::set<const Tensor*> SubgraphImpl::get_output_tensors() const { return {outputs_.begin(), outputs_.end()}; }
std::vector<Tensor*> SubgraphImpl::get_sorted_output_tensors(const std::function<bool(Tensor*, Tensor*)>& compare) {
    return sorted<Tensor>(outputs_, compare);
}
const std::vector<const Tensor*> SubgraphImpl::get_sorted_output_tensors(
    const std::function<bool(Tensor*, Tensor*)>& compare) const {
    return sorted<const Tensor>(outputs_, compare);
}

bool SubgraphImpl::has_op(const std::string&) const { no_ops("has_op"); }
bool SubgraphImpl::has_op(const xir::Op*) const { no_ops("has_op"); }
xir::Subgraph* SubgraphImpl::find_op(const xir::Op*) { no_ops("find_op"); }
const xir::Subgraph* SubgraphImpl::find_op(const xir::Op*) const { no_ops("find_op"); }
xir::Subgraph* SubgraphImpl::find_op(const std::string&) { no_ops("find_op"); }
const xir::Subgraph* SubgraphImpl::find_op(const std::string&) const { no_ops("find_op"); }

xir::Subgraph* SubgraphImpl::get_root() { return parent_ ? parent_->get_root() : this; }
const xir::Subgraph* SubgraphImpl::get_root() const { return parent_ ? parent_->get_root() : this; }
std::int32_t SubgraphImpl::get_depth() const { return parent_ ? parent_->get_depth() + 1 : 0; }
void SubgraphImpl::create_children() { no_ops("create_children"); }

std::set<xir::Subgraph*> SubgraphImpl::get_children() {
    std::set<xir::Subgraph*> out;
    for (auto& c : children_) out.insert(c.get());
    return out;
}
const std::set<const xir::Subgraph*> SubgraphImpl::get_children() const {
    std::set<const xir::Subgraph*> out;
    for (auto& c : children_) out.insert(c.get());
    return out;
}
bool SubgraphImpl::is_child(xir::Subgraph* subgraph) const {
    for (auto& c : children_)
        if (c.get() == subgraph) return true;
    return false;
}
xir::Subgraph* SubgraphImpl::merge_children(std::set<xir::Subgraph*>) { no_ops("merge_children"); }

xir::Subgraph* SubgraphImpl::get_subgraph(const std::string& name) {
    return const_cast<xir::Subgraph*>(static_cast<const SubgraphImpl*>(this)->get_subgraph(name));
}
const xir::Subgraph* SubgraphImpl::get_subgraph(const std::string& name) const {
    if (name_ == name) return this;
    for (auto& c : children_)
        if (const xir::Subgraph* found = static_cast<const SubgraphImpl&>(*c).get_subgraph(name)) return found;
    return nullptr;
}

xir::Subgraph* SubgraphImpl::set_attrs(std::unique_ptr<xir::Attrs> attrs) {
    attrs_ = attrs ? std::move(attrs) : xir::Attrs::create();
    return this;
}
const xir::any SubgraphImpl::get_attr(const std::string& key) const {
    if (!attrs_->has_attr(key)) standin_vart::fatal("subgraph %s has no attribute \"%s\"", name_.c_str(), key.c_str());
    return attrs_->get_attr(key);
}
xir::Subgraph* SubgraphImpl::set_attr(const std::string& key, const xir::any& value) {
    attrs_->set_attr(key, value);
    return this;
}

std::vector<xir::Op*> SubgraphImpl::topological_sort() { no_ops("topological_sort"); }
const std::vector<const xir::Op*> SubgraphImpl::topological_sort() const { no_ops("topological_sort"); }
std::vector<xir::Subgraph*> SubgraphImpl::children_topological_sort() {
    std::vector<xir::Subgraph*> out;
    for (auto& c : children_) out.push_back(c.get());
    return out;
}
const std::vector<const xir::Subgraph*> SubgraphImpl::children_topological_sort() const {
    std::vector<const xir::Subgraph*> out;
    for (auto& c : children_) out.push_back(c.get());
    return out;
}
std::vector<std::map<xir::OpTemplate*, xir::Op*>> SubgraphImpl::isomorphism(xir::GraphTemplate*) {
    no_ops("isomorphism");
}
void SubgraphImpl::save_to_dot(const std::string&) const { no_ops("save_to_dot"); }

const std::string SubgraphImpl::to_string(const std::string& delimiter, const std::string& left_bracket,
                                          const std::string& right_bracket) const {
    return "xir::Subgraph" + left_bracket + "name = " + name_ + delimiter +
           " child_num = " + std::to_string(children_.size()) + right_bracket;
}

}  // namespace standin_xir
