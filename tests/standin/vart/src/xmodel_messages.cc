// xmodel_messages.cc - see xmodel_messages.h. AttrValue is a oneof (4 bool ... 11 string, 12 Bytes, 13..21
// vectors, 22..32 string-keyed maps); its value becomes the AttrValue alternative XIR's C++ API reads it as.
#include "xmodel_messages.h"

#include <type_traits>
#include <utility>

namespace standin_xir {
namespace {

using Value = AttrValue;

template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};

// ---- one value of a field, by its declared type; a message merges into what `out` holds ----

template <typename T>
void read_value(Wire& w, std::uint32_t type, T& out, const char* what);

// A vector message {1 repeated value}: numbers packed or one by one, as protobuf writes either.
template <typename T>
void read_vector(Wire m, std::vector<T>& out, const char* what) {
    std::uint32_t field, type;
    while (m.next(field, type, what)) {
        if (field != 1) {
            m.skip(type, what);
            continue;
        }
        if constexpr (std::is_arithmetic<T>::value) {
            if (type == LEN) {
                Wire packed = m.message(what);
                const std::uint32_t element = std::is_same<T, float>::value    ? FIXED32
                                              : std::is_same<T, double>::value ? FIXED64
                                                                               : VARINT;
                while (!packed.done()) {
                    T v{};
                    read_value(packed, element, v, what);
                    out.push_back(v);
                }
                continue;
            }
        }
        T v{};
        read_value(m, type, v, what);
        out.push_back(v);
    }
}

// A map message {1 repeated entry {1 string key, 2 value}}: a later entry of a key replaces it.
template <typename T>
void read_map(Wire m, Map<T>& out, const char* what) {
    std::uint32_t field, type;
    while (m.next(field, type, what)) {
        if (field != 1) {
            m.skip(type, what);
            continue;
        }
        Wire::expect(type, LEN, what);
        Wire entry = m.message(what);
        std::string key;
        T value{};
        while (entry.next(field, type, what)) {
            if (field == 1) read_value(entry, type, key, what);
            else if (field == 2) read_value(entry, type, value, what);
            else entry.skip(type, what);
        }
        out[key] = std::move(value);
    }
}

template <typename T>
void read_value(Wire& w, std::uint32_t type, T& out, const char* what) {
    if constexpr (std::is_same<T, std::string>::value) {
        Wire::expect(type, LEN, what);
        out = w.bytes(what);
    } else if constexpr (std::is_same<T, Bytes>::value) {  // serial_v2.Bytes {1 bytes value}
        Wire::expect(type, LEN, what);
        Wire m = w.message(what);
        std::uint32_t field, t;
        while (m.next(field, t, what)) {
            if (field != 1) {
                m.skip(t, what);
                continue;
            }
            Wire::expect(t, LEN, what);
            const std::string s = m.bytes(what);
            out.assign(s.begin(), s.end());
        }
    } else if constexpr (is_vector<T>::value) {  // Int32Vec, ... (a map's value)
        Wire::expect(type, LEN, what);
        read_vector(w.message(what), out, what);
    } else if constexpr (std::is_same<T, float>::value) {
        Wire::expect(type, FIXED32, what);
        out = w.fixed<float>(what);
    } else if constexpr (std::is_same<T, double>::value) {
        Wire::expect(type, FIXED64, what);
        out = w.fixed<double>(what);
    } else {
        static_assert(std::is_integral<T>::value, "an integer");
        Wire::expect(type, VARINT, what);
        const std::uint64_t v = w.varint(what);
        if constexpr (std::is_same<T, bool>::value) out = v != 0;
        else out = (T)v;  // int32 and uint32 keep the low 32 bits, as protobuf does
    }
}

// ---- AttrValue ----

// The alternative T of `v`, kept if `v` already holds one from this field (a repeated message merges), else new.
template <typename T>
T& hold(Value& v, bool& set) {
    if (!set || !std::holds_alternative<T>(v)) v = T{};
    set = true;
    return std::get<T>(v);
}

template <typename T>
void scalar(Wire& w, std::uint32_t type, Value& v, bool& set, const char* what) {
    T x{};
    read_value(w, type, x, what);
    v = std::move(x);
    set = true;
}

template <typename T>
void vector(Wire& w, std::uint32_t type, Value& v, bool& set, const char* what) {
    Wire::expect(type, LEN, what);
    read_vector(w.message(what), hold<std::vector<T>>(v, set), what);
}

template <typename T>
void map(Wire& w, std::uint32_t type, Value& v, bool& set, const char* what) {
    Wire::expect(type, LEN, what);
    read_map(w.message(what), hold<Map<T>>(v, set), what);
}

// An AttrValue; a key with none (no oneof field set) is refused, as accel.compiler.xir refuses it.
Value read_attr(Wire w, const std::string& key) {
    const std::string where = "attribute \"" + key + "\"";
    const char* what = where.c_str();
    Value v;
    bool set = false;
    std::uint32_t field, type;
    while (w.next(field, type, what)) {
        switch (field) {
            case 4: scalar<bool>(w, type, v, set, what); break;
            case 5: scalar<std::int32_t>(w, type, v, set, what); break;
            case 6: scalar<std::uint32_t>(w, type, v, set, what); break;
            case 7: scalar<std::int64_t>(w, type, v, set, what); break;
            case 8: scalar<std::uint64_t>(w, type, v, set, what); break;
            case 9: scalar<float>(w, type, v, set, what); break;
            case 10: scalar<double>(w, type, v, set, what); break;
            case 11: scalar<std::string>(w, type, v, set, what); break;
            case 12: read_value(w, type, hold<Bytes>(v, set), what); break;
            case 13: vector<bool>(w, type, v, set, what); break;
            case 14: vector<std::int32_t>(w, type, v, set, what); break;
            case 15: vector<std::uint32_t>(w, type, v, set, what); break;
            case 16: vector<std::int64_t>(w, type, v, set, what); break;
            case 17: vector<std::uint64_t>(w, type, v, set, what); break;
            case 18: vector<float>(w, type, v, set, what); break;
            case 19: vector<double>(w, type, v, set, what); break;
            case 20: vector<std::string>(w, type, v, set, what); break;
            case 21: vector<Bytes>(w, type, v, set, what); break;
            case 22: map<std::int32_t>(w, type, v, set, what); break;
            case 23: map<std::uint32_t>(w, type, v, set, what); break;
            case 24: map<std::int64_t>(w, type, v, set, what); break;
            case 25: map<std::uint64_t>(w, type, v, set, what); break;
            case 26: map<std::string>(w, type, v, set, what); break;
            case 27: map<Bytes>(w, type, v, set, what); break;
            case 28: map<std::vector<std::int32_t>>(w, type, v, set, what); break;
            case 29: map<std::vector<std::uint32_t>>(w, type, v, set, what); break;
            case 30: map<std::vector<std::int64_t>>(w, type, v, set, what); break;
            case 31: map<std::vector<std::uint64_t>>(w, type, v, set, what); break;
            case 32: map<std::vector<std::string>>(w, type, v, set, what); break;
            default: w.skip(type, what); break;
        }
    }
    if (!set) malformed(where + " has no value");
    return v;
}

// A map<string, AttrValue> field's entry, into `attrs`.
void read_attr_entry(Wire& w, std::uint32_t type, AttrMap& attrs, const char* what) {
    Wire::expect(type, LEN, what);
    Wire entry = w.message(what);
    std::string key;
    bool has_value = false;
    std::uint32_t field, t;
    Wire value(nullptr, 0, entry.depth() + 1);
    while (entry.next(field, t, what)) {
        if (field == 1) {
            read_value(entry, t, key, what);
        } else if (field == 2) {
            Wire::expect(t, LEN, what);
            value = entry.message(what);  // a repeated value would merge; XIR writes one, so the last one is read
            has_value = true;
        } else {
            entry.skip(t, what);
        }
    }
    if (!has_value) malformed(std::string(what) + ": attribute \"" + key + "\" has no value");
    attrs[key] = read_attr(value, key);
}

// ---- the graph's messages ----

void parse_tensor(Wire w, TensorMessage& t) {
    std::uint32_t field, type;
    while (w.next(field, type, "a tensor")) {
        switch (field) {
            case 1: read_value(w, type, t.name, "a tensor's name"); break;
            case 2:
                if (type == LEN) {
                    Wire packed = w.message("a tensor's dims");
                    while (!packed.done()) t.dims.push_back((std::uint32_t)packed.varint("a tensor's dims"));
                } else {
                    std::uint32_t d = 0;
                    read_value(w, type, d, "a tensor's dims");
                    t.dims.push_back(d);
                }
                break;
            case 5: read_value(w, type, t.data_type, "a tensor's data type"); break;
            case 6: read_value(w, type, t.bit_width, "a tensor's bit width"); break;
            case 10: read_attr_entry(w, type, t.attrs, "a tensor's attributes"); break;
            default: w.skip(type, "a tensor"); break;
        }
    }
}

void parse_op(Wire w, OpMessage& op) {
    std::uint32_t field, type;
    while (w.next(field, type, "an op")) {
        switch (field) {
            case 1: read_value(w, type, op.name, "an op's name"); break;
            case 2: read_value(w, type, op.type, "an op's type"); break;
            case 3: read_attr_entry(w, type, op.attrs, "an op's attributes"); break;
            case 4: {  // OpArg {1 arg_name, 2 arg_ops}: the names of the ops read, whatever the argument
                Wire::expect(type, LEN, "an op's argument");
                Wire arg = w.message("an op's argument");
                std::uint32_t f, t;
                while (arg.next(f, t, "an op's argument")) {
                    if (f == 2) {
                        std::string src;
                        read_value(arg, t, src, "an op's argument");
                        op.inputs.push_back(std::move(src));
                    } else {
                        arg.skip(t, "an op's argument");
                    }
                }
                break;
            }
            case 5:
                Wire::expect(type, LEN, "an op's output tensor");
                parse_tensor(w.message("an op's output tensor"), op.output);
                op.has_output = true;
                break;
            default: w.skip(type, "an op"); break;
        }
    }
}

void parse_subgraph(Wire w, SubgraphMessage& s) {
    std::uint32_t field, type;
    while (w.next(field, type, "a subgraph")) {
        switch (field) {
            case 1: read_value(w, type, s.name, "a subgraph's name"); break;
            case 3:
                s.ops.emplace_back();
                read_value(w, type, s.ops.back(), "a subgraph's ops");
                break;
            case 5: read_attr_entry(w, type, s.attrs, "a subgraph's attributes"); break;
            case 10:
                Wire::expect(type, LEN, "a subgraph's child");
                s.children.emplace_back();
                parse_subgraph(w.message("a subgraph's child"), s.children.back());
                break;
            default: w.skip(type, "a subgraph"); break;
        }
    }
}

}  // namespace

void parse_graph(Wire w, GraphMessage& g) {
    std::uint32_t field, type;
    while (w.next(field, type, "the graph")) {
        switch (field) {
            case 1: read_value(w, type, g.name, "the graph's name"); break;
            case 5:
                Wire::expect(type, LEN, "an op");
                g.ops.emplace_back();
                parse_op(w.message("an op"), g.ops.back());
                break;
            case 10:
                Wire::expect(type, LEN, "the root subgraph");
                parse_subgraph(w.message("the root subgraph"), g.root);
                g.has_root = true;
                break;
            case 11: read_attr_entry(w, type, g.attrs, "the graph's attributes"); break;
            default: w.skip(type, "the graph"); break;  // op_defs (101) among others: not needed to run
        }
    }
}

}  // namespace standin_xir
