// protobuf_wire.h - protobuf's wire format, read with every varint, length and nesting level checked: how the
// stand-ins read the vendors' protobuf files (the libxir's .xmodel, libdnn's .bin container), since no protobuf
// library is part of their build. A malformed input throws std::runtime_error naming what was being read; fields a
// reader does not know are skipped, as protobuf skips them.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace standin {
namespace protobuf {

// The wire types a field may have (3 and 4, groups, are in neither vendor's files and are refused).
enum WireType : std::uint32_t { VARINT = 0, FIXED64 = 1, LEN = 2, FIXED32 = 5 };

// Messages nest this deep at most (the file's top message is level 0); protobuf's own parsers stop at 100.
constexpr int kMaxNesting = 48;

[[noreturn]] inline void malformed(const std::string& what) { throw std::runtime_error(what); }

class Wire {
public:
    Wire(const std::uint8_t* p, std::size_t n, int depth) : p_(p), end_(p + n), depth_(depth) {}

    bool done() const { return p_ == end_; }
    int depth() const { return depth_; }

    // The next field's number and wire type; false at the end of the message.
    bool next(std::uint32_t& field, std::uint32_t& type, const char* message) {
        if (done()) return false;
        const std::uint64_t tag = varint(message);
        field = (std::uint32_t)(tag >> 3);
        type = (std::uint32_t)(tag & 7);
        if (tag >> 32 || field == 0) malformed(std::string("a field of ") + message + " has an invalid number");
        if (type != VARINT && type != FIXED64 && type != LEN && type != FIXED32)
            malformed(std::string("field ") + std::to_string(field) + " of " + message + " has wire type " +
                      std::to_string(type) + ", which the format's messages do not use");
        return true;
    }

    // Refuses a known field written with another wire type than its declared one.
    static void expect(std::uint32_t type, std::uint32_t want, const char* field) {
        if (type != want)
            malformed(std::string(field) + " has wire type " + std::to_string(type) + ", not " + std::to_string(want));
    }

    std::uint64_t varint(const char* what) {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (done()) malformed(std::string("truncated in ") + what);
            const std::uint8_t b = *p_++;
            if (shift == 63 && b > 1) malformed(std::string("a varint of more than 64 bits in ") + what);
            v |= (std::uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        malformed(std::string("a varint longer than 10 bytes in ") + what);
    }

    template <typename T>
    T fixed(const char* what) {
        T v;
        take(sizeof v, what, &v);
        return v;  // the wire is little-endian, as the hosts the stand-in runs on
    }

    // A length-delimited field's bytes, as text or as a message one level deeper.
    std::string bytes(const char* what) {
        const std::size_t n = length(what);
        std::string s(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        return s;
    }
    Wire message(const char* what) {
        if (depth_ + 1 > kMaxNesting)
            malformed(std::string(what) + " is nested more than " + std::to_string(kMaxNesting) + " messages deep");
        const std::size_t n = length(what);
        Wire inner(p_, n, depth_ + 1);
        p_ += n;
        return inner;
    }

    // Passes over the value of a field this reader does not know.
    void skip(std::uint32_t type, const char* what) {
        switch (type) {
            case VARINT: varint(what); break;
            case FIXED64: take(8, what, nullptr); break;
            case FIXED32: take(4, what, nullptr); break;
            default: p_ += length(what); break;
        }
    }

private:
    std::size_t length(const char* what) {
        const std::uint64_t n = varint(what);
        if (n > (std::uint64_t)(end_ - p_)) malformed(std::string("truncated in ") + what);
        return (std::size_t)n;
    }
    void take(std::size_t n, const char* what, void* out) {
        if (n > (std::size_t)(end_ - p_)) malformed(std::string("truncated in ") + what);
        if (out) std::memcpy(out, p_, n);
        p_ += n;
    }

    const std::uint8_t* p_;
    const std::uint8_t* end_;
    int depth_;
};

}  // namespace protobuf
}  // namespace standin
