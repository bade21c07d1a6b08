// container.h - the model records the stand-ins' model files hold (the libdnn `.bin`, inside Horizon's container,
// and the hbUCP `.hbm`; see FORMAT.md beside each): each a name, an emulator model (.accm) and records for its
// inputs and outputs whose layout each format defines; and the `.hbm`'s outer structure, an 8-byte magic then
// models.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine.h"

namespace standin {

// Little-endian reads from a byte range; every read fails (false) rather than run past its end.
class Reader {
public:
    Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
    bool bytes(void* out, size_t n) {
        if ((size_t)(end_ - p_) < n) return false;
        std::memcpy(out, p_, n);
        p_ += n;
        return true;
    }
    template <class T>
    bool value(T& out) {
        return bytes(&out, sizeof out);
    }
    // A u32 count then that many values.
    template <class T>
    bool counted(std::vector<T>& out, uint32_t max_count) {
        uint32_t n = 0;
        if (!value(n) || n > max_count || (size_t)(end_ - p_) / sizeof(T) < n) return false;
        out.resize(n);
        return n == 0 || bytes(out.data(), n * sizeof(T));
    }
    bool string(std::string& out) {
        uint32_t n = 0;
        if (!value(n) || (size_t)(end_ - p_) < n) return false;
        out.assign(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        return true;
    }
    bool blob(std::vector<uint8_t>& out) {
        uint64_t n = 0;
        if (!value(n) || (uint64_t)(end_ - p_) < n) return false;
        out.assign(p_, p_ + n);
        p_ += n;
        return true;
    }

private:
    const uint8_t* p_;
    const uint8_t* end_;
};

template <class Tensor>
struct ModelRecord {
    std::string name;
    std::vector<uint8_t> accm;
    std::vector<Tensor> inputs, outputs;
};

// One model's record: str name, u64 + accm bytes, u32 input count, u32 output count (each <= 64), and the tensor
// records, read by read_tensor(Reader&, Tensor&, std::string& why) -> bool (false with `why` empty: truncated).
template <class Tensor, class ReadTensor>
bool read_model_record(Reader& r, ReadTensor read_tensor, ModelRecord<Tensor>& m, std::string& why) {
    uint32_t n_in = 0, n_out = 0;
    if (!r.string(m.name) || !r.blob(m.accm) || !r.value(n_in) || !r.value(n_out) || n_in > 64 || n_out > 64) {
        if (why.empty()) why = "truncated model record";
        return false;
    }
    m.inputs.resize(n_in);
    m.outputs.resize(n_out);
    for (auto* list : {&m.inputs, &m.outputs})
        for (Tensor& t : *list)
            if (!read_tensor(r, t, why)) {
                if (why.empty()) why = "truncated tensor record";
                return false;
            }
    return true;
}

// Parses a whole file: `magic`, u32 model count (1..64), then the model records (read_model_record).
template <class Tensor, class ReadTensor>
bool parse_container(const uint8_t* data, size_t size, const char (&magic)[9], ReadTensor read_tensor,
                     std::vector<ModelRecord<Tensor>>& out, std::string& why) {
    Reader r(data, size);
    char head[8];
    uint32_t count = 0;
    if (!r.bytes(head, 8) || std::memcmp(head, magic, 8) != 0) {
        why = "not a stand-in model file (bad magic)";
        return false;
    }
    if (!r.value(count) || count == 0 || count > 64) {
        why = "bad model count";
        return false;
    }
    out.resize(count);
    for (ModelRecord<Tensor>& m : out)
        if (!read_model_record(r, read_tensor, m, why)) return false;
    return true;
}

// The models of parsed records, for a stand-in whose Model (a LoadedModel) keeps its vendor's view of
// each tensor in vendor_inputs / vendor_outputs, beside the neutral one: each Record has .vendor and
// .desc.
template <class Model, class Record>
void build_models(std::vector<ModelRecord<Record>>& records, std::vector<std::shared_ptr<LoadedModel>>& out) {
    for (auto& rec : records) {
        auto m = std::make_shared<Model>();
        m->name = rec.name;
        m->accm = std::move(rec.accm);
        for (Record& t : rec.inputs) {
            m->inputs.push_back(t.desc);
            m->vendor_inputs.push_back(t.vendor);
        }
        for (Record& t : rec.outputs) {
            m->outputs.push_back(t.desc);
            m->vendor_outputs.push_back(t.vendor);
        }
        out.push_back(std::move(m));
    }
}

}  // namespace standin
