// tensor_buffer.hpp - vart::TensorBuffer (stand-in): memory holding one tensor, as the runner reads and
// writes it. A buffer's location says who can see it: HOST_VIRT is ordinary process memory (the runner
// copies it in and out), HOST_PHY is device memory the host also maps (a runner's own buffers: the
// device reads what the last sync_for_write made visible and the host sees device writes only after
// sync_for_read), DEVICE_n is memory only device n sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

// As in VART's header: the tensor is only declared here (include xir/tensor/tensor.hpp to use it).
namespace xir {
class Tensor;
}  // namespace xir

namespace vart {

class TensorBuffer {
  public:
    explicit TensorBuffer(const xir::Tensor* tensor);
    virtual ~TensorBuffer() = default;

    enum class location_t {
        HOST_VIRT = 0,
        HOST_PHY = 1,
        DEVICE_0 = 2,
        DEVICE_1 = 3,
        DEVICE_2 = 4,
        DEVICE_3 = 5,
        DEVICE_4 = 6,
        DEVICE_5 = 7,
        DEVICE_6 = 8,
        DEVICE_7 = 9
    };

    static std::string to_string(location_t location);
    // Copies the bytes of one buffer into another of a tensor of the same byte size (syncing a HOST_PHY
    // source for read and a HOST_PHY target for write); other sizes end the process.
    static void copy_tensor_buffer(vart::TensorBuffer* tb_from, vart::TensorBuffer* tb_to);
    // A buffer over device memory given by address: the stand-in's DPU has no addresses, so this ends the
    // process.
    static std::unique_ptr<TensorBuffer> create_unowned_device_tensor_buffer(const xir::Tensor* tensor,
                                                                             std::uint64_t batch_addr[],
                                                                             std::size_t addr_arrsize);

    // The host address of element `idx` (all zeros or empty: the first) and the bytes from there to
    // the end of the buffer.
    virtual std::pair<std::uint64_t, std::size_t> data(const std::vector<std::int32_t> idx = {}) = 0;
    virtual location_t get_location() const { return location_t::HOST_VIRT; }
    // The device (physical) address of element `idx`; HOST_VIRT buffers have none (0, 0).
    virtual std::pair<std::uint64_t, std::size_t> data_phy(const std::vector<std::int32_t> idx);
    // Makes the device's writes to [offset, offset+size) visible to the host.
    virtual void sync_for_read(std::uint64_t offset, std::size_t size);
    // Makes the host's writes to [offset, offset+size) visible to the device.
    virtual void sync_for_write(std::uint64_t offset, std::size_t size);
    // Copies `size` bytes of `buf` to batch `batch_idx` at `offset`, cut at the batch's end (VART's "partial
    // copy"); an offset at or past the end aborts, as VART's CHECK does. The virtual functions are VART 3.5's, in
    // its order, so the vtable is the real one.
    virtual void copy_from_host(std::size_t batch_idx, const void* buf, std::size_t size, std::size_t offset);
    // The other way: batch `batch_idx` from `offset` into `buf`, cut likewise.
    virtual void copy_to_host(std::size_t batch_idx, void* buf, std::size_t size, std::size_t offset);
    const xir::Tensor* get_tensor() const;
    // For log messages: the buffer, its tensor and location.
    virtual std::string to_string() const;

  protected:
    const xir::Tensor* tensor_;
};

}  // namespace vart
