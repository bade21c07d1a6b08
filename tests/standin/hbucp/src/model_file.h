// model_file.h - the hbUCP stand-in's .hbm (../FORMAT.md): models, each an emulator model and its
// tensors as the user sees them, as hbDNNTensorProperties and in the common engine's neutral terms.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine.h"
#include "hobot/dnn/hb_dnn.h"

namespace standin {
namespace ucp {

struct UcpTensor {
    hbDNNTensorProperties props{};  // its scale pointers are null: properties() sets them
    std::vector<float> scales;
    std::vector<int32_t> zero_points;
    bool dynamic = false;  // some stride is -1: the user gives it at inference

    hbDNNTensorProperties properties() const {
        hbDNNTensorProperties p = props;
        p.scale.scaleData = scales.empty() ? nullptr : const_cast<float*>(scales.data());
        p.scale.zeroPointData = zero_points.empty() ? nullptr : const_cast<int32_t*>(zero_points.data());
        return p;
    }
};

struct UcpModel : LoadedModel {
    std::vector<UcpTensor> vendor_inputs, vendor_outputs;  // in step with LoadedModel::inputs, outputs
};

// Parses a whole file; false for anything malformed.
bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out);

}  // namespace ucp
}  // namespace standin
