// model_file.h - the hbUCP stand-in's .hbm (../FORMAT.md): models, each an emulator model and its
// tensors as the user sees them, as hbDNNTensorProperties and in the common engine's neutral terms.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine.h"
#include "hb_tensor.h"
#include "hobot/dnn/hb_dnn.h"

namespace standin {
namespace ucp {

struct UcpTensor : HbTensor<hbDNNTensorProperties, int32_t> {
    bool dynamic = false;  // some stride is -1: the user gives it at inference
};

struct UcpModel : LoadedModel {
    std::vector<UcpTensor> vendor_inputs, vendor_outputs;  // in step with LoadedModel::inputs, outputs
};

// Parses a whole file; false for anything malformed.
bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out);

}  // namespace ucp
}  // namespace standin
