// model_file.h - the stand-in's .bin (../FORMAT.md): models, each an emulator model and the tensors as
// the user sees them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"

namespace standin {

struct TensorDesc {
    std::string name;
    hbDNNTensorProperties props{};  // its scale pointers are null: properties() sets them
    std::vector<float> scales;
    std::vector<int8_t> zero_points;
    int32_t element_size = 0;

    // The properties as hbDNNGet{Input,Output}TensorProperties gives them: the scale arrays point
    // into this description, valid while the model is loaded.
    hbDNNTensorProperties properties() const {
        hbDNNTensorProperties p = props;
        p.scale.scaleData = scales.empty() ? nullptr : const_cast<float*>(scales.data());
        p.scale.zeroPointData = zero_points.empty() ? nullptr : const_cast<int8_t*>(zero_points.data());
        return p;
    }
};

struct ModelDesc {
    std::string name;
    std::vector<uint8_t> accm;
    std::vector<TensorDesc> inputs, outputs;
};

// Parses a whole file; false (with `why`) for anything malformed.
bool parse_model_file(const uint8_t* data, size_t size, std::vector<ModelDesc>& out, std::string& why);

// Bytes of one element of an hbDNNDataType the stand-in supports (S8..U32, F16, F32), else 0.
int32_t element_size(int32_t tensor_type);

}  // namespace standin
