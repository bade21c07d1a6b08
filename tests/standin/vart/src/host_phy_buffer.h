// host_phy_buffer.h - a runner's own tensor buffer (HOST_PHY): a host side the user reads and writes
// and a device side the DPU reads and writes. Only sync_for_write (host -> device) and sync_for_read
// (device -> host) move bytes between them, so a forgotten sync gives stale data, as on a board.
#pragma once

#include <cstdint>
#include <memory>

#include "vart/tensor_buffer.hpp"

namespace standin_vart {

class HostPhyBuffer : public vart::TensorBuffer {
public:
    explicit HostPhyBuffer(const xir::Tensor* tensor);
    ~HostPhyBuffer() override;

    std::pair<std::uint64_t, std::size_t> data(const std::vector<std::int32_t> idx = {}) override;
    location_t get_location() const override { return location_t::HOST_PHY; }
    std::pair<std::uint64_t, std::size_t> data_phy(const std::vector<std::int32_t> idx) override;
    void sync_for_read(std::uint64_t offset, std::size_t size) override;
    void sync_for_write(std::uint64_t offset, std::size_t size) override;

    // What the DPU sees.
    std::uint8_t* device_side() { return device_; }
    std::size_t bytes() const { return bytes_; }

private:
    std::size_t offset_of(const std::vector<std::int32_t>& idx) const;
    void check_range(const char* what, std::uint64_t offset, std::size_t size) const;

    std::size_t bytes_;
    std::uint8_t* host_;
    std::uint8_t* device_;
};

}  // namespace standin_vart
