// host_phy_buffer.cc - see host_phy_buffer.h.
#include "host_phy_buffer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fatal.h"
#include "xir/tensor/tensor.hpp"

namespace standin_vart {

namespace {
constexpr std::size_t kAlign = 64;  // CMA blocks are page aligned; 64 is what accel promises

std::uint8_t* aligned_block(std::size_t bytes) {
    std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    void* p = std::aligned_alloc(kAlign, rounded ? rounded : kAlign);
    if (!p) fatal("out of memory for a %zu-byte tensor buffer", bytes);
    std::memset(p, 0, rounded ? rounded : kAlign);
    return static_cast<std::uint8_t*>(p);
}
}  // namespace

HostPhyBuffer::HostPhyBuffer(const xir::Tensor* tensor)
    : vart::TensorBuffer(tensor), bytes_((std::size_t)tensor->get_data_size()) {
    host_ = aligned_block(bytes_);
    device_ = aligned_block(bytes_);
}

HostPhyBuffer::~HostPhyBuffer() {
    std::free(host_);
    std::free(device_);
}

std::size_t HostPhyBuffer::offset_of(const std::vector<std::int32_t>& idx) const {
    const std::vector<std::int32_t> shape = tensor_->get_shape();
    if (idx.empty()) return 0;
    if (idx.size() != shape.size())
        fatal("tensor %s: index of rank %zu, tensor rank %zu", tensor_->get_name().c_str(), idx.size(), shape.size());
    std::size_t offset = 0;
    for (std::size_t d = 0; d < shape.size(); d++) {
        if (idx[d] < 0 || idx[d] >= shape[d]) fatal("tensor %s: index out of range", tensor_->get_name().c_str());
        offset = offset * (std::size_t)shape[d] + (std::size_t)idx[d];
    }
    return offset * (std::size_t)(tensor_->get_data_type().bit_width / 8);
}

std::pair<std::uint64_t, std::size_t> HostPhyBuffer::data(const std::vector<std::int32_t> idx) {
    std::size_t off = offset_of(idx);
    return {(std::uint64_t)(std::uintptr_t)(host_ + off), bytes_ - off};
}

std::pair<std::uint64_t, std::size_t> HostPhyBuffer::data_phy(const std::vector<std::int32_t> idx) {
    std::size_t off = offset_of(idx);
    return {(std::uint64_t)(std::uintptr_t)(device_ + off), bytes_ - off};
}

void HostPhyBuffer::check_range(const char* what, std::uint64_t offset, std::size_t size) const {
    if (offset > bytes_ || size > bytes_ - offset)
        fatal("%s(%llu, %zu) on tensor %s of %zu bytes", what, (unsigned long long)offset, size,
              tensor_->get_name().c_str(), bytes_);
}

void HostPhyBuffer::sync_for_read(std::uint64_t offset, std::size_t size) {
    check_range("sync_for_read", offset, size);
    std::memcpy(host_ + offset, device_ + offset, size);
}

void HostPhyBuffer::sync_for_write(std::uint64_t offset, std::size_t size) {
    check_range("sync_for_write", offset, size);
    std::memcpy(device_ + offset, host_ + offset, size);
}

}  // namespace standin_vart
