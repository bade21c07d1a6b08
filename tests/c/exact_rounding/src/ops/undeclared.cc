// A source the exact-rounding check must refuse (test exact_rounding_refuses): it includes an int8
// arithmetic header and not math/exact_rounding.h. Never compiled.
#include "math/quantize.h"
