// hb_tensor.h - a tensor as both Horizon generations' hbDNNGet{Input,Output}TensorProperties give it:
// the property struct with its scale and zero point arrays owned beside it (int8 zero points on
// X3/X5, int32 on S100).
#pragma once

#include <vector>

namespace standin {

template <class Props, class ZeroPoint>
struct HbTensor {
    Props props{};  // its scale pointers are null: properties() sets them
    std::vector<float> scales;
    std::vector<ZeroPoint> zero_points;

    // The properties to hand out: the scale arrays point into this tensor, valid while its model is
    // loaded.
    Props properties() const {
        Props p = props;
        p.scale.scaleData = scales.empty() ? nullptr : const_cast<float*>(scales.data());
        p.scale.zeroPointData = zero_points.empty() ? nullptr : const_cast<ZeroPoint*>(zero_points.data());
        return p;
    }
};

}  // namespace standin
