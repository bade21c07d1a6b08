// tensor_buffer.cc - vart::TensorBuffer's own functions: the defaults its subclasses inherit, the partial
// copies to and from the host (cut at a batch's end, as VART's are) and the static helpers.
#include "vart/tensor_buffer.hpp"

#include <cstring>

#include "fatal.h"
#include "xir/tensor/tensor.hpp"

namespace vart {

TensorBuffer::TensorBuffer(const xir::Tensor* tensor) : tensor_(tensor) {}
const xir::Tensor* TensorBuffer::get_tensor() const { return tensor_; }
std::pair<std::uint64_t, std::size_t> TensorBuffer::data_phy(const std::vector<std::int32_t>) { return {0, 0}; }
void TensorBuffer::sync_for_read(std::uint64_t, std::size_t) {}
void TensorBuffer::sync_for_write(std::uint64_t, std::size_t) {}

namespace {
// Batch `batch`'s bytes of `b`: its address and how many from there to the buffer's end.
std::pair<std::uint64_t, std::size_t> batch_bytes(TensorBuffer* b, std::size_t batch) {
    std::vector<std::int32_t> idx(b->get_tensor() ? b->get_tensor()->get_shape().size() : 1, 0);
    idx[0] = static_cast<std::int32_t>(batch);
    return b->data(idx);
}

std::size_t clipped(std::size_t size, std::size_t offset, std::size_t have, const char* fn) {
    if (offset >= have) standin_vart::fatal("%s: offset %zu is not below the batch's %zu bytes", fn, offset, have);
    return size < have - offset ? size : have - offset;
}
}  // namespace

void TensorBuffer::copy_from_host(std::size_t batch_idx, const void* buf, std::size_t size, std::size_t offset) {
    auto [data, have] = batch_bytes(this, batch_idx);
    std::memcpy(reinterpret_cast<void*>(data + offset), buf, clipped(size, offset, have, "copy_from_host"));
}

void TensorBuffer::copy_to_host(std::size_t batch_idx, void* buf, std::size_t size, std::size_t offset) {
    auto [data, have] = batch_bytes(this, batch_idx);
    std::memcpy(buf, reinterpret_cast<const void*>(data + offset), clipped(size, offset, have, "copy_to_host"));
}

std::string TensorBuffer::to_string(location_t location) {
    if (location == location_t::HOST_VIRT) return "HOST_VIRT";
    if (location == location_t::HOST_PHY) return "HOST_PHY";
    return "DEVICE_" + std::to_string(static_cast<int>(location) - static_cast<int>(location_t::DEVICE_0));
}

std::string TensorBuffer::to_string() const {
    return "TensorBuffer{tensor=" + (tensor_ ? tensor_->get_name() : std::string("none")) +
           ",location=" + to_string(get_location()) + "}";
}

void TensorBuffer::copy_tensor_buffer(TensorBuffer* tb_from, TensorBuffer* tb_to) {
    if (!tb_from || !tb_to || !tb_from->get_tensor() || !tb_to->get_tensor())
        standin_vart::fatal("copy_tensor_buffer: a null buffer or a buffer without a tensor");
    const std::size_t bytes = (std::size_t)tb_from->get_tensor()->get_data_size();
    if (bytes != tb_to->get_tensor()->get_data_size())
        standin_vart::fatal("copy_tensor_buffer: %s has %zu bytes, %s %llu", tb_from->get_tensor()->get_name().c_str(),
                            bytes, tb_to->get_tensor()->get_name().c_str(),
                            (unsigned long long)tb_to->get_tensor()->get_data_size());
    auto from = tb_from->data({}), to = tb_to->data({});
    if (from.second < bytes || to.second < bytes) standin_vart::fatal("copy_tensor_buffer: a buffer is short");
    if (tb_from->get_location() == location_t::HOST_PHY) tb_from->sync_for_read(0, bytes);
    std::memcpy(reinterpret_cast<void*>(to.first), reinterpret_cast<const void*>(from.first), bytes);
    if (tb_to->get_location() == location_t::HOST_PHY) tb_to->sync_for_write(0, bytes);
}

std::unique_ptr<TensorBuffer> TensorBuffer::create_unowned_device_tensor_buffer(const xir::Tensor* tensor,
                                                                                std::uint64_t*, std::size_t) {
    standin_vart::fatal("create_unowned_device_tensor_buffer: tensor %s: the stand-in's DPU has no device addresses",
                        tensor ? tensor->get_name().c_str() : "(null)");
}

}  // namespace vart
