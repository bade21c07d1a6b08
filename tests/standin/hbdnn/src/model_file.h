// model_file.h - the libdnn stand-in's .bin (../FORMAT.md): models, each an emulator model and the
// tensors as the user sees them, kept both as hbDNNTensorProperties and in the neutral terms the
// common engine converts with.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dnn/hb_dnn.h"
#include "engine.h"

namespace standin {

struct DnnTensor {
    hbDNNTensorProperties props{};  // its scale pointers are null: properties() sets them
    std::vector<float> scales;
    std::vector<int8_t> zero_points;

    // The properties as hbDNNGet{Input,Output}TensorProperties gives them: the scale arrays point
    // into this description, valid while the model is loaded.
    hbDNNTensorProperties properties() const {
        hbDNNTensorProperties p = props;
        p.scale.scaleData = scales.empty() ? nullptr : const_cast<float*>(scales.data());
        p.scale.zeroPointData = zero_points.empty() ? nullptr : const_cast<int8_t*>(zero_points.data());
        return p;
    }
};

struct DnnModel : LoadedModel {
    std::vector<DnnTensor> vendor_inputs, vendor_outputs;  // in step with LoadedModel::inputs, outputs
};

// Parses a whole file; false for anything malformed.
bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out);

}  // namespace standin
