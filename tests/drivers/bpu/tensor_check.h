// tensor_check.h - the checks the tensor description unit tests (test_{dnn,ucp}_tensor.cc) count, and
// properties both generations fill alike. Included after the generation's hb_dnn.h (SCALE is its name).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

static int failures = 0;
#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                             \
        }                                                                           \
    } while (0)

static bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// A valid [1, 3, 8, 8] tensor of `type` with its channels padded to 4 (256 bytes), not quantized: the
// properties' fields both generations have (the rest zero).
template <class Props>
Props props_1x3x8x8(int32_t type) {
    Props p;
    std::memset(&p, 0, sizeof p);
    p.validShape.numDimensions = 4;
    const int32_t valid[4] = {1, 3, 8, 8};
    for (int i = 0; i < 4; i++) p.validShape.dimensionSize[i] = valid[i];
    p.stride[3] = 1, p.stride[2] = 8, p.stride[1] = 64, p.stride[0] = 256;
    p.alignedByteSize = 256;
    p.tensorType = type;
    p.quantizeAxis = -1;
    return p;
}

// SCALE-quantizes `p` along `axis` with `count` scales and zero points (the arrays stay the caller's).
template <class Props, class ZeroPoint>
void set_scale(Props& p, float* scales, ZeroPoint* zero_points, int32_t count, int32_t axis) {
    p.quantiType = SCALE;
    p.scale.scaleLen = p.scale.zeroPointLen = count;
    p.scale.scaleData = scales;
    p.scale.zeroPointData = zero_points;
    p.quantizeAxis = axis;
}

static int finish_checks() {
    if (failures) std::fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
