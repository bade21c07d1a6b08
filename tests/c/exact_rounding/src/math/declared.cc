// A source the exact-rounding check accepts (test exact_rounding_refuses): it declares exact rounding.
// Never compiled.
#include "math/exact_rounding.h"
#include "math/quantize.h"
