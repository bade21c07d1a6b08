// model_file.h - the libdnn stand-in's .bin (../FORMAT.md): models, each an emulator model and the
// tensors as the user sees them, kept both as hbDNNTensorProperties and in the neutral terms the
// common engine converts with.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dnn/hb_dnn.h"
#include "engine.h"
#include "hb_tensor.h"

namespace standin {

using DnnTensor = HbTensor<hbDNNTensorProperties, int8_t>;

struct DnnModel : LoadedModel {
    std::vector<DnnTensor> vendor_inputs, vendor_outputs;  // in step with LoadedModel::inputs, outputs
};

// Parses a whole file; false for anything malformed.
bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out);

}  // namespace standin
