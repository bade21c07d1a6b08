// xir.cc - the stand-in's libxir: xir::Graph, Subgraph and Tensor, and the reader of its .xmodel
// container (FORMAT.md). Pure software, as XIR's own graph reading is.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

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

static std::vector<const Tensor*> raw(const std::vector<std::unique_ptr<Tensor>>& ts) {
    std::vector<const Tensor*> out;
    for (auto& t : ts) out.push_back(t.get());
    return out;
}

std::set<const Tensor*> Subgraph::get_input_tensors() const {
    auto v = raw(inputs_);
    return {v.begin(), v.end()};
}
std::set<const Tensor*> Subgraph::get_output_tensors() const {
    auto v = raw(outputs_);
    return {v.begin(), v.end()};
}
std::vector<const Tensor*> Subgraph::get_sorted_input_tensors() const { return raw(inputs_); }
std::vector<const Tensor*> Subgraph::get_sorted_output_tensors() const { return raw(outputs_); }

Subgraph* Subgraph::add_child(const std::string& name) {
    children_.push_back(std::make_unique<Subgraph>(graph_, this, name));
    return children_.back().get();
}
void Subgraph::add_input(std::unique_ptr<Tensor> tensor) { inputs_.push_back(std::move(tensor)); }
void Subgraph::add_output(std::unique_ptr<Tensor> tensor) { outputs_.push_back(std::move(tensor)); }

Graph::Graph(const std::string& name) : name_(name), root_(std::make_unique<Subgraph>(this, nullptr, "root")) {}

Graph::~Graph() = default;

namespace {

constexpr char kMagic[8] = {'A', 'C', 'C', 'E', 'L', 'X', 'M', '1'};
constexpr std::uint32_t kMaxDims = 8;

// Bounded little-endian reads: running past the end throws, naming what was being read.
struct Cursor {
    const std::uint8_t* p;
    std::size_t left;

    void need(std::size_t n, const char* what) {
        if (n > left) throw std::runtime_error(std::string("xmodel: truncated in ") + what);
    }
    template <typename T>
    T scalar(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, p, sizeof v);
        p += sizeof v;
        left -= sizeof v;
        return v;
    }
    std::string str(const char* what) {
        std::uint32_t n = scalar<std::uint32_t>(what);
        need(n, what);
        std::string s(reinterpret_cast<const char*>(p), n);
        p += n;
        left -= n;
        return s;
    }
    std::vector<char> bytes(const char* what) {
        std::uint64_t n = scalar<std::uint64_t>(what);
        need(n, what);
        std::vector<char> v(p, p + n);
        p += n;
        left -= n;
        return v;
    }
};

std::unique_ptr<Tensor> read_tensor(Cursor& c) {
    std::string name = c.str("tensor name");
    std::int32_t type = c.scalar<std::int32_t>("tensor type");
    std::int32_t bits = c.scalar<std::int32_t>("tensor bit width");
    if (type < DataType::INT || type > DataType::BFLOAT || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
        throw std::runtime_error("xmodel: tensor '" + name + "' has an invalid data type");
    std::uint32_t ndim = c.scalar<std::uint32_t>("tensor rank");
    if (ndim > kMaxDims) throw std::runtime_error("xmodel: tensor '" + name + "' has too many dims");
    std::vector<std::int32_t> dims(ndim);
    for (auto& d : dims) {
        d = c.scalar<std::int32_t>("tensor dims");
        if (d <= 0) throw std::runtime_error("xmodel: tensor '" + name + "' has a dim <= 0");
    }
    auto t = Tensor::create(name, dims, DataType((DataType::Type)type, bits));
    std::uint32_t nattr = c.scalar<std::uint32_t>("tensor attribute count");
    for (std::uint32_t i = 0; i < nattr; i++) {
        std::string key = c.str("tensor attribute name");
        t->set_attr(key, c.scalar<std::int32_t>("tensor attribute value"));
    }
    return t;
}

void read_subgraph(Cursor& c, Subgraph* root) {
    Subgraph* s = root->add_child(c.str("subgraph name"));
    std::uint32_t nstr = c.scalar<std::uint32_t>("subgraph attribute count");
    for (std::uint32_t i = 0; i < nstr; i++) {
        std::string key = c.str("subgraph attribute name");
        s->set_attr(key, c.str("subgraph attribute value"));
    }
    std::uint32_t nbytes = c.scalar<std::uint32_t>("subgraph blob count");
    for (std::uint32_t i = 0; i < nbytes; i++) {
        std::string key = c.str("subgraph blob name");
        s->set_attr(key, c.bytes("subgraph blob"));
    }
    std::uint32_t nin = c.scalar<std::uint32_t>("subgraph input count");
    std::uint32_t nout = c.scalar<std::uint32_t>("subgraph output count");
    for (std::uint32_t i = 0; i < nin; i++) s->add_input(read_tensor(c));
    for (std::uint32_t i = 0; i < nout; i++) s->add_output(read_tensor(c));
}

}  // namespace

std::unique_ptr<Graph> Graph::deserialize(const std::string& pb_fname) {
    std::ifstream f(pb_fname, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "F xir: cannot open %s: %s\n", pb_fname.c_str(), std::strerror(errno));
        std::abort();
    }
    std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    Cursor c{data.data(), data.size()};
    c.need(sizeof kMagic, "magic");
    if (std::memcmp(c.p, kMagic, sizeof kMagic) != 0) throw std::runtime_error("xmodel: bad magic");
    c.p += sizeof kMagic;
    c.left -= sizeof kMagic;
    auto graph = std::make_unique<Graph>(c.str("graph name"));
    std::uint32_t n = c.scalar<std::uint32_t>("subgraph count");
    for (std::uint32_t i = 0; i < n; i++) read_subgraph(c, graph->get_root_subgraph());
    if (c.left != 0) throw std::runtime_error("xmodel: trailing bytes after the last subgraph");
    return graph;
}

}  // namespace xir
