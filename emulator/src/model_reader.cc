// model_reader.cc - parses and validates an untrusted .accm image (FORMAT.md) into a Graph.
//
// Rules this file keeps:
//  - every byte read goes through Image, which checks [data, data+size) and reads little-endian
//    values with memcpy (the input may be unaligned); a failed check there is a reader bug,
//    reported as an error, never a crash;
//  - every table is range-checked against the file before any count from it sizes an allocation, so
//    memory use is bounded by a small multiple of the file size;
//  - offset arithmetic is done in uint64_t as "off <= limit && len <= limit - off" (no overflow);
//  - nothing throws out of read_model: std::bad_alloc and anything an op's validate throws become a
//    false return with a message.
#include "model_reader.h"

#include "dtypes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accm_layout.h"
#include "math/fixpoint.h"
#include "ops.h"

namespace accel_emu {
namespace {

// ---- format constants (FORMAT.md; accm_layout.h, generated from emulator/accm_schema.py) ----------

using accm::kDataAlignment;
using accm::kMaxIoCount;
using accm::kMaxNameLength;
using accm::kMaxNodeCount;
using accm::kMaxNodeEdges;
using accm::kMaxTensorBytes;
using accm::kMaxTensorCount;
using accm::kVersionMajor;
using accm::kVersionMinor;
namespace hdr = accm::header_record;  // the byte offset of each field
namespace trec = accm::tensor_record;
namespace nrec = accm::node_record;

static_assert(trec::dims_count == uint32_t(kMaxDims) && accm::kAbsent == kAbsent, "graph.h and FORMAT.md");
static_assert(nrec::ints_count == sizeof(Node::ints) / sizeof(int64_t) &&
                  nrec::floats_count == sizeof(Node::floats) / sizeof(float),
              "graph.h's node parameters and FORMAT.md's node record");

const char* image_format_name(uint32_t format) {
    switch (format) {
        case ACCEL_IMAGE_NONE: return "none";
        case ACCEL_IMAGE_NV12: return "nv12";
        case ACCEL_IMAGE_NV12_Y: return "nv12_y";
        case ACCEL_IMAGE_NV12_UV: return "nv12_uv";
        case ACCEL_IMAGE_Y: return "y";
        case ACCEL_IMAGE_YUV444: return "yuv444";
        case ACCEL_IMAGE_RGB: return "rgb";
        case ACCEL_IMAGE_BGR: return "bgr";
        default: return nullptr;
    }
}

// Bytes per pixel of an image format's buffer (its shape's last dim).
int64_t image_channels(accel_image_format format) {
    switch (format) {
        case ACCEL_IMAGE_NV12_UV: return 2;
        case ACCEL_IMAGE_YUV444:
        case ACCEL_IMAGE_RGB:
        case ACCEL_IMAGE_BGR: return 3;
        default: return 1;
    }
}

const char* kind_name(uint32_t kind) {
    switch (kind) {
        case 0: return "activation";
        case 1: return "graph input";
        case 2: return "graph output";
        case 3: return "constant";
        default: return "unknown";
    }
}

// ---- bounds-checked little-endian reads ---------------------------------------------------------

// Thrown only if the reader itself asks for bytes outside the image (a bug: every range is
// validated before it is read). Caught in read_model and turned into an error.
struct ReadOutOfBounds {
    uint64_t offset;
    uint64_t length;
};

template <typename T>
T load_le(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    uint8_t b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    std::reverse(b, b + sizeof v);
    std::memcpy(&v, b, sizeof v);
#endif
    return v;
}

class Image {
public:
    Image(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}

    uint64_t size() const { return size_; }

    // True if [off, off+len) lies inside [lo, lo+lim) without overflow.
    static bool fits(uint64_t off, uint64_t len, uint64_t limit) { return off <= limit && len <= limit - off; }

    const uint8_t* bytes(uint64_t off, uint64_t len) const {
        if (!fits(off, len, size_)) throw ReadOutOfBounds{off, len};
        return data_ + off;
    }
    uint16_t u16(uint64_t off) const { return load_le<uint16_t>(bytes(off, 2)); }
    uint32_t u32(uint64_t off) const { return load_le<uint32_t>(bytes(off, 4)); }
    uint64_t u64(uint64_t off) const { return load_le<uint64_t>(bytes(off, 8)); }
    int32_t i32(uint64_t off) const { return load_le<int32_t>(bytes(off, 4)); }
    int64_t i64(uint64_t off) const { return load_le<int64_t>(bytes(off, 8)); }
    float f32(uint64_t off) const { return load_le<float>(bytes(off, 4)); }

private:
    const uint8_t* data_;
    uint64_t size_;
};

// ---- message helpers ----------------------------------------------------------------------------

template <typename T>
void append(std::string* s, const T& v) {
    if constexpr (std::is_arithmetic_v<T>) s->append(std::to_string(v));
    else s->append(v);
}

// A scale as a message shows it: its 9 significant digits (to_string's 6 decimals show 2^-60 as 0.000000).
std::string scale_str(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    return buf;
}

template <typename... A>
std::string cat(const A&... a) {
    std::string s;
    (append(&s, a), ...);
    return s;
}

// Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool valid_utf8(const uint8_t* p, size_t n) {
    size_t i = 0;
    while (i < n) {
        const uint8_t c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1Fu;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0Fu;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07u;
        } else return false;
        if (n - i < len) return false;
        for (size_t k = 1; k < len; ++k) {
            const uint8_t cc = p[i + k];
            if ((cc & 0xC0u) != 0x80u) return false;
            cp = (cp << 6) | (cc & 0x3Fu);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

// ---- the parser ---------------------------------------------------------------------------------

struct Header {
    uint16_t version_major = 0, version_minor = 0;
    uint32_t header_size = 0, flags = 0;
    uint64_t file_size = 0;
    uint32_t tensor_count = 0, node_count = 0, input_count = 0, output_count = 0, edge_count = 0;
    uint64_t tensor_table_offset = 0, node_table_offset = 0, io_table_offset = 0, edge_table_offset = 0,
             string_table_offset = 0, string_table_size = 0, data_offset = 0, data_size = 0;
};

struct Section {
    const char* name;
    const char* offset_field;
    uint64_t offset;
    uint64_t length;
    uint64_t alignment;
};

class Parser {
public:
    explicit Parser(Image in) : in_(in) {}

    bool run(Graph* out_graph, uint64_t* out_data_offset) {
        if (!parse_header() || !parse_tensors() || !parse_io() || !check_image_pairs() || !check_int8_rules())
            return false;
        g_.float_isa = float_isa_select();  // before the ops' checks, which size scratch by it
        // The ops' checks may read constants (gather's indices); the section was bounds-checked above.
        g_.constants = in_.bytes(h_.data_offset, h_.data_size);
        const bool nodes_ok = parse_nodes();
        g_.constants = nullptr;
        if (!nodes_ok || !check_produced()) return false;
        g_.weights_bytes = h_.data_size;
        *out_graph = std::move(g_);
        *out_data_offset = h_.data_offset;
        return true;
    }

    std::string& error() { return err_; }

private:
    bool fail(std::string msg) {
        err_ = std::move(msg);
        return false;
    }

    // Reserved fields must be 0 in files of a minor version this reader knows. A higher minor may
    // have appended fields in reserved space (FORMAT.md: versioning), which this reader ignores.
    bool reserved_ok(uint64_t value) const { return value == 0 || h_.version_minor > kVersionMinor; }

    std::string tensor_label(uint32_t i) const {
        if (i < g_.tensors.size() && !g_.tensors[i].name.empty())
            return cat("tensor ", i, " ('", g_.tensors[i].name, "')");
        return cat("tensor ", i);
    }

    // Reads a name from the string table, checking its range, length, NUL bytes and UTF-8.
    bool read_name(const std::string& who, uint32_t name_offset, uint32_t name_length, uint32_t min_length,
                   std::string* name) {
        if (name_length < min_length || name_length > kMaxNameLength)
            return fail(cat(who, ": name_length ", name_length, " is outside ", min_length, "..", kMaxNameLength));
        if (!Image::fits(name_offset, name_length, h_.string_table_size))
            return fail(cat(who, ": name_offset ", name_offset, " + name_length ", name_length,
                            " exceeds string table size ", h_.string_table_size));
        const uint8_t* p = in_.bytes(h_.string_table_offset + name_offset, name_length);
        if (name_length > 0 && std::memchr(p, 0, name_length) != nullptr)
            return fail(cat(who, ": name at string offset ", name_offset, " contains a NUL byte"));
        if (!valid_utf8(p, name_length))
            return fail(cat(who, ": name at string offset ", name_offset, " is not valid UTF-8"));
        name->assign(reinterpret_cast<const char*>(p), name_length);
        return true;
    }

    // ---- header ----

    bool parse_header() {
        const uint64_t size = in_.size();
        if (size < hdr::kBytes)
            return fail(cat("header: file size ", size, " is smaller than the ", hdr::kBytes, "-byte header"));
        const uint8_t* magic = in_.bytes(hdr::magic, hdr::magic_count);
        if (std::memcmp(magic, accm::kMagic, hdr::magic_count) != 0) {
            static const char hex[] = "0123456789abcdef";
            std::string m;
            for (uint32_t i = 0; i < hdr::magic_count; ++i) {
                m += "\\x";
                m += hex[magic[i] >> 4];
                m += hex[magic[i] & 15];
            }
            return fail(cat("header: magic is \"", m, "\", expected \"ACCM\" (not an .accm file)"));
        }
        h_.version_major = in_.u16(hdr::version_major);
        h_.version_minor = in_.u16(hdr::version_minor);
        if (h_.version_major != kVersionMajor)
            return fail(cat("header: version_major ", unsigned(h_.version_major),
                            " is not supported (this reader knows version ", unsigned(kVersionMajor), ".x)"));
        h_.header_size = in_.u32(hdr::header_size);
        if (h_.header_size < hdr::kBytes || h_.header_size > size)
            return fail(cat("header: header_size ", h_.header_size, " is outside ", hdr::kBytes, "..", size,
                            " (the file size)"));
        h_.flags = in_.u32(hdr::flags);
        if (h_.flags != 0) return fail(cat("header: flags ", h_.flags, " must be 0 (reserved)"));
        h_.file_size = in_.u64(hdr::file_size);
        if (h_.file_size != size)
            return fail(cat("header: file_size ", h_.file_size, " does not match the image size ", size,
                            " (truncated or padded file)"));
        h_.tensor_count = in_.u32(hdr::tensor_count);
        h_.node_count = in_.u32(hdr::node_count);
        h_.input_count = in_.u32(hdr::input_count);
        h_.output_count = in_.u32(hdr::output_count);
        h_.edge_count = in_.u32(hdr::edge_count);
        // int8_rules (minor 2; reserved and 0 before): whose integer arithmetic the model computes.
        const uint32_t rules = in_.u32(hdr::int8_rules);
        if (h_.version_minor < accm::kInt8RulesMinor && rules != 0)
            return fail(cat("header: reserved field at offset ", hdr::int8_rules, " is ", rules, ", must be 0"));
        if (!is_known(Int8Rules(rules)))
            return fail(cat("header: int8_rules ", rules, " is unknown to this reader (0 ort, 1 dpu, 2 bpu)"));
        g_.int8_rules = Int8Rules(rules);
        h_.tensor_table_offset = in_.u64(hdr::tensor_table_offset);
        h_.node_table_offset = in_.u64(hdr::node_table_offset);
        h_.io_table_offset = in_.u64(hdr::io_table_offset);
        h_.edge_table_offset = in_.u64(hdr::edge_table_offset);
        h_.string_table_offset = in_.u64(hdr::string_table_offset);
        h_.string_table_size = in_.u64(hdr::string_table_size);
        h_.data_offset = in_.u64(hdr::data_offset);
        h_.data_size = in_.u64(hdr::data_size);
        for (uint64_t off = hdr::reserved2; off < hdr::reserved2 + 8 * hdr::reserved2_count; off += 8)
            if (!reserved_ok(in_.u64(off)))
                return fail(cat("header: reserved field at offset ", off, " is ", in_.u64(off), ", must be 0"));

        if (h_.tensor_count < 1 || h_.tensor_count > kMaxTensorCount)
            return fail(cat("header: tensor_count ", h_.tensor_count, " is outside 1..", kMaxTensorCount));
        if (h_.node_count > kMaxNodeCount)
            return fail(cat("header: node_count ", h_.node_count, " is outside 0..", kMaxNodeCount));
        const uint32_t min_inputs = h_.version_minor >= accm::kNoInputsMinor ? 0 : 1;
        if (h_.input_count < min_inputs || h_.input_count > kMaxIoCount)
            return fail(cat("header: input_count ", h_.input_count, " is outside ", min_inputs, "..", kMaxIoCount,
                            " (format 1.", h_.version_minor, ")"));
        if (h_.output_count < 1 || h_.output_count > kMaxIoCount)
            return fail(cat("header: output_count ", h_.output_count, " is outside 1..", kMaxIoCount));
        if (uint64_t(h_.input_count) + h_.output_count > h_.tensor_count)
            return fail(cat("header: input_count ", h_.input_count, " + output_count ", h_.output_count,
                            " exceeds tensor_count ", h_.tensor_count));

        // Every count is a u32 and every record at most 192 bytes: these products cannot overflow.
        Section sections[] = {
            {"header", "header_size", 0, h_.header_size, 1},
            {"tensor table", "tensor_table_offset", h_.tensor_table_offset, uint64_t(h_.tensor_count) * trec::kBytes,
             8},
            {"node table", "node_table_offset", h_.node_table_offset, uint64_t(h_.node_count) * nrec::kBytes, 8},
            {"io table", "io_table_offset", h_.io_table_offset, (uint64_t(h_.input_count) + h_.output_count) * 4, 4},
            {"edge table", "edge_table_offset", h_.edge_table_offset, uint64_t(h_.edge_count) * 4, 4},
            {"string table", "string_table_offset", h_.string_table_offset, h_.string_table_size, 1},
            {"data section", "data_offset", h_.data_offset, h_.data_size, kDataAlignment},
        };
        for (const Section& s : sections) {
            if (!Image::fits(s.offset, s.length, size))
                return fail(cat("header: ", s.name, " (", s.offset_field, " ", s.offset, " + ", s.length,
                                " bytes) exceeds the file size ", size));
        }
        for (const Section& s : sections) {
            if (s.offset % s.alignment != 0)
                return fail(cat("header: ", s.offset_field, " ", s.offset, " is not a multiple of ", s.alignment));
        }
        // Non-empty sections must not overlap (empty ones occupy no bytes).
        std::vector<const Section*> order;
        for (const Section& s : sections)
            if (s.length > 0) order.push_back(&s);
        std::sort(order.begin(), order.end(), [](const Section* a, const Section* b) { return a->offset < b->offset; });
        for (size_t i = 1; i < order.size(); ++i) {
            const Section* a = order[i - 1];
            const Section* b = order[i];
            if (a->offset + a->length > b->offset)  // both fit in the file: no overflow
                return fail(cat("header: ", a->name, " [", a->offset, ", ", a->offset + a->length, ") overlaps ",
                                b->name, " [", b->offset, ", ", b->offset + b->length, ")"));
        }
        // edge_count must be the sum of the nodes' input and output counts.
        uint64_t edges = 0;
        for (uint32_t n = 0; n < h_.node_count; ++n) {
            const uint64_t base = h_.node_table_offset + uint64_t(n) * nrec::kBytes;
            edges += uint64_t(in_.u32(base + nrec::input_count)) + in_.u32(base + nrec::output_count);
        }
        if (edges != h_.edge_count)
            return fail(cat("header: edge_count ", h_.edge_count,
                            " does not equal the sum of the nodes' input and output counts (", edges, ")"));
        return true;
    }

    // ---- tensors ----

    bool parse_tensors() {
        const uint32_t count = h_.tensor_count;
        g_.tensors.resize(count);
        std::unordered_map<std::string_view, uint32_t> names;
        names.reserve(count);
        for (uint32_t i = 0; i < count; ++i) {
            const uint64_t base = h_.tensor_table_offset + uint64_t(i) * trec::kBytes;
            TensorDesc& t = g_.tensors[i];
            const std::string who0 = cat("tensor ", i);
            if (!read_name(who0, in_.u32(base + trec::name_offset), in_.u32(base + trec::name_length), 1, &t.name))
                return false;
            auto ins = names.emplace(std::string_view(t.name), i);
            if (!ins.second)
                return fail(cat(who0, ": name '", t.name, "' is already used by tensor ", ins.first->second,
                                " (names must be unique)"));
            const std::string who = tensor_label(i);

            const uint32_t dtype = in_.u32(base + trec::dtype);
            const uint32_t layout = in_.u32(base + trec::layout);
            const uint32_t kind = in_.u32(base + trec::kind);
            const uint32_t ndim = in_.u32(base + trec::ndim);
            const uint64_t esize = dtype_size(dtype);
            if (esize == 0) return fail(cat(who, ": dtype ", dtype, " is unknown"));
            if (layout > ACCEL_LAYOUT_NHWC) return fail(cat(who, ": layout ", layout, " is unknown"));
            if (kind > 3) return fail(cat(who, ": kind ", kind, " is unknown"));
            if (ndim > uint32_t(kMaxDims)) return fail(cat(who, ": ndim ", ndim, " exceeds ", kMaxDims));
            if (layout != ACCEL_LAYOUT_NONE && ndim != 4)
                return fail(cat(who, ": layout ", layout == ACCEL_LAYOUT_NCHW ? "NCHW" : "NHWC",
                                " requires ndim 4, got ", ndim));
            t.dtype = accel_dtype(dtype);
            t.layout = accel_layout(layout);
            t.kind = TensorKind(kind);
            t.ndim = int(ndim);

            // Element count and bytes, each step bounded by 2^40 so nothing overflows.
            const uint64_t max_numel = kMaxTensorBytes / esize;
            uint64_t numel = 1;
            for (uint32_t d = 0; d < uint32_t(kMaxDims); ++d) {
                const int64_t v = in_.i64(base + trec::dims + 8 * uint64_t(d));
                t.dims[d] = v;
                if (d < ndim) {
                    if (v < 1) return fail(cat(who, ": dims[", d, "] is ", v, ", must be >= 1"));
                    if (uint64_t(v) > max_numel / numel)
                        return fail(cat(who, ": element count exceeds the limit (dims[", d, "] = ", v,
                                        "; element count * dtype size must be <= 2^40)"));
                    numel *= uint64_t(v);
                } else if (v != 0) {
                    return fail(cat(who, ": dims[", d, "] is ", v, " beyond ndim ", ndim, ", must be 0"));
                }
            }
            t.numel = int64_t(numel);
            t.bytes = numel * esize;

            const uint64_t data_offset = in_.u64(base + trec::data_offset);
            const uint64_t data_size = in_.u64(base + trec::data_size);
            if (t.kind == TensorKind::Constant) {
                if (data_offset % kDataAlignment != 0)
                    return fail(cat(who, ": data_offset ", data_offset, " is not a multiple of 64"));
                if (data_size != t.bytes)
                    return fail(cat(who, ": data_size ", data_size, " does not equal ", t.bytes, " (element count ",
                                    numel, " * dtype size ", esize, ")"));
                if (!Image::fits(data_offset, data_size, h_.data_size))
                    return fail(cat(who, ": data_offset ", data_offset, " + data_size ", data_size,
                                    " exceeds data section size ", h_.data_size));
                t.data_offset = data_offset;
            } else if (data_offset != 0 || data_size != 0) {
                return fail(cat(who, ": data_offset ", data_offset, " and data_size ", data_size,
                                " must be 0 for a tensor of kind ", kind, " (", kind_name(kind), ")"));
            }

            if (!parse_quant(who, base, &t)) return false;

            const uint32_t image_format = in_.u32(base + trec::image_format);
            if (h_.version_minor < accm::kImageFormatMinor) {
                if (image_format != 0)
                    return fail(cat(who, ": reserved field at offset ", trec::image_format, " is ", image_format,
                                    ", must be 0 (it is ", "image_format from format 1.",
                                    unsigned(accm::kImageFormatMinor), " on; this file is 1.",
                                    unsigned(h_.version_minor), ")"));
            } else if (!parse_image(who, image_format, &t)) {
                return false;
            }
        }
        return true;
    }

    // The tensor record's image_format (minor 4): a known format on a uint8 NHWC graph input of batch 1
    // whose shape the format gives (FORMAT.md, image inputs). The NV12 planes' pairing is checked with the
    // io table (check_image_pairs).
    bool parse_image(const std::string& who, uint32_t code, TensorDesc* t) {
        if (code == ACCEL_IMAGE_NONE) return true;
        const char* name = image_format_name(code);
        if (name == nullptr) return fail(cat(who, ": image_format ", code, " is unknown (0 none .. 7 bgr)"));
        const auto format = accel_image_format(code);
        const std::string what = cat(who, ": image_format ", code, " (", name, ")");
        if (t->kind != TensorKind::Input)
            return fail(cat(what, " on a tensor of kind ", uint32_t(t->kind), " (", kind_name(uint32_t(t->kind)),
                            "); only graph inputs are images"));
        if (t->dtype != ACCEL_DTYPE_UINT8) return fail(cat(what, " needs dtype uint8, got dtype ", int(t->dtype)));
        if (t->ndim != 4 || t->layout != ACCEL_LAYOUT_NHWC)
            return fail(cat(what, " needs ndim 4 and layout NHWC, got ndim ", t->ndim, " and layout ", int(t->layout)));
        const int64_t* d = t->dims;
        const std::string shape = cat("(", d[0], ", ", d[1], ", ", d[2], ", ", d[3], ")");
        const int64_t channels = image_channels(format);
        if (d[0] != 1 || d[3] != channels)
            return fail(cat(what, " needs shape (1, rows, columns, ", channels, "), got ", shape));
        if (format == ACCEL_IMAGE_NV12 && d[1] % 3 != 0)
            return fail(cat(what, " needs H * 3/2 rows (a multiple of 3), got shape ", shape));
        int64_t height = 0, width = 0;
        image_size(format, d, &height, &width);
        if (is_nv12_form(format) && (height < 2 || width < 2 || height % 2 != 0 || width % 2 != 0))
            return fail(cat(what, " needs an even height and width of at least 2, got ", height, "x", width, " (shape ",
                            shape, ")"));
        t->image_format = format;
        return true;
    }

    // Every nv12_y graph input is followed by its nv12_uv plane of the same image size, and every nv12_uv
    // one follows its nv12_y plane.
    bool check_image_pairs() {
        const std::vector<uint32_t>& in = g_.inputs;
        for (size_t i = 0; i < in.size(); ++i) {
            const TensorDesc& t = g_.tensors[in[i]];
            if (t.image_format == ACCEL_IMAGE_NV12_Y) {
                if (i + 1 >= in.size() || g_.tensors[in[i + 1]].image_format != ACCEL_IMAGE_NV12_UV)
                    return fail(cat(tensor_label(in[i]), ": image_format 2 (nv12_y), input ", i,
                                    ", is not followed by its nv12_uv plane as input ", i + 1));
                const TensorDesc& uv = g_.tensors[in[i + 1]];
                int64_t yh = 0, yw = 0, uvh = 0, uvw = 0;
                image_size(t.image_format, t.dims, &yh, &yw);
                image_size(uv.image_format, uv.dims, &uvh, &uvw);
                if (yh != uvh || yw != uvw)
                    return fail(cat(tensor_label(in[i + 1]), ": the nv12_uv plane of a ", uvh, "x", uvw,
                                    " image does not match its nv12_y plane ", tensor_label(in[i]), " of ", yh, "x",
                                    yw));
            } else if (t.image_format == ACCEL_IMAGE_NV12_UV &&
                       (i == 0 || g_.tensors[in[i - 1]].image_format != ACCEL_IMAGE_NV12_Y)) {
                return fail(cat(tensor_label(in[i]), ": image_format 3 (nv12_uv), input ", i,
                                ", does not follow an nv12_y plane"));
            }
        }
        return true;
    }

    bool parse_quant(const std::string& who, uint64_t base, TensorDesc* t) {
        const uint32_t type = in_.u32(base + trec::quant_type);
        const int32_t axis = in_.i32(base + trec::quant_axis);
        const uint32_t count = in_.u32(base + trec::quant_count);
        const uint64_t qoff = in_.u64(base + trec::quant_offset);
        if (type > ACCEL_QUANT_SHIFT) return fail(cat(who, ": quant_type ", type, " is unknown"));
        if (type == ACCEL_QUANT_NONE) {
            if (axis != -1 || count != 0 || qoff != 0)
                return fail(cat(who,
                                ": quant_type 0 (none) requires quant_axis -1, quant_count 0 "
                                "and quant_offset 0; got ",
                                axis, ", ", count, ", ", qoff));
            return true;
        }
        const bool axis_in_range = axis >= 0 && axis < t->ndim;
        if (type == ACCEL_QUANT_PER_TENSOR) {
            if (axis != -1) return fail(cat(who, ": quant_axis ", axis, " must be -1 for per-tensor quantization"));
            if (count != 1) return fail(cat(who, ": quant_count ", count, " must be 1 for per-tensor quantization"));
        } else {
            // Per-axis and shift: quant_axis -1 with quant_count 1 (one value for the whole
            // tensor), or quant_axis in 0..ndim-1 with quant_count == dims[quant_axis].
            const char* what = type == ACCEL_QUANT_PER_AXIS ? "per-axis" : "shift";
            if (axis == -1) {
                if (count != 1)
                    return fail(
                        cat(who, ": quant_count ", count, " must be 1 for ", what, " quantization with quant_axis -1"));
            } else {
                if (!axis_in_range)
                    return fail(cat(who, ": quant_axis ", axis, " is outside 0..", t->ndim - 1, " (or -1) for ", what,
                                    " quantization"));
                if (uint64_t(count) != uint64_t(t->dims[axis]))
                    return fail(cat(who, ": quant_count ", count, " does not equal dims[", axis, "] = ", t->dims[axis],
                                    " for ", what, " quantization"));
            }
        }
        if (qoff % 4 != 0) return fail(cat(who, ": quant_offset ", qoff, " is not a multiple of 4"));
        const uint64_t qbytes = type == ACCEL_QUANT_SHIFT ? uint64_t(count) : uint64_t(count) * 8;  // f32 + i32 each
        if (!Image::fits(qoff, qbytes, h_.data_size))
            return fail(cat(who, ": quant_offset ", qoff, " + ", qbytes,
                            " bytes of quantization parameters exceeds data section size ", h_.data_size));
        // The range is inside the file now, so count is bounded by the file size.
        const uint64_t p = h_.data_offset + qoff;
        t->quant.type = accel_quant_type(type);
        t->quant.axis = axis;
        if (type == ACCEL_QUANT_SHIFT) {
            const uint8_t* s = in_.bytes(p, count);
            t->quant.shifts.assign(s, s + count);
            for (uint8_t k : t->quant.shifts) t->quant.scales.push_back(static_cast<float>(std::ldexp(1.0, -k)));
            t->quant.zero_points.assign(count, 0);
        } else {
            t->quant.scales.resize(count);
            t->quant.zero_points.resize(count);
            for (uint32_t k = 0; k < count; ++k) {
                t->quant.scales[k] = in_.f32(p + 4 * uint64_t(k));
                t->quant.zero_points[k] = in_.i32(p + 4 * uint64_t(count) + 4 * uint64_t(k));
            }
        }
        return true;
    }

    // ---- io table ----

    bool parse_io() {
        const uint32_t n_in = h_.input_count, n_out = h_.output_count;
        std::vector<uint8_t> listed(h_.tensor_count, 0);
        g_.inputs.reserve(n_in);
        g_.outputs.reserve(n_out);
        for (uint32_t j = 0; j < n_in + n_out; ++j) {
            const bool is_input = j < n_in;
            const uint32_t pos = is_input ? j : j - n_in;
            const std::string who = cat("io table: ", is_input ? "input " : "output ", pos);
            const uint32_t t = in_.u32(h_.io_table_offset + 4 * uint64_t(j));
            if (t >= h_.tensor_count)
                return fail(cat(who, ": tensor index ", t, " is out of range (tensor_count ", h_.tensor_count, ")"));
            const TensorKind want = is_input ? TensorKind::Input : TensorKind::Output;
            const uint32_t kind = uint32_t(g_.tensors[t].kind);
            if (g_.tensors[t].kind != want)
                return fail(cat(who, " is ", tensor_label(t), " of kind ", kind, " (", kind_name(kind),
                                "), expected kind ", uint32_t(want), " (", kind_name(uint32_t(want)), ")"));
            if (listed[t]) return fail(cat(who, ": ", tensor_label(t), " is listed more than once"));
            listed[t] = 1;
            (is_input ? g_.inputs : g_.outputs).push_back(t);
        }
        for (uint32_t t = 0; t < h_.tensor_count; ++t) {
            const TensorKind k = g_.tensors[t].kind;
            if ((k == TensorKind::Input || k == TensorKind::Output) && !listed[t])
                return fail(cat(tensor_label(t), ": kind ", uint32_t(k), " (", kind_name(uint32_t(k)),
                                ") but not listed in the io table"));
        }
        return true;
    }

    // ---- nodes ----

    bool parse_nodes() {
        const uint32_t tcount = h_.tensor_count;
        std::vector<int64_t> producer(tcount, -1);  // node index that writes each tensor
        std::vector<int64_t> input_of(tcount, -1);  // last node index that reads each tensor
        g_.nodes.reserve(h_.node_count);
        for (uint32_t n = 0; n < h_.node_count; ++n) {
            const uint64_t base = h_.node_table_offset + uint64_t(n) * nrec::kBytes;
            g_.nodes.emplace_back();
            Node& node = g_.nodes.back();
            if (!read_name(cat("node ", n), in_.u32(base + nrec::name_offset), in_.u32(base + nrec::name_length), 0,
                           &node.name))
                return false;
            const std::string who = node.name.empty() ? cat("node ", n) : cat("node ", n, " ('", node.name, "')");

            const uint32_t op = in_.u32(base + nrec::op);
            const uint32_t n_in = in_.u32(base + nrec::input_count);
            const uint32_t n_out = in_.u32(base + nrec::output_count);
            const uint32_t edge_offset = in_.u32(base + nrec::edge_offset);
            const uint32_t act = in_.u32(base + nrec::activation);
            const OpDef* def = find_op(op);
            if (def == nullptr)
                return fail(cat(who, ": op code ", op, " is unknown to this reader (file version ",
                                unsigned(h_.version_major), ".", unsigned(h_.version_minor), ")"));
            if (n_in > kMaxNodeEdges) return fail(cat(who, ": input_count ", n_in, " exceeds ", kMaxNodeEdges));
            if (n_out > kMaxNodeEdges) return fail(cat(who, ": output_count ", n_out, " exceeds ", kMaxNodeEdges));
            if (!Image::fits(edge_offset, uint64_t(n_in) + n_out, h_.edge_count))
                return fail(cat(who, ": edge_offset ", edge_offset, " + input_count ", n_in, " + output_count ", n_out,
                                " exceeds edge_count ", h_.edge_count));
            if (!valid_activation(act)) return fail(cat(who, ": activation ", act, " is unknown"));
            const uint32_t reserved = in_.u32(base + nrec::reserved);
            if (!reserved_ok(reserved))
                return fail(cat(who, ": reserved field at offset ", nrec::reserved, " is ", reserved, ", must be 0"));

            node.op = Op(op);
            node.act = Act(act);
            node.act_alpha = in_.f32(base + nrec::act_alpha);
            node.act_beta = in_.f32(base + nrec::act_beta);
            for (uint32_t k = 0; k < nrec::ints_count; ++k) node.ints[k] = in_.i64(base + nrec::ints + 8 * uint64_t(k));
            for (uint32_t k = 0; k < nrec::floats_count; ++k)
                node.floats[k] = in_.f32(base + nrec::floats + 4 * uint64_t(k));

            const uint64_t edges = h_.edge_table_offset + 4 * uint64_t(edge_offset);
            node.inputs.resize(n_in);
            node.outputs.resize(n_out);
            for (uint32_t k = 0; k < n_in; ++k) {
                const uint32_t t = in_.u32(edges + 4 * uint64_t(k));
                node.inputs[k] = t;
                if (t == kAbsent) continue;
                if (t >= tcount)
                    return fail(
                        cat(who, ": input ", k, " is tensor index ", t, ", out of range (tensor_count ", tcount, ")"));
                const TensorKind kind = g_.tensors[t].kind;
                if (kind != TensorKind::Constant && kind != TensorKind::Input && producer[t] < 0)
                    return fail(cat(who, ": input ", k, " is ", tensor_label(t),
                                    ", which no earlier node produces (nodes must be in "
                                    "topological order)"));
                input_of[t] = n;
            }
            for (uint32_t k = 0; k < n_out; ++k) {
                const uint32_t t = in_.u32(edges + 4 * (uint64_t(n_in) + k));
                node.outputs[k] = t;
                if (t >= tcount)
                    return fail(
                        cat(who, ": output ", k, " is tensor index ", t, ", out of range (tensor_count ", tcount, ")"));
                const TensorKind kind = g_.tensors[t].kind;
                if (kind == TensorKind::Constant || kind == TensorKind::Input)
                    return fail(cat(who, ": output ", k, " is ", tensor_label(t), " of kind ", uint32_t(kind), " (",
                                    kind_name(uint32_t(kind)), "), which no node may write"));
                if (input_of[t] == int64_t(n))
                    return fail(
                        cat(who, ": output ", k, " is ", tensor_label(t), ", which is also an input of the same node"));
                if (producer[t] >= 0)
                    return fail(cat(who, ": output ", k, " is ", tensor_label(t), ", which node ", producer[t],
                                    " already produces (each tensor has exactly one producer)"));
                producer[t] = n;
            }

            std::string op_err;
            bool op_ok = false;
            try {
                op_ok = def->validate(g_, node, &op_err);
            } catch (const std::exception& e) {
                return fail(cat(who, ": the op's check failed: ", e.what()));
            }
            if (!op_ok) {
                if (op_err.empty())
                    op_err = cat(def->name != nullptr ? def->name : "op", ": rejected by the op's check");
                return fail(cat(who, ": ", op_err));
            }
        }
        producer_ = std::move(producer);
        return true;
    }

    // ---- the int8 rules' own constraints on quantized tensors ----

    // Every quantized tensor int8 (int32 for a sum or a bias: the devices compute in int8) with zero points 0;
    // dpu: every scale a power of two (2^-fix_point) with its fix point within [-kMaxFixPoint, kMaxFixPoint].
    // The compiler's qdq_device.check_quant makes the same checks with the same words.
    bool check_int8_rules() {
        if (g_.int8_rules == Int8Rules::Ort) return true;
        const bool dpu = g_.int8_rules == Int8Rules::Dpu;
        const char* rules = dpu ? "dpu" : "bpu";
        for (uint32_t t = 0; t < h_.tensor_count; ++t) {
            const TensorDesc& d = g_.tensors[t];
            const Quant& q = d.quant;
            if (q.type != ACCEL_QUANT_PER_TENSOR && q.type != ACCEL_QUANT_PER_AXIS) continue;
            if (d.dtype != ACCEL_DTYPE_INT8 && d.dtype != ACCEL_DTYPE_INT32)
                return fail(
                    cat(tensor_label(t), ": is ", dtype_name(d.dtype), ": the ", rules, " int8 rules compute in int8"));
            for (size_t i = 0; i < q.scales.size(); ++i) {
                int32_t fp = 0;
                if (dpu && !power_of_two_fix_point(q.scales[i], &fp))
                    return fail(cat(tensor_label(t), ": scale ", scale_str(q.scales[i]),
                                    " is not a power of two, which the dpu int8 rules need"));
                if (dpu && (fp < -kMaxFixPoint || fp > kMaxFixPoint))
                    return fail(cat(tensor_label(t), ": scale ", scale_str(q.scales[i]), " = 2^", -fp,
                                    " is a power of two, but its fix point ", fp, " is out of [", -kMaxFixPoint, ", ",
                                    kMaxFixPoint, "], the fix points the dpu int8 rules hold"));
                if (i < q.zero_points.size() && q.zero_points[i] != 0)
                    return fail(cat(tensor_label(t), ": zero point ", q.zero_points[i], " is not 0, which the ", rules,
                                    " int8 rules need"));
            }
        }
        return true;
    }

    // ---- every activation and graph output is produced ----

    bool check_produced() {
        for (uint32_t t = 0; t < h_.tensor_count; ++t) {
            const TensorKind k = g_.tensors[t].kind;
            if ((k == TensorKind::Activation || k == TensorKind::Output) && producer_[t] < 0)
                return fail(cat(tensor_label(t), ": kind ", uint32_t(k), " (", kind_name(uint32_t(k)),
                                ") but no node produces it"));
        }
        return true;
    }

    Image in_;
    Header h_;
    Graph g_;
    std::vector<int64_t> producer_;
    std::string err_;
};

}  // namespace

bool read_model(const uint8_t* data, size_t size, Graph* graph, uint64_t* data_section_offset, std::string* error) {
    std::string scratch;
    std::string* err = error != nullptr ? error : &scratch;
    try {
        if (graph == nullptr || data_section_offset == nullptr) {
            *err = "read_model: graph and data_section_offset must not be null";
            return false;
        }
        if (data == nullptr && size != 0) {
            *err = "read_model: data is null";
            return false;
        }
        Parser parser(Image(data, uint64_t(size)));
        if (parser.run(graph, data_section_offset)) return true;
        *err = std::move(parser.error());
        if (err->empty()) *err = "invalid model";
        return false;
    } catch (const ReadOutOfBounds& e) {
        try {
            *err = cat("internal error in the model reader: read of ", e.length, " bytes at offset ", e.offset,
                       " outside the ", uint64_t(size), "-byte image");
        } catch (...) {
        }
    } catch (const std::bad_alloc&) {
        try {
            *err = "out of host memory while reading the model";
        } catch (...) {
        }
    } catch (const std::exception& e) {
        try {
            *err = cat("error while reading the model: ", e.what());
        } catch (...) {
        }
    } catch (...) {
        try {
            *err = "unknown error while reading the model";
        } catch (...) {
        }
    }
    return false;
}

}  // namespace accel_emu
