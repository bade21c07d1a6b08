// uri.cpp - the core's URI parser and device query: accel_uri_parse and accel_device_describe as Python values
// (python/accel/CORE_API.md, "Module functions").
#include <string>
#include <vector>

#include "core.h"
#include "errors.h"
#include "wait.h"

namespace accel_py {
namespace {

py::str part(const std::string& uri, uint64_t offset, uint64_t length) {
    return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(uri.data() + offset, (Py_ssize_t)length, "replace"));
}

// (scheme, [(key, value or None), ...]).
py::tuple parse_uri(const std::string& uri) {
    size_t count = 0;
    check(accel_uri_parse(uri.c_str(), nullptr, 0, &count));
    std::vector<accel_uri_item> items(count);
    check(accel_uri_parse(uri.c_str(), items.data(), items.size(), &count));
    py::list options;
    for (size_t i = 1; i < count; i++) {
        const accel_uri_item& it = items[i];
        py::object value = it.has_value ? py::object(part(uri, it.value_offset, it.value_length)) : py::none();
        options.append(py::make_tuple(part(uri, it.key_offset, it.key_length), value));
    }
    return py::make_tuple(part(uri, items[0].key_offset, items[0].key_length), options);
}

py::dict describe(const std::string& uri) {
    accel_device_description d{};
    d.struct_size = sizeof d;
    accel_status status;
    std::string message;
    {
        NoGil nogil;  // the first query may load the drivers
        status = accel_device_describe(uri.c_str(), &d);
        if (status != ACCEL_OK) message = accel_last_error_message();
        nogil.end();
    }
    if (status != ACCEL_OK) raise_status(status, message);
    py::dict out;
    out["flags"] = d.flags;
    out["int8_rules"] = d.int8_rules;
    out["image_formats"] = d.image_formats;
    out["model_format"] = utf8(d.model_format);
    out["file_suffixes"] = utf8(d.file_suffixes);
    out["first_device"] = utf8(d.first_device);
    return out;
}

}  // namespace

void bind_uri(py::module_& m) {
    m.def("parse_uri", &parse_uri, py::arg("uri"),
          "accel_uri_parse: (scheme, [(key, value or None), ...]) of a device URI.");
    m.def("describe", &describe, py::arg("uri"),
          "accel_device_describe: what a device opened with uri would load and how it computes.");
}

}  // namespace accel_py
