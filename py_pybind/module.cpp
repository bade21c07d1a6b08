// module.cpp - accel._pybind: the pybind11 core of the accel package (python/accel/CORE_API.md).
#include <string>

#include "accel_runcore.h"
#include "core.h"
#include "errors.h"
#include "job.h"

namespace accel_py {
namespace {

py::list backends() {
    size_t count = 0;
    check(accel_driver_count(&count));
    py::list names;
    for (size_t i = 0; i < count; i++) {
        const char* name = nullptr;
        check(accel_driver_name(i, &name));
        names.append(utf8(name));
    }
    return names;
}

}  // namespace
}  // namespace accel_py

PYBIND11_MODULE(_pybind, m) {
    using namespace accel_py;
    // A libaccel of another ABI major version would misread every struct: refuse to load.
    uint32_t abi = accel_abi_version();
    if ((abi >> 16) != ACCEL_ABI_VERSION_MAJOR)
        throw py::import_error("accel._pybind was built for libaccel ABI " + std::to_string(ACCEL_ABI_VERSION_MAJOR) +
                               ".x, the loaded libaccel has ABI " + std::to_string(abi >> 16) + "." +
                               std::to_string(abi & 0xffff));

    init_errors();
    m.doc() = "The pybind11 core of accel (see python/accel/CORE_API.md).";
    m.def("abi_version", [] { return accel_abi_version(); }, "accel_abi_version(): (major << 16) | minor");
    m.def("version", [] { return std::string(accel_version_string()); }, "libaccel's release version");
    m.def("backends", &backends, "The schemes of the usable drivers, in loader order.");
    m.def("inflight_callbacks", &accel_runcore_callbacks_pending,
          "Jobs submitted with CoreModel.submit whose callback has not returned yet.");

    bind_device(m);
    bind_buffer(m);
    bind_tensor(m);
    bind_model(m);
    bind_job(m);
    bind_uri(m);
    install_core_hooks();
}
