// xmodel_reader.cc - xir::Graph::deserialize_from_string: the parsed messages (xmodel_messages.h) checked and
// built into the graph, with XIR's semantics: a subgraph's ops are its leaves' ops; its input tensors the output
// tensors of ops outside it that its ops read, its output tensors those of its ops read outside it or by none, each
// sorted by name (TensorLexicographicalOrder); its children in topological order. What a malformed or inconsistent
// file gets is std::runtime_error naming the op, tensor or subgraph, as from the wire reader.
#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <variant>

#include "xir_impl.h"
#include "xmodel_messages.h"

namespace standin_xir {
namespace {

constexpr std::size_t kMaxRank = 8;
constexpr std::int64_t kMaxElements = std::int64_t(1) << 34;
constexpr int kMaxSubgraphDepth = 16;  // vai_c_xir writes root -> device subgraphs -> their layers

using xir::Tensor;

template <typename Target>
void set_attrs(Target* target, const AttrMap& attrs) {
    for (const auto& kv : attrs) std::visit([&](const auto& v) { target->set_attr(kv.first, v); }, kv.second);
}

std::unique_ptr<Tensor> make_tensor(const OpMessage& op) {
    const TensorMessage& t = op.output;
    const std::string where = "op \"" + op.name + "\": output tensor \"" + t.name + "\"";
    if (t.name.empty()) malformed("op \"" + op.name + "\": its output tensor has no name");
    if (t.data_type < xir::DataType::INT || t.data_type > xir::DataType::BFLOAT)
        malformed(where + ": data type " + std::to_string(t.data_type) + " is none of XIR's");
    const int bits = t.bit_width;
    if (bits != 1 && bits != 2 && bits != 4 && bits != 8 && bits != 16 && bits != 32 && bits != 64)
        malformed(where + ": bit width " + std::to_string(bits));
    // No dims is a scalar (one element): the stand-in takes it, as the float test suites it runs have them.
    if (t.dims.size() > kMaxRank) malformed(where + ": " + std::to_string(t.dims.size()) + " dims (at most 8)");
    std::vector<std::int32_t> dims;
    std::int64_t elements = 1;
    for (std::uint64_t d : t.dims) {
        if (d == 0 || d > (std::uint64_t)INT32_MAX) malformed(where + ": a dim of " + std::to_string(d));
        elements *= (std::int64_t)d;
        if (elements > kMaxElements) malformed(where + ": more elements than a model can hold");
        dims.push_back((std::int32_t)d);
    }
    auto tensor = Tensor::create(t.name, dims, xir::DataType((xir::DataType::Type)t.data_type, bits));
    set_attrs(tensor.get(), t.attrs);
    if (tensor->has_attr("fix_point")) {
        const auto it = t.attrs.find("fix_point");
        if (!std::holds_alternative<std::int32_t>(it->second))
            malformed(where + ": attribute \"fix_point\" is not an int32");
    }
    return tensor;
}

// The graph's ops, indexed; what reads what, checked.
struct Ops {
    std::map<std::string, std::size_t> index;
    std::vector<std::vector<std::size_t>> reads, readers;
    std::vector<Tensor*> outputs;
};

Ops index_ops(const GraphMessage& g, GraphImpl* graph) {
    if (g.ops.empty()) malformed("not a serialized XIR graph: it has no ops");
    Ops ops;
    std::set<std::string> tensor_names;
    for (const OpMessage& op : g.ops) {
        if (op.name.empty()) malformed("an op of type \"" + op.type + "\" has no name");
        if (op.type.empty()) malformed("op \"" + op.name + "\" has no type");
        if (!op.has_output) malformed("op \"" + op.name + "\" has no output tensor");
        if (!ops.index.emplace(op.name, ops.outputs.size()).second) malformed("two ops are named \"" + op.name + "\"");
        if (!tensor_names.insert(op.output.name).second) malformed("two ops write tensor \"" + op.output.name + "\"");
        ops.outputs.push_back(graph->add_tensor(make_tensor(op)));
    }
    ops.reads.resize(g.ops.size());
    ops.readers.resize(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); i++)
        for (const std::string& src : g.ops[i].inputs) {
            const auto it = ops.index.find(src);
            if (it == ops.index.end())
                malformed("op \"" + g.ops[i].name + "\" reads op \"" + src + "\", which the graph does not have");
            ops.reads[i].push_back(it->second);
            ops.readers[it->second].push_back(i);
        }
    // Kahn's algorithm: ops left over are on a cycle.
    std::vector<std::size_t> pending(g.ops.size());
    std::queue<std::size_t> ready;
    for (std::size_t i = 0; i < g.ops.size(); i++)
        if (!(pending[i] = ops.reads[i].size())) ready.push(i);
    std::size_t done = 0;
    for (; !ready.empty(); ready.pop(), done++)
        for (std::size_t r : ops.readers[ready.front()])
            if (--pending[r] == 0) ready.push(r);
    if (done != g.ops.size()) malformed("the graph's ops have a cycle");
    return ops;
}

// A subgraph's ops (every leaf's below it) as a membership mask.
using Members = std::vector<bool>;

class TreeBuilder {
public:
    TreeBuilder(const GraphMessage& g, const Ops& ops) : g_(g), ops_(ops), owner_(g.ops.size()) {}

    // Builds `s` into `into`.
    void build(const SubgraphMessage& s, SubgraphImpl* into, int depth) {
        check_depth(s, depth);
        if (!s.ops.empty() && !s.children.empty())
            malformed("subgraph \"" + s.name + "\" has both children and ops of its own");
        if (s.attrs.count("device") && !std::holds_alternative<std::string>(s.attrs.at("device")))
            malformed("subgraph \"" + s.name + "\": attribute \"device\" is not a string");
        set_attrs(into, s.attrs);
        Members members(g_.ops.size(), false);
        for (const std::string& op : s.ops) {
            const auto it = ops_.index.find(op);
            if (it == ops_.index.end())
                malformed("subgraph \"" + s.name + "\" lists op \"" + op + "\", which the graph does not have");
            if (!owner_[it->second].empty())
                malformed("op \"" + op + "\" is in two subgraphs: \"" + owner_[it->second] + "\" and \"" + s.name +
                          "\"");
            owner_[it->second] = s.name;
            members[it->second] = true;
        }
        std::vector<Members> child_members;
        for (const SubgraphMessage& c : s.children) child_members.push_back(members_of(c, depth + 1));
        for (std::size_t k : topological(s, child_members)) {
            build(s.children[k], into->add_child(s.children[k].name), depth + 1);
            for (std::size_t i = 0; i < members.size(); i++)
                if (child_members[k][i]) members[i] = true;
        }
        into->set_tensors(boundary(members, true), boundary(members, false));
    }

private:
    static void check_depth(const SubgraphMessage& s, int depth) {
        if (depth > kMaxSubgraphDepth)
            malformed("subgraph \"" + s.name + "\" is nested " + std::to_string(depth) + " deep (at most " +
                      std::to_string(kMaxSubgraphDepth) + ")");
    }

    // Children are built in their sibling order, which needs their ops first: read them without building.
    Members members_of(const SubgraphMessage& s, int depth) {
        check_depth(s, depth);
        Members m(g_.ops.size(), false);
        for (const std::string& op : s.ops) {
            const auto it = ops_.index.find(op);
            if (it != ops_.index.end()) m[it->second] = true;  // unknown ones are refused when built
        }
        for (const SubgraphMessage& c : s.children) {
            const Members cm = members_of(c, depth + 1);
            for (std::size_t i = 0; i < m.size(); i++)
                if (cm[i]) m[i] = true;
        }
        return m;
    }

    // The order of `s`'s children where each follows those whose ops' tensors it reads (ties: the file's order);
    // siblings that read each other are refused, as XIR's topological sort refuses them.
    std::vector<std::size_t> topological(const SubgraphMessage& s, const std::vector<Members>& members) {
        const std::size_t n = s.children.size();
        std::set<std::string> names;
        for (const SubgraphMessage& c : s.children)
            if (!names.insert(c.name).second)
                malformed("subgraph \"" + s.name + "\" has two children named \"" + c.name + "\"");
        std::vector<std::size_t> child_of(g_.ops.size(), n);
        for (std::size_t k = 0; k < n; k++)
            for (std::size_t i = 0; i < members[k].size(); i++)
                if (members[k][i]) child_of[i] = k;
        std::vector<std::set<std::size_t>> after(n);  // after[k]: the children k must follow
        for (std::size_t k = 0; k < n; k++)
            for (std::size_t i = 0; i < members[k].size(); i++)
                if (members[k][i])
                    for (std::size_t src : ops_.reads[i])
                        if (child_of[src] != n && child_of[src] != k) after[k].insert(child_of[src]);
        std::vector<std::size_t> order;
        std::vector<bool> placed(n, false);
        while (order.size() < n) {
            std::size_t next = n;
            for (std::size_t k = 0; k < n && next == n; k++) {
                if (placed[k]) continue;
                bool free = true;
                for (std::size_t d : after[k]) free = free && placed[d];
                if (free) next = k;
            }
            if (next == n) malformed("the children of subgraph \"" + s.name + "\" read each other's tensors");
            placed[next] = true;
            order.push_back(next);
        }
        return order;
    }

    // Inputs: tensors of ops outside `members` its ops read. Outputs: its ops' tensors read outside it or by none.
    std::vector<Tensor*> boundary(const Members& members, bool inputs) const {
        std::set<std::size_t> found;
        for (std::size_t i = 0; i < members.size(); i++) {
            if (!members[i]) continue;
            if (inputs) {
                for (std::size_t src : ops_.reads[i])
                    if (!members[src]) found.insert(src);
            } else {
                bool leaves = ops_.readers[i].empty();
                for (std::size_t r : ops_.readers[i]) leaves = leaves || !members[r];
                if (leaves) found.insert(i);
            }
        }
        std::vector<Tensor*> out;
        for (std::size_t i : found) out.push_back(ops_.outputs[i]);
        std::sort(out.begin(), out.end(),
                  [](const Tensor* a, const Tensor* b) { return a->get_name() < b->get_name(); });
        return out;
    }

    const GraphMessage& g_;
    const Ops& ops_;
    std::vector<std::string> owner_;  // the leaf holding each op
};

}  // namespace
}  // namespace standin_xir

namespace xir {

std::unique_ptr<Graph> Graph::deserialize_from_string(const std::string& str) {
    using namespace standin_xir;
    if (str.size() > (std::size_t)INT32_MAX) malformed("the file is larger than a serialized XIR graph can be");
    GraphMessage message;
    parse_graph(Wire(reinterpret_cast<const std::uint8_t*>(str.data()), str.size(), 0), message);
    auto graph = std::make_unique<GraphImpl>(message.name);
    const Ops ops = index_ops(message, graph.get());
    if (!message.has_root)
        malformed("graph \"" + message.name + "\" has no subgraph tree (an XIR graph has at least its root)");
    TreeBuilder(message, ops).build(message.root, graph->root(), 0);
    return graph;
}

}  // namespace xir
