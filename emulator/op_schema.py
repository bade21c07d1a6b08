"""The emulator's runtime ops: the one source of their codes, parameters and rules.

Everything that must agree between the compiler, the file format and the kernels is written here
once; `python tools/op_table.py` generates from it
- `emulator/src/op_codes.h`: the `Op`, `Act` and `BinOp` enums and the parameter value enums (the kernels),
- `emulator/src/op_params.h`: one parameter struct per op, read from a node by name (the kernels),
- `emulator/src/ops/op_contract.h`: each op's input and output counts (from its signature), dtype rule
  (float32 only unless `any_dtype` or `dtypes`) and activation rule (`act`), which kern::check_common
  checks at load,
- `emulator/src/ops/op_defs.h` and `ops/registry.cc`: the OpDef each op's file defines, `k<Name>Def`,
  and the code -> OpDef table,
- `emulator/compiler/op_params.py`: the codes and one parameter class per op (the compiler),
- the "Fused activations" and "Op codes" tables of `emulator/FORMAT.md`,
and `python tools/op_table.py --check` (run by the tests) fails when one of them is stale. The file's
records, limits and version are emulator/accm_schema.py's; the newest version is derived from the
`minor` of every op and activation here. docs/adding-an-op.md walks through adding an op.

A parameter lives in a node record's `ints` (16 x i64) or `floats` (6 x f32) at a fixed slot, which
is part of the file format: a slot, once given, never changes meaning. `count` > 1 is an array of
that many consecutive slots. Ops and activation codes are append-only; `minor` is the format minor
version that added them (a reader accepts a newer minor only if it knows every code in the file).
"""
from __future__ import annotations

from dataclasses import dataclass, field

INT_SLOTS = 16
FLOAT_SLOTS = 6


@dataclass(frozen=True)
class Param:
    name: str
    slot: int
    doc: str
    count: int = 1          # > 1: an array over slots slot .. slot+count-1
    kind: str = "int"       # "int" (ints, i64) or "float" (floats, f32)
    enum: str | None = None  # the ValueEnum its values come from
    minor: int = 0          # > 0: a parameter an existing op gained at that format minor (0 in older files, the
    #                         op's behaviour before it); a file with a nonzero value is written as that minor


def F(name: str, slot: int, doc: str) -> Param:
    """A float parameter."""
    return Param(name, slot, doc, kind="float")


@dataclass(frozen=True)
class ValueEnum:
    """Named values of an int parameter (a C++ `enum class` and Python constants)."""

    name: str
    values: tuple  # ((name, code), ...); names in snake_case


@dataclass(frozen=True)
class Op:
    code: int
    name: str            # as in FORMAT.md and the compiler's IR
    minor: int           # format minor version that added it
    signature: str       # "inputs -> outputs"
    rule: str            # what it computes, shape rules, constraints
    params: tuple = ()
    any_dtype: bool = False  # else float32 only, unless `dtypes` says otherwise
    dtypes: str = ""         # the op's own dtype rule (quantized ops), in place of float32 only
    class_name: str = ""     # the parameter class: name.title() unless given
    act: str = "none"        # the node's activation field: one of ACT_RULES
    binary: bool = False     # computed by the broadcast kernel's BinOp (a float function of two operands)
    int_minor: int = 0       # the format minor from which it also computes on integers (0: not)

    @property
    def cname(self) -> str:
        return self.class_name or self.name.title()

    @property
    def float32_only(self) -> bool:
        return not self.any_dtype and not self.dtypes

    @property
    def arity(self) -> Arity:
        return arity(self.signature)


@dataclass(frozen=True)
class Activation:
    code: int
    name: str
    minor: int
    formula: str
    cname: str = field(default="")

    @property
    def enum_name(self) -> str:
        return self.cname or "".join(w.title() for w in self.name.split("_"))


# What a node's activation field may hold, per op (the kernels' load-time check, ops/op_util.h):
# "none" only 0; "fused" any code, applied to the output; "function" the op's function (not 0); "device" as
# the header's int8_rules allow (the op's own check: fused activations on the devices' rule sets only).
ACT_RULES = ("none", "fused", "function", "device")
VARIADIC = 0xFFFFFFFF  # Arity.max_in of an op that takes any number of inputs


@dataclass(frozen=True)
class Arity:
    """How many inputs and outputs a node of the op has: the first `required_in` inputs present, those after
    optional (absent in the file: the edge 0xFFFFFFFF)."""

    min_in: int
    max_in: int
    required_in: int
    min_out: int
    max_out: int


def _split(items: str) -> list:
    """`items` split at the commas outside brackets and parentheses."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(items):
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(items[start:i].strip())
            start = i + 1
    return [*out, items[start:].strip()]


def arity(signature: str) -> Arity:
    """The arity an op's signature states ("X, W, B optional -> Y"). Its forms: an input ending "optional";
    one variadic input "X0..Xn-1 (n >= 1)"; outputs ending "(those the outputs mask names, in order)", of
    which at least one is present. Raises ValueError on any other form."""
    ins, arrow, outs = signature.partition(" -> ")
    if not arrow:
        raise ValueError(f"signature {signature!r} has no ' -> '")
    inputs = _split(ins)
    if len(inputs) == 1 and inputs[0] == "X0..Xn-1 (n >= 1)":
        return Arity(1, VARIADIC, 1, 1, 1)
    optional = [i.endswith(" optional") for i in inputs]
    required = optional.index(True) if True in optional else len(inputs)
    if any(not o for o in optional[required:]):
        raise ValueError(f"signature {signature!r}: a required input follows an optional one")
    masked = outs.endswith(" (those the outputs mask names, in order)")
    outputs = _split(outs.removesuffix(" (those the outputs mask names, in order)"))
    for name in [*inputs, *outputs]:
        if "(" in name.removesuffix(" optional") or not name:
            raise ValueError(f"signature {signature!r}: {name!r} is not a tensor")
    return Arity(required, len(inputs), required, 1 if masked else len(outputs), len(outputs))


# ---- parameter value enums ------------------------------------------------------------------------

REDUCE_FN = ValueEnum("ReduceFn", (("mean", 1), ("sum", 2), ("max", 3), ("min", 4), ("prod", 5),
                                   ("sum_square", 6), ("l1", 7), ("l2", 8), ("log_sum_exp", 9)))
RESIZE_MODE = ValueEnum("ResizeMode", (("nearest", 0), ("linear", 1)))
RESIZE_COORD = ValueEnum("ResizeCoord", (("half_pixel", 0), ("asymmetric", 1), ("align_corners", 2),
                                         ("pytorch_half_pixel", 3), ("tf_half_pixel_for_nearest", 4),
                                         ("half_pixel_symmetric", 5)))
NEAREST_ROUNDING = ValueEnum("NearestRounding", (("round_prefer_floor", 0), ("round_prefer_ceil", 1),
                                                 ("floor", 2), ("ceil", 3)))
# The header's int8_rules (minor 2): whose integer arithmetic a model's quantized ops compute: onnxruntime's
# CPU kernels, the Vitis AI DPU's fix-point rules or the Horizon BPU's integer multipliers (docs/quantization.md).
INT8_RULES = ValueEnum("Int8Rules", (("ort", 0), ("dpu", 1), ("bpu", 2)))
# compare (minor 3): which comparison; logic (minor 3): which boolean function.
COMPARE_FN = ValueEnum("CompareFn", (("equal", 1), ("greater", 2), ("greater_or_equal", 3), ("less", 4),
                                     ("less_or_equal", 5)))
LOGIC_FN = ValueEnum("LogicFn", (("and", 1), ("or", 2), ("xor", 3), ("not", 4)))
ENUMS = (REDUCE_FN, RESIZE_MODE, RESIZE_COORD, NEAREST_ROUNDING, INT8_RULES, COMPARE_FN, LOGIC_FN)
PAD_MODE = ValueEnum("PadMode", (("constant", 0), ("reflect", 1), ("edge", 2), ("wrap", 3)))
ENUMS += (PAD_MODE,)
RNN_CELL = ValueEnum("RnnCell", (("rnn", 0), ("gru", 1), ("lstm", 2)))
RNN_DIRECTION = ValueEnum("RnnDirection", (("forward", 0), ("reverse", 1), ("bidirectional", 2)))
ENUMS += (RNN_CELL, RNN_DIRECTION)
# scatternd, scatterelements (minor 6): how an update meets the element it lands on.
SCATTER_REDUCTION = ValueEnum("ScatterReduction", (("none", 0), ("add", 1), ("mul", 2), ("max", 3), ("min", 4)))
ENUMS += (SCATTER_REDUCTION,)
# layernorm's arithmetic (minor 6): 0 the mean, then the variance about it, y = (x - mean) * rstd * S + B (the
# layer norms the compiler fuses from ReduceMean, Sub, Pow, ...); 1 onnxruntime's CPU LayerNormalization kernel.
LAYERNORM_ARITHMETIC = ValueEnum("LayerNormArithmetic", (("centered", 0), ("onnxruntime", 1)))
ENUMS += (LAYERNORM_ARITHMETIC,)

# ---- shared parameter groups ----------------------------------------------------------------------

_WINDOW = (
    Param("kernel_h", 1, "window height (>= 1)"),
    Param("kernel_w", 2, "window width (>= 1)"),
    Param("stride_h", 3, "(>= 1)"),
    Param("stride_w", 4, "(>= 1)"),
    Param("pad_top", 5, "(>= 0)"),
    Param("pad_left", 6, "(>= 0)"),
    Param("pad_bottom", 7, "(>= 0)"),
    Param("pad_right", 8, "(>= 0)"),
    Param("dilation_h", 9, "(>= 1)"),
    Param("dilation_w", 10, "(>= 1)"),
)
_CONV = (Param("group", 0, "g (C and M divisible by g)"), *_WINDOW)

# add, sub, mul, div, min, max: float32, and from minor 3 integers too.
_ARITH_DTYPES = ("A, B and Y float32 (a fused activation allowed); or (minor 3) A, B and Y one integer dtype "
                 "(int8, uint8, int16, uint16, int32, uint32, int64, uint64), activation none")

# bitand, bitor, bitxor, shl, shr (minor 5): integers only.
_INT_ONLY_DTYPES = ("A, B and Y one integer dtype (int8, uint8, int16, uint16, int32, uint32, int64, uint64), "
                    "activation none")

# ---- ops ------------------------------------------------------------------------------------------

OPS = (
    Op(1, "conv", 0, "X[N,C,H,W], W[M,C/g,kh,kw], B[M] optional -> Y[N,M,OH,OW]",
       "OH = (H + pad_top + pad_bottom - dilation_h*(kh-1) - 1) / stride_h + 1, likewise OW, both >= 1. "
       "W and B must be constants.", _CONV, act="fused"),
    Op(2, "gemm", 0, "A, B, C optional -> Y[M,N]",
       "A is [M,K] or [K,M] if trans_a, B is [K,N] or [N,K] if trans_b; Y = alpha * A' B' + beta * C, "
       "C broadcasts to [M,N] (numpy rules)",
       (Param("trans_a", 0, "0 or 1"), Param("trans_b", 1, "0 or 1"),
        F("alpha", 0, "factor of A' B'"), F("beta", 1, "factor of C")), act="fused"),
    Op(3, "matmul", 0, "A, B -> Y",
       "numpy matmul: ranks >= 1, 1-D operands promoted and the added dim removed, batch dims broadcast",
       class_name="MatMul", act="fused"),
    Op(4, "add", 0, "A, B -> Y",
       "numpy broadcasting: Y's shape is the broadcast of A's and B's. Integers wrap (two's complement).",
       dtypes=_ARITH_DTYPES, act="fused", binary=True, int_minor=3),
    Op(5, "sub", 0, "A, B -> Y", "as add", dtypes=_ARITH_DTYPES, act="fused", binary=True, int_minor=3),
    Op(6, "mul", 0, "A, B -> Y", "as add", dtypes=_ARITH_DTYPES, act="fused", binary=True, int_minor=3),
    Op(7, "div", 0, "A, B -> Y",
       "as add. Integers: the quotient truncated toward zero (as C and onnxruntime); a zero divisor gives 0, "
       "and the most negative value divided by -1 wraps to itself", dtypes=_ARITH_DTYPES, act="fused",
       binary=True, int_minor=3),
    Op(8, "activation", 0, "X -> Y",
       "Y has X's shape; the node's activation field is the function (must not be 0)", act="function"),
    Op(9, "maxpool", 0, "X[N,C,H,W] -> Y[N,C,OH,OW]",
       "kernel, strides, pads and dilations as conv (int slot 0 unused); OH = floor or ceil((H + pads - "
       "dilation*(k-1) - 1) / stride) + 1, and with ceil_mode the last window must start inside the input "
       "or left padding (as ONNX); padding never wins a max, and a NaN in the window makes it NaN (float32)",
       (*_WINDOW, Param("ceil_mode", 11, "0 floor, 1 ceil")), class_name="MaxPool",
       dtypes="float32; or (minor 2) X and Y int8 or uint8 with the same quantization"),
    Op(10, "avgpool", 0, "X[N,C,H,W] -> Y[N,C,OH,OW]", "as maxpool (dilations 1)",
       (*_WINDOW, Param("ceil_mode", 11, "0 floor, 1 ceil"),
        Param("count_include_pad", 12, "1: padding counts in the divisor")), class_name="AvgPool"),
    Op(11, "globalavgpool", 0, "X[N,C,...] -> Y[N,C,1,...]", "mean over every dim after the second",
       class_name="GlobalAvgPool"),
    Op(12, "copy", 0, "X -> Y",
       "same element count and dtype; bytes copied unchanged (Reshape, Flatten, Identity)", any_dtype=True),
    Op(13, "transpose", 0, "X -> Y", "Y.dims[i] = X.dims[perm[i]]; Y's dtype is X's",
       (Param("perm", 0, "a permutation of 0..ndim-1; entries past ndim 0", count=8),), any_dtype=True),
    Op(14, "concat", 0, "X0..Xn-1 (n >= 1) -> Y",
       "all inputs equal Y's shape but along axis, where sizes sum to Y's; the same dtype for every input "
       "and Y", (Param("axis", 0, "0 .. ndim-1"),), any_dtype=True),
    Op(15, "softmax", 0, "X -> Y", "softmax of X",
       (Param("axis", 0, "0 .. ndim-1"),
        Param("coerce_2d", 1, "0: over that one axis (opset >= 13), 1: over all dims from axis on "
                              "(opset < 13)"))),
    Op(16, "convtranspose", 1, "X[N,C,H,W], W[C,M/g,kh,kw], B[M] optional -> Y[N,M,OH,OW]",
       "C and M divisible by g; OH = stride_h*(H-1) + output_pad_h + dilation_h*(kh-1) + 1 - pad_top - "
       "pad_bottom >= 1, likewise OW. Y[n,m,oh,ow] = B[m] + the sum of X[n,c,ih,iw] * W[c, m - g_m*M/g, "
       "ki, kj] over the input channels c of m's group g_m and every (ih, iw, ki, kj) with oh = "
       "ih*stride_h - pad_top + ki*dilation_h and ow = iw*stride_w - pad_left + kj*dilation_w (outputs no "
       "tap reaches, as output padding can add, are B[m]). W and B must be constants.",
       (*_CONV, Param("output_pad_h", 11, ">= 0, less than stride_h or dilation_h"),
        Param("output_pad_w", 12, ">= 0, less than stride_w or dilation_w")), class_name="ConvTranspose",
       act="fused"),
    Op(17, "resize", 1, "X[N,C,H,W] -> Y[N,C,OH,OW]",
       "N and C are not resized. Per axis (in, out, scale s): a scale of exactly 1 maps output o to input "
       "o (then out = in); otherwise output o maps to ONNX's coordinate x(o) evaluated in float32 as "
       "onnxruntime does (half_pixel (o+0.5)/s-0.5, asymmetric o/s, align_corners o*(in-1)/(out-1) or 0 "
       "if out = 1, pytorch_half_pixel (o+0.5)/s-0.5 or 0 if out = 1, tf_half_pixel_for_nearest "
       "(o+0.5)/s, half_pixel_symmetric (in/2)*(1-out/(s*in)) + (o+0.5)/s - 0.5). Nearest reads input "
       "round(x) clamped to [0, in-1], where a coordinate within 1e-6 of a half is a tie for the "
       "round_prefer modes. Linear clamps x to [0, in-1] and weighs inputs floor(x) and min(floor(x)+1, "
       "in-1) by 1-frac(x) and frac(x).",
       (Param("mode", 0, "linear: bilinear over H and W", enum="ResizeMode"),
        Param("coord_transform", 1, "the coordinate transformation", enum="ResizeCoord"),
        Param("nearest_rounding", 2, "nearest mode only (else 0)", enum="NearestRounding"),
        F("scale_h", 0, "> 0; the scale of ONNX's coordinate formulas (OH/H when the model gives sizes)"),
        F("scale_w", 1, "> 0; likewise for W"))),
    Op(18, "reduce", 1, "X -> Y",
       "Y has X's rank with every reduced dim 1 (keepdims=0 is a copy after it). Mean is the sum over the "
       "count; max and min are NaN if any reduced element is; log_sum_exp is max + log(sum(exp(x - max))) "
       "(no overflow; -inf if every element is -inf). The node's activation applies to Y.",
       (Param("function", 0, "what is computed", enum="ReduceFn"),
        Param("axes_mask", 1, "bit i: axis i is reduced; not 0, no bit at or past ndim")), act="fused"),
    Op(19, "slice", 1, "X -> Y",
       "Y[i0, i1, ...] = X[start0 + i0*step0, start1 + i1*step1, ...] for Y's dims, every index inside X "
       "(checked at load); entries past ndim are 0. Y's dtype is X's.",
       (Param("starts", 0, "first index per axis", count=8),
        Param("steps", 8, "step per axis (not 0, within +-X.dims[axis]; negative walks back)", count=8)),
       any_dtype=True),
    Op(20, "gather", 1, "X, I -> Y",
       "Y's shape is X.dims[:axis] + I.dims + X.dims[axis+1:] (a scalar I removes the axis); Y's dtype is "
       "X's. Minor 1: I is a constant int64 tensor of indices 0 <= i < X.dims[axis]. Minor 3: I may be "
       "computed at run time (a graph input, say) and int32 or int64; an index i < 0 counts from the end "
       "(i + X.dims[axis]); constant indices are checked at load, and one still outside 0 .. X.dims[axis]-1 "
       "at run time fails the job (ACCEL_ERR_INVALID_ARGUMENT naming the node, the index, its position and "
       "the range), as onnxruntime fails the run.",
       (Param("axis", 0, "0 .. ndim-1"),), any_dtype=True),
    Op(21, "pow", 1, "A, B -> Y", "as add: A ^ B elementwise, as C's powf", act="fused", binary=True),
    Op(22, "min", 1, "A, B -> Y", "as add: the smaller of A and B (NaN if either is)", dtypes=_ARITH_DTYPES,
       act="fused", binary=True, int_minor=3),
    Op(23, "max", 1, "A, B -> Y", "as add: the larger of A and B (NaN if either is)", dtypes=_ARITH_DTYPES,
       act="fused", binary=True, int_minor=3),
    Op(24, "layernorm", 1, "X, S, B optional -> Y, Mean, InvStdDev (those the outputs mask names, in order)",
       "Y = (X - mean) / sqrt(var + epsilon) * S + B, mean and (biased) var over the dims from axis on; S "
       "and B are shaped X.dims[axis:]. The node's activation applies to Y. Minor 6, arithmetic: centered (0, "
       "what older files mean) takes the mean, then the variance about it, Y = (X - mean) * (1 / sqrt(var + "
       "epsilon)) * S + B; onnxruntime (1) rounds as onnxruntime's x86-64 CPU kernel: a row of 8 or more the "
       "mean from a double sum in 4 lanes, the variance a float sum in 8 lanes of fma(d, d, acc) then the tail, "
       "Y = fma((X - mean) * inv_std_dev, S, B); a shorter row Welford's update in float, Y = (X - mean) / "
       "std_dev * S + B (math/layernorm_ort.cc). Minor 6, outputs: 0 (older files) Y alone, else a mask of the "
       "node's outputs in order, bit 0 (Y) always set: Mean and InvStdDev, one float per row, shaped "
       "X.dims[:axis] followed by 1s, with arithmetic onnxruntime only.",
       (Param("axis", 0, "0 .. ndim-1"), F("epsilon", 0, "> 0"),
        Param("arithmetic", 1, "how the statistics and Y round (the rule above)", enum="LayerNormArithmetic", minor=6),
        Param("outputs", 2, "0 Y alone; else bit 0 Y, bit 1 Mean, bit 2 InvStdDev", minor=6)),
       class_name="LayerNorm", act="fused"),
    Op(25, "expand", 1, "X -> Y",
       "Y is X broadcast (numpy rules: X right-aligned to Y's rank, each of its dims 1 or Y's) to Y's "
       "shape. Y's dtype is X's.", any_dtype=True),
    Op(26, "cast", 1, "X -> Y",
       "X converted to Y's dtype (same shape), as ONNX Cast: float to integer truncates toward zero (ONNX "
       "leaves NaN and out-of-range values unspecified: here NaN gives 0 and the others saturate to the "
       "integer type's min or max), integer to integer wraps (two's complement), to bool is x != 0 (NaN "
       "is true), bool to number is 0 or 1, to float16 rounds to nearest even (subnormals, infinities and "
       "NaN kept; from 65520 on it is inf). The same dtype is a copy.", any_dtype=True),
    # Quantized ops (minor 2). A quantized tensor is int8 or uint8 (int32 for a bias) with a quantization
    # record (FORMAT.md, tensor record): real = (q - z) * s, per tensor or per axis. "requantized" below is
    # onnxruntime's rule: an int32 sum acc becomes clamp(nearbyint(max(min(float32(acc) * r, qmax - z_Y),
    # qmin - z_Y)) + z_Y) with float32 arithmetic, rounding half to even, [qmin, qmax] Y's dtype's range.
    Op(27, "quantize", 2, "X -> Y",
       "Y = saturate(nearbyint(X / s) + z) with Y's quantization (s, z per tensor, or per Y's quant_axis), "
       "a float32 division, rounding half to even", dtypes="X float32, Y int8 or uint8 of X's shape"),
    Op(28, "dequantize", 2, "X -> Y", "Y = float32(X - z) * s with X's quantization (per tensor or per axis)",
       dtypes="X int8, uint8 or int32, quantized; Y float32 of X's shape"),
    Op(29, "qconv", 2, "X[N,C,H,W], W[M,C/g,kh,kw], B[M] optional -> Y[N,M,OH,OW]",
       "geometry as conv. acc = B[m] + the sum over the window of (X - z_X) * (W - z_W[m]) in int32 (taps "
       "in the padding add 0), requantized with r[m] = float32(float32(s_X * s_W[m]) / s_Y). W and B must "
       "be constants.", _CONV, class_name="QConv",
       dtypes="X, Y int8 or uint8 and W int8 or uint8, quantized (W per tensor or per axis 0); B int32",
       act="device"),
    Op(30, "qmatmul", 2, "A, B -> Y",
       "as matmul, over (A - z_A) and (B - z_B) in int32, requantized with r[n] = float32(float32(s_A * "
       "s_B[n]) / s_Y); B per tensor or per axis of its last dim", class_name="QMatMul",
       dtypes="A, B, Y int8 or uint8, quantized (A per tensor)", act="device"),
    Op(31, "qgemm", 2, "A, B, C optional -> Y[M,N]",
       "as gemm with beta 1: acc = C + A' B' over (A - z_A) and (B - z_B[n]) in int32 (C int32, broadcast to "
       "[M,N]); a quantized Y is acc requantized with r[n] = float32(float32(float32(alpha * s_A) * s_B[n]) "
       "/ s_Y); a float32 Y is float32(acc) * float32(alpha * s_A * s_B[n]). B and C must be constants.",
       (Param("trans_a", 0, "0 or 1"), Param("trans_b", 1, "0 or 1"), F("alpha", 0, "factor of A' B'")),
       class_name="QGemm",
       dtypes="A int8 or uint8 per tensor, B int8 or uint8 per tensor or per output column, C int32, Y "
              "int8 or uint8 (quantized) or float32", act="device"),
    Op(32, "qadd", 2, "A, B -> Y",
       "broadcast as add; Y = saturate(nearbyint(fma(A, rA, fma(B, rB, F)))) in float32 with rA = s_A / s_Y, "
       "rB = s_B / s_Y and F = z_Y - fma(rA, z_A, rB * z_B), as onnxruntime's QLinearAdd (so A and B do not "
       "commute)", class_name="QAdd", dtypes="A, B, Y one of int8 or uint8, quantized per tensor", act="device"),
    Op(33, "qmul", 2, "A, B -> Y",
       "broadcast as add; Y = saturate(nearbyint(float32((A - z_A) * (B - z_B)) * r + z_Y)) in float32 with r = "
       "float32(s_A * s_B) / s_Y, as onnxruntime's QLinearMul", class_name="QMul",
       dtypes="A, B, Y one of int8 or uint8, quantized per tensor", act="device"),
    Op(34, "qactivation", 2, "X -> Y",
       "Y = quantize(f(dequantize(X))) elementwise as a 256-entry table made at load, f the node's activation "
       "(none: a requantization) computed as onnxruntime's float kernel does (sigmoid: its rational "
       "approximation, MlasComputeLogistic)", class_name="QActivation",
       dtypes="X, Y int8 or uint8, quantized per tensor, of one shape", act="fused"),
    Op(35, "qavgpool", 2, "X[N,C,H,W] -> Y[N,C,OH,OW]",
       "window as avgpool; Y = saturate(nearbyint(m / s_Y + z_Y)) with m the float32 sum, row by row over the "
       "window's elements inside X, of s_X * (X - z_X), divided by the count (kernel_h * kernel_w with "
       "count_include_pad, else the elements inside X), as onnxruntime's QLinearAveragePool",
       (*_WINDOW, Param("ceil_mode", 11, "0 floor, 1 ceil"),
        Param("count_include_pad", 12, "1: padding counts in the divisor")), class_name="QAvgPool",
       dtypes="X, Y one of int8 or uint8, quantized per tensor"),
    Op(36, "qglobalavgpool", 2, "X[N,C,...] -> Y[N,C,1,...]",
       "the int32 sum over every dim after the second of X, minus z_X times the count, requantized with r = "
       "float32(s_X / float32(s_Y * count)), as onnxruntime's QLinearGlobalAveragePool",
       class_name="QGlobalAvgPool", dtypes="X, Y one of int8 or uint8, quantized per tensor"),
    Op(37, "qsoftmax", 2, "X -> Y",
       "onnxruntime's QLinearSoftmax over the axis (or, coerce_2d, every dim from axis on): t = T[max - X] per "
       "element from a 256-entry float32 table T[d] = exp((b - d) * s_X) made at load in double precision (b = "
       "max(0, logf(FLT_MAX / n) - 5) / s_X, n the count softmax runs over), s = the float32 sum of t in order, "
       "Y = saturate(nearbyint(t * floor(1 / s_Y) / s) + z_Y) with that product and quotient in double; z_X "
       "is not used",
       (Param("axis", 0, "0 .. ndim-1"),
        Param("coerce_2d", 1, "0: over that one axis (opset >= 13), 1: over all dims from axis on")),
       class_name="QSoftmax", dtypes="X, Y one of int8 or uint8, quantized per tensor, of one shape"),
    Op(38, "dynquant", 2, "X -> Y, S, Z",
       "onnxruntime's DynamicQuantizeLinear: lo = min(min(X), 0), hi = max(max(X), 0), S = hi == lo ? 1 : (hi - "
       "lo) / 255, Z = nearbyint(clamp(0 - lo / S, 0, 255)) (float32), Y = saturate(nearbyint(X / S) + Z)",
       class_name="DynQuant", dtypes="X float32; Y uint8 of X's shape; S float32 and Z uint8 of one element"),
    Op(39, "matmulinteger", 2, "A, B, A_zero optional, B_zero optional -> Y",
       "numpy matmul of (A - A_zero) and (B - B_zero) in int32 (wrapping as onnxruntime's does); A_zero one "
       "value (it may be computed at run time), B_zero one value or one per column of B (a constant)",
       class_name="MatMulInteger",
       dtypes="A, B, A_zero, B_zero int8 or uint8 (each zero point A's or B's dtype); Y int32"),
    Op(40, "convinteger", 2, "X[N,C,H,W], W[M,C/g,kh,kw], X_zero optional, W_zero optional -> Y[N,M,OH,OW]",
       "geometry as conv; Y = the sum over the window of (X - X_zero) * (W - W_zero[m]) in int32, taps in the "
       "padding adding 0; X_zero one value (it may be computed at run time), W_zero one value or one per output "
       "channel; W and W_zero must be constants", _CONV, class_name="ConvInteger",
       dtypes="X, W, X_zero, W_zero int8 or uint8 (each zero point its tensor's dtype); Y int32"),
    # Comparison, logic and selection (minor 3): bool tensors are one byte per element, 0 or 1.
    Op(41, "compare", 3, "A, B -> Y",
       "broadcast as add; Y = A op B, 1 or 0, op the function. Floats compare as IEEE: NaN is neither equal "
       "to, less nor greater than anything (itself included), -0 equals +0",
       (Param("function", 0, "the comparison (A on the left)", enum="CompareFn"),),
       dtypes="A and B one dtype (any but float16); Y bool"),
    Op(42, "logic", 3, "A, B optional -> Y",
       "and, or, xor: broadcast as add, 1 or 0; not: one input, Y = 1 - A of A's shape. Inputs must hold 0 or 1 "
       "only (as a bool tensor does); any nonzero byte counts as 1",
       (Param("function", 0, "the boolean function (not takes one input, the others two)", enum="LogicFn"),),
       dtypes="A, B and Y bool"),
    Op(43, "where", 3, "C, X, Y -> Z",
       "numpy broadcasting over all three: Z's shape is the broadcast of C's, X's and Y's; Z = C ? X : Y "
       "elementwise (any nonzero byte of C is true), bytes copied unchanged",
       dtypes="C bool; X, Y and Z one dtype (any)"),
    # Index ops (minor 3): integer outputs and run-time indices, for models fed token or byte ids.
    Op(44, "argreduce", 3, "X -> Y",
       "Y[..] = the index along axis of the largest (select_min 0) or smallest (select_min 1) element, the "
       "first such (select_last 0) or last (select_last 1); NaN counts as larger and smaller than any "
       "number, so a line with NaN gives its first (or last) NaN, as numpy (onnxruntime skips NaN unless "
       "it comes first). Y has X's dims with axis' set to 1 or removed (keepdims 0).",
       (Param("axis", 0, "0 .. ndim-1"), Param("select_min", 1, "0 argmax, 1 argmin"),
        Param("select_last", 2, "0: first index of the extreme, 1: last")),
       class_name="ArgReduce", dtypes="X float32, int8, uint8, int16, uint16, int32, uint32, int64 or uint64; "
                                      "Y int64"),
    Op(45, "topk", 3, "X -> V, I",
       "the k largest (largest 1) or smallest (largest 0) elements along axis, in that order (also for "
       "sorted 0, where ONNX leaves the order open), equal elements by lower index first, NaN larger than "
       "any number (as onnxruntime); V and I have X's dims with axis' set to k",
       (Param("axis", 0, "0 .. ndim-1"), Param("k", 1, "1 .. X.dims[axis]"),
        Param("largest", 2, "1 largest, 0 smallest"), Param("sorted", 3, "0 or 1 (the order is the same)")),
       class_name="TopK", dtypes="X and V float32, int8, uint8, int16, uint16, int32, uint32, int64 or uint64 (the "
                                 "same); I int64"),
    Op(46, "cumsum", 3, "X -> Y",
       "Y[.., j, ..] = the sum of X[.., i, ..] along axis over i <= j (i < j with exclusive; i >= j, i > j "
       "with reverse), added in order from the start (the end with reverse) in X's dtype: float32 rounds "
       "each step, integers wrap (two's complement), as onnxruntime",
       (Param("axis", 0, "0 .. ndim-1"), Param("exclusive", 1, "0 or 1"), Param("reverse", 2, "0 or 1")),
       class_name="CumSum", dtypes="X and Y float32, int32 or int64 (the same), of one shape"),
    Op(47, "onehot", 3, "I, V -> Y",
       "Y's shape is I's with depth inserted at axis; Y[.., d, ..] = V[1] where d is the index at that "
       "position (float indices truncated toward zero, then i < 0 counting from the end: i + depth), else "
       "V[0]; an index outside -depth .. depth-1 gives a line of V[0]",
       (Param("axis", 0, "0 .. Y's ndim-1"), Param("depth", 1, ">= 1")), class_name="OneHot",
       dtypes="I int32, int64 or float32; V two elements (off, on) of Y's dtype, any"),
    Op(48, "rnn", 3,
       "X, W[D,G*H,I], R[D,G*H,H], B[D,2*G*H] optional, L[N] optional, H0 optional, C0 optional, P[D,3*H] "
       "optional, A[D,3,2] optional, WS optional, RS optional -> Y, Y_h, Y_c (those the outputs mask names, in order)",
       "ONNX RNN (G = 1), GRU (G = 3, gates z, r, h) or LSTM (G = 4, gates i, o, f, c; peepholes P i, o, f) over D "
       "directions (2 if bidirectional; direction 1 runs backwards), H hidden, I input, S steps, N batch. X is "
       "[S,N,I] (layout 0) or [N,S,I] (layout 1); Y [S,D,N,H] or [N,S,D,H]; H0, C0, Y_h, Y_c [D,N,H] or [N,D,H]. "
       "Per step a gate's input is X_t W^T + H_{t-1} R^T + Wb + Rb (GRU's h gate: X_t Wh^T + (r * H_{t-1}) Rh^T "
       "+ Wbh + Rbh, or with linear_before_reset X_t Wh^T + Wbh + r * (H_{t-1} Rh^T + Rbh)), clipped to [-clip, "
       "clip] when clip > 0, then activated: f, g, h the activation codes (A[d,k] their alpha and beta). RNN: "
       "H_t = f(.); GRU: H_t = (1 - z) * g(h) + z * H_{t-1}; LSTM: C_t = f * C_{t-1} + i * g(c) (f = 1 - i with "
       "input_forget), H_t = o * h(C_t) (C_t unclipped, as onnxruntime). A batch row n runs L[n] steps (all S "
       "without L; an L[n] outside 0..S fails the job, ACCEL_ERR_INVALID_ARGUMENT, as onnxruntime fails the run): Y is 0 at steps past it, Y_h and Y_c hold its last state (0 when L[n] = 0, "
       "as onnxruntime). W, R, B, P and A must be constants. Quantized weights (LSTM only; onnxruntime's "
       "DynamicQuantizeLSTM): W[D,I,G*H] and R[D,H,G*H] int8 or uint8 with float32 scales WS[D,G*H] and RS[D,G*H] "
       "(inputs 9 and 10) and one zero point per direction; then each product A B (A the steps' X, or H_{t-1} "
       "of the batch, 0 for rows already past their length when Y is an output) quantizes A as dynquant does and "
       "is float32(int32 sum of (A_q - z_A) (B - z_B)) * float32(s_A * s_B[col]).",
       (Param("cell", 0, "the recurrence", enum="RnnCell"),
        Param("direction", 1, "the directions run", enum="RnnDirection"),
        Param("layout", 2, "0: sequence first, 1: batch first"),
        Param("input_forget", 3, "LSTM: 1 couples the forget gate to the input gate (f = 1 - i)"),
        Param("linear_before_reset", 4, "GRU: 1 applies the reset gate after the recurrent product"),
        Param("outputs", 5, "bit 0 Y, bit 1 Y_h, bit 2 Y_c (LSTM): the node's outputs, in order"),
        Param("acts", 6, "activation codes f, g, h of direction 0, then 1 (unused ones 0)", count=6),
        Param("w_zero", 12, "quantized W: its zero point per direction (else 0)", count=2),
        Param("r_zero", 14, "quantized R: its zero point per direction (else 0)", count=2),
        F("clip", 0, ">= 0; 0: no clip")), class_name="Rnn",
       dtypes="float32; L int32; W and R may be int8 or uint8 (quantized weights)"),
    Op(49, "pad", 3, "X, V optional -> Y",
       "Y has X's rank and dtype; Y.dims[i] = begin[i] + X.dims[i] + end[i] with end[i] >= 0 (so Y's dims give "
       "it; negative pads are a slice before this op). Output index o reads X at o - begin[i] on each axis i "
       "where that is inside X; elsewhere constant mode gives V (one element of X's dtype, 0 when absent), "
       "edge the nearest element of the axis, reflect the mirror image that does not repeat the edge (period "
       "2*(d-1) for an axis of d elements; d = 1 as edge, as numpy), wrap the index modulo d",
       (Param("begin", 0, "elements added before each axis (>= 0); entries past ndim 0", count=8),
        Param("mode", 8, "how the added elements are filled", enum="PadMode")), any_dtype=True),
    Op(50, "groupnorm", 3, "X[N,C,...], S[C], B[C] -> Y",
       "Y has X's shape. The C channels form `groups` groups of C/groups consecutive channels; each group of "
       "each n (its channels and all their elements after dim 1) is normalized by its mean and biased "
       "variance (float32, two passes: the mean, then the squared deviations): Y = (X - mean) * (1 / sqrt(var "
       "+ epsilon) * S[c]) + B[c]. A NaN anywhere in a group makes that group NaN. The node's activation "
       "applies to Y.",
       (Param("groups", 0, ">= 1, divides C"), F("epsilon", 0, "> 0")), class_name="GroupNorm", act="fused"),
    Op(51, "logsoftmax", 5, "X -> Y",
       "log of softmax, computed as (X - max) - log(sum(exp(X - max))) over the line: no overflow, and exact "
       "near the line's max where log(softmax) would round to 0",
       (Param("axis", 0, "0 .. ndim-1"),
        Param("coerce_2d", 1, "0: over that one axis (opset >= 13), 1: over all dims from axis on "
                              "(opset < 13)")), class_name="LogSoftmax"),
    # Integer remainders and bit operations (minor 5), on the broadcast kernel as add .. max.
    Op(52, "mod", 5, "A, B -> Y",
       "as add: the remainder of floored division, with B's sign (Python's %, ONNX Mod with fmod 0). float32: "
       "r = fmodf(A, B), plus B when r is not 0 and its sign is not B's; a zero result takes B's sign (so B = "
       "+-inf gives A, or B when the signs differ; NaN for B = 0, an infinite A or a NaN, as ONNX). Integers: B "
       "= 0 gives 0 (C leaves it undefined)", dtypes=_ARITH_DTYPES, act="fused", binary=True, int_minor=5),
    Op(53, "fmod", 5, "A, B -> Y",
       "as add: the remainder of truncated division, with A's sign (C's fmodf and %, ONNX Mod with fmod 1): "
       "float32 as fmodf (NaN for B = 0, an infinite A or a NaN), integers with B = 0 giving 0",
       dtypes=_ARITH_DTYPES, class_name="FMod", act="fused", binary=True, int_minor=5),
    Op(54, "bitand", 5, "A, B -> Y", "as add: bitwise and", dtypes=_INT_ONLY_DTYPES, class_name="BitAnd",
       binary=True, int_minor=5),
    Op(55, "bitor", 5, "A, B -> Y", "as add: bitwise or", dtypes=_INT_ONLY_DTYPES, class_name="BitOr", binary=True,
       int_minor=5),
    Op(56, "bitxor", 5, "A, B -> Y", "as add: bitwise exclusive or", dtypes=_INT_ONLY_DTYPES,
       class_name="BitXor", binary=True, int_minor=5),
    Op(57, "shl", 5, "A, B -> Y",
       "as add: A shifted left by B bits, bits past the top (the sign bit included) dropped; B < 0 or B >= "
       "the width gives 0 (as ONNX; C leaves it undefined)", dtypes=_INT_ONLY_DTYPES, binary=True, int_minor=5),
    Op(58, "shr", 5, "A, B -> Y",
       "as add: A shifted right by B bits, arithmetic (sign-extending) for signed dtypes; B < 0 or B >= the "
       "width gives the sign extension alone: -1 for a negative A, else 0 (as ONNX; C leaves it undefined)",
       dtypes=_INT_ONLY_DTYPES, binary=True, int_minor=5),
    Op(59, "cumprod", 5, "X -> Y",
       "as cumsum, with products (an exclusive line starting at 1): float32 rounds each step, integers wrap",
       (Param("axis", 0, "0 .. ndim-1"), Param("exclusive", 1, "0 or 1"), Param("reverse", 2, "0 or 1")),
       class_name="CumProd", dtypes="X and Y float32, int32 or int64 (the same), of one shape"),
    Op(60, "gatherelements", 5, "X, I -> Y",
       "Y has I's shape and X's dtype; Y[j0, .., jr] = X[j0, .., I[j0, .., jr], .., jr] with the index at axis. I "
       "has X's rank and each of its dims but axis' at most X's. Indices as gather's: int32 or int64, i < 0 "
       "counting from the end, constant ones checked at load, and one outside -X.dims[axis] .. X.dims[axis]-1 at "
       "run time fails the job (ACCEL_ERR_INVALID_ARGUMENT naming the node, the index, its position and the "
       "range), as onnxruntime fails the run.", (Param("axis", 0, "0 .. ndim-1"),), any_dtype=True,
       class_name="GatherElements"),
    # Gather and scatter by index tuples (minor 6). Run-time indices as gather's: each one is bounded as it is
    # read, i < 0 counts from the end, and one outside -dim..dim-1 fails the job (ACCEL_ERR_INVALID_ARGUMENT
    # naming the node, the index, its position and the range), as onnxruntime fails the run.
    Op(71, "gathernd", 6, "X, I -> Y",
       "ONNX GatherND: I's last dim k (1 .. X's rank - batch_dims) indexes X's dims batch_dims .. batch_dims+k-1 "
       "of the batch (the first batch_dims dims of I and X, equal); Y's shape is I.dims[:-1] + "
       "X.dims[batch_dims+k:], blocks of X copied. I int64 (or int32).",
       (Param("batch_dims", 0, "0 .. min(X's, I's rank) - 1"),), any_dtype=True, class_name="GatherND"),
    Op(72, "scatternd", 6, "X, I, U -> Y",
       "ONNX ScatterND: Y is X with, in the order of I's tuples (I's last dim k indexes X's first k dims), each "
       "block U[j] of X.dims[k:] written over (reduction none: the last of duplicates wins, as onnxruntime) or "
       "combined with Y's element (add, mul wrapping for integers; max, min as onnxruntime's std::max(u, y) and "
       "std::min(u, y): the update unless Y's element is strictly beyond it, so a NaN update is taken and a NaN "
       "in Y replaced). U's shape is I.dims[:-1] + X.dims[k:]. I int64 (or int32).",
       (Param("reduction", 0, "how an update meets its element", enum="ScatterReduction"),),
       any_dtype=True, class_name="ScatterND"),
    Op(73, "scatterelements", 6, "X, I, U -> Y",
       "ONNX ScatterElements (and Scatter): Y is X with, for each position j of I (in C order), Y[j with its "
       "axis coordinate replaced by I[j]] set to (or, as scatternd, combined with) U[j]. I and U have one "
       "shape, of X's rank, each dim but axis' at most X's. I int64 (or int32).",
       (Param("axis", 0, "0 .. ndim-1"), Param("reduction", 1, "as scatternd's", enum="ScatterReduction"),
        Param("nonnegative", 2, "1: indices range over 0 .. dim-1 only (MaxUnpool's), 0: a negative one counts "
                                "from the end")),
       any_dtype=True, class_name="ScatterElements"),
    Op(74, "tensorscatter", 6, "X, U, W optional -> Y",
       "ONNX TensorScatter (a key/value cache update): Y is X with, for each batch b (dim 0) and step s of U's "
       "axis, U's slice s written at X's axis position W[b] + s (W absent: 0); circular takes that position "
       "modulo X.dims[axis]. U has X's shape but at axis (at most X's). A W[b] < 0, or (linear) > X.dims[axis] - "
       "U.dims[axis], fails the job (ACCEL_ERR_INVALID_ARGUMENT naming it), as onnxruntime fails the run. W int64.",
       (Param("axis", 0, "1 .. ndim-1"), Param("circular", 1, "0 linear, 1 circular")), any_dtype=True,
       class_name="TensorScatter"),
    Op(75, "powcast", 6, "A, B -> Y",
       "ONNX Pow with an integer base or exponent, as onnxruntime computes it: numpy broadcasting, Y = A ^ B "
       "computed in double (C's pow of the operands converted to double), then converted to Y's dtype: float32 "
       "rounds to nearest; int32 and int64 truncate toward zero, and a NaN or a value outside the type's range "
       "gives its most negative value (x86's conversion, which onnxruntime's static_cast compiles to)",
       dtypes="A and Y one of float32, int32 or int64; B float32, int32 or int64; not both float32 (that is "
              "pow)", class_name="PowCast"),
    Op(76, "reversesequence", 6, "X, L -> Y",
       "ONNX ReverseSequence: Y has X's shape; for each batch b (along batch_axis) the first L[b] elements along "
       "time_axis are reversed, the rest copied. L int64 [X.dims[batch_axis]]; an L[b] outside 0 .. "
       "X.dims[time_axis] fails the job (ACCEL_ERR_INVALID_ARGUMENT naming it), as onnxruntime fails the run.",
       (Param("batch_axis", 0, "0 or 1"), Param("time_axis", 1, "1 or 0 (not batch_axis)")), any_dtype=True,
       class_name="ReverseSequence"),
    Op(77, "col2im", 6, "X[N,C*K,L] -> Y[N,C,...]",
       "ONNX Col2Im over the s = Y's rank - 2 spatial dims (1 to 3) of Y, K the product of the block dims: "
       "Y = 0, then for each channel c, block offset k (in C order) and block position l (in C order over the "
       "grid of (Y.dims[2+d] + pad_begin + pad_end - dilation*(block-1) - 1) / stride + 1 positions per dim, L "
       "in all), Y[n, c, p] += X[n, c*K + k, l] at p_d = l_d*stride_d - pad_begin_d + k_d*dilation_d where that "
       "is inside Y (onnxruntime's order of the sums)",
       (Param("block", 0, "the block's dims (>= 1); entries past s 0", count=3),
        Param("stride", 3, "(>= 1)", count=3), Param("dilation", 6, "(>= 1)", count=3),
        Param("pad_begin", 9, "(>= 0)", count=3), Param("pad_end", 12, "(>= 0)", count=3)), class_name="Col2Im"),
    Op(81, "resample", 6, "X, I, W -> Y",
       "a 1-D filter along axis: Y has X's shape but Y.dims[axis] = I.dims[0]; Y[.., o, ..] = the sum over k "
       "= 0 .. K-1, in that order, of W[o, k] * X[.., I[o, k], ..] (float32 from 0, each product and sum rounded, "
       "no fused multiply-add); a row's taps end at its first index -1 (padding, read nowhere). I (int32) and W "
       "(float32) are constants of shape [OA, K], every index in -1 .. X.dims[axis]-1 (checked at load). Resize's cubic, antialiased and tf_crop_and_resize forms are one "
       "of these per resized axis, with the taps and weights the compiler computes as onnxruntime does.",
       (Param("axis", 0, "0 .. ndim-1"),),
       dtypes="X, W and Y float32; I int32; I and W constants"),
    Op(82, "gridsample", 6, "X[N,C,...], G[N,...,r] -> Y[N,C,...]",
       "ONNX GridSample as onnxruntime computes it, r = 2 (X 4-D, G [N,OH,OW,2] of (x, y)) or 3 (X 5-D, G "
       "[N,OD,OH,OW,3] of (x, y, z)); Y[n,c,o..] samples X[n,c] at G[n,o..] in [-1, 1] (float32 throughout): "
       "align_corners maps -1 and 1 to the first and last element's centre (x = (g+1)/2*(W-1)), else to the "
       "outer edges (x = ((g+1)*W-1)/2). Nearest reads the element nearbyint(x) (halves to even); linear "
       "weighs the 2^r neighbours floor(x), floor(x)+1 by distance (dy2*(dx2*p11 + dx1*p12) + dy1*(...)); cubic "
       "(r = 2 only) Keys' a = -0.75 over the 4x4 neighbours, rows first. A neighbour outside X reads 0 (zeros), "
       "the nearest element (border), or the index reflected about the edges as a float (reflection: about -0.5 "
       "and W-0.5, or 0 and W-1 with align_corners), then truncated. A coordinate that is not finite gives NaN.",
       (Param("mode", 0, "0 nearest, 1 linear, 2 cubic"), Param("padding", 1, "0 zeros, 1 border, 2 reflection"),
        Param("align_corners", 2, "0 or 1")),
       class_name="GridSample"),
    Op(83, "pool3d", 6, "X[N,C,D,H,W] -> Y[N,C,OD,OH,OW]",
       "max or average pooling over D, H and W with dilations (3-D pooling; 1-D and 2-D ones the compiler lifts "
       "to it with axes of one element): per axis a, output o's window reads input o*stride - pad_begin + "
       "k*dilation for k < kernel, the indices inside the input only (padding never wins a max and adds "
       "nothing to a sum); (OD-1)*stride_d - pad_begin_d < D and likewise (every window starts inside the "
       "input or its leading padding). Max: the largest (NaN if any read is NaN; the lowest float if the "
       "window reads nothing). Average: the float sum in C order over the window divided by the count of "
       "elements read, or with pads counted by the product over axes of 1 + (end - start - 1) / dilation, "
       "end = min(start + kernel*dilation, in + pad_end) (onnxruntime's divisor); 0 if nothing is read.",
       (Param("mode", 0, "0 max, 1 average of the elements read, 2 average counting pads"),
        Param("kernel", 1, "window size per axis D, H, W (>= 1)", count=3),
        Param("strides", 4, "per axis (>= 1)", count=3),
        Param("dilations", 7, "per axis (>= 1)", count=3),
        Param("pad_begin", 10, "per axis (>= 0)", count=3),
        Param("pad_end", 13, "per axis (>= 0); average counting pads only", count=3)),
       class_name="Pool3d"),
    Op(84, "roialign", 6, "X[N,C,H,W], R[K,4], B[K] -> Y[K,C,OH,OW]",
       "ONNX RoiAlign as onnxruntime computes it (float32): region k, R[k] = (x1, y1, x2, y2) times "
       "spatial_scale (minus 0.5 with half_pixel), of image B[k] (int64), is cut into OH x OW bins, each "
       "sampled on a grid of sampling_ratio (or ceil(region / bins) when 0) points per axis at bilinear "
       "positions (a point past -1 or the size reads 0; one below 0 clamps to 0, one at the last element to "
       "it); average mode sums each point's four weighted neighbours, in order, over the count, max mode takes "
       "the largest weighted neighbour of any point. Without half_pixel the region is at least 1 x 1. An index "
       "B[k] outside 0 .. N-1 fails the job (ACCEL_ERR_INVALID_ARGUMENT naming the node, the index and its "
       "position; a constant one is refused at load); those regions' outputs are left unwritten.",
       (Param("mode", 0, "0 average, 1 max"), Param("half_pixel", 1, "1: half_pixel, 0: output_half_pixel"),
        Param("sampling_ratio", 2, ">= 0"), F("spatial_scale", 0, "finite")),
       class_name="RoiAlign", dtypes="X, R and Y float32; B int64"),
    Op(85, "maxpoolidx", 6, "X[N,C,D,H,W] -> Y[N,C,OD,OH,OW], I[N,C,OD,OH,OW]",
       "ONNX MaxPool with its Indices output, as onnxruntime's pooling loop computes it (1-D and 2-D pools lifted "
       "with leading axes of one element): windows as pool3d's; Y is, in C order over the window, its first "
       "element, replaced by each later one greater than it (a NaN first stays; a later NaN never wins; the "
       "lowest float if the window reads nothing), I its index in X flattened: with "
       "the window's position (d, h, w) over the pool's own `rank` trailing axes, plane p = n*C + c, "
       "p*D*H*W + (d*H + h)*W + w, or with storage_order 1 p*D*H*W + h' + w'*H' + d'*H'*W' over the pool's "
       "axes counted from the first (column-major); positions of -1 each where the window reads nothing.",
       (Param("rank", 0, "the pool's spatial rank: 1, 2 or 3"), Param("storage_order", 1, "0 or 1"),
        Param("kernel", 2, "window size per axis D, H, W (>= 1)", count=3),
        Param("strides", 5, "per axis (>= 1)", count=3),
        Param("dilations", 8, "per axis (>= 1)", count=3),
        Param("pad_begin", 11, "per axis (>= 0)", count=3)),
       class_name="MaxPoolIdx", dtypes="X and Y float32; I int64"),
    Op(91, "bitcast", 6, "X -> Y",
       "Y's bytes are X's, read as Y's dtype: the same shape and element size (bool is one byte), as ONNX BitCast",
       any_dtype=True, class_name="BitCast"),
    Op(92, "matmulintegerf", 6, "A, B, S, A_zero optional, B_zero optional, C optional -> Y",
       "matmulinteger's int32 product of A and a constant 2-D B, then Y = float32(acc) * S[col] + C[col] (a "
       "float32 multiply, then an add: no FMA), S and C one value or one per column of B; what "
       "MatMulIntegerToFloat and quantize_dynamic's MatMulInteger -> Cast -> Mul -> Add compute, in one pass",
       class_name="MatMulIntegerF",
       dtypes="A, B, A_zero, B_zero int8 or uint8 (each zero point A's or B's dtype); S, C and Y float32"),
)

# ---- fused activations ----------------------------------------------------------------------------

ACTIVATIONS = (
    Activation(0, "none", 0, "x"),
    Activation(1, "relu", 0, "max(x, 0) (NaN stays NaN)"),
    Activation(2, "clip", 0, "min(max(x, alpha), beta)"),
    Activation(3, "sigmoid", 0, "1 / (1 + exp(-x))"),
    Activation(4, "hardsigmoid", 0, "max(0, min(1, alpha * x + beta))", "HardSigmoid"),
    Activation(5, "hardswish", 0, "x * max(0, min(1, x / 6 + 1/2))", "HardSwish"),
    Activation(6, "leakyrelu", 0, "x >= 0 ? x : alpha * x", "LeakyRelu"),
    Activation(7, "tanh", 1, "tanh(x)"),
    Activation(8, "silu", 1, "x * sigmoid(x)"),
    Activation(9, "gelu", 1, "0.5 * x * (1 + erf(x / sqrt(2)))"),
    Activation(10, "elu", 1, "x >= 0 ? x : alpha * (exp(x) - 1)"),
    Activation(11, "softplus", 1, "log(1 + exp(x))"),
    Activation(12, "sqrt", 1, "sqrt(x)"),
    Activation(13, "exp", 1, "exp(x)"),
    Activation(14, "log", 1, "log(x)"),
    Activation(15, "neg", 1, "-x"),
    Activation(16, "abs", 1, "abs(x)"),
    Activation(17, "reciprocal", 1, "1 / x"),
    Activation(18, "erf", 1, "erf(x)"),
    Activation(19, "floor", 1, "floor(x)"),
    Activation(20, "ceil", 1, "ceil(x)"),
    Activation(21, "pow", 1, "x ^ alpha, as C's powf (1 for alpha = 0 whatever x; NaN for x < 0 with a "
                             "non-integer alpha)"),
    Activation(22, "round", 1, "x rounded to the nearest integer, halves to even"),
    Activation(23, "gelu_tanh", 1, "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))"),
    Activation(24, "selu", 1, "x > 0 ? beta * x : beta * alpha * (exp(x) - 1) (ONNX's alpha, and its gamma "
                              "as beta)"),
    Activation(25, "softsign", 1, "x / (1 + abs(x))"),
    Activation(26, "sign", 5, "x > 0 ? 1 : x < 0 ? -1 : x (0, -0 and NaN kept)"),
    Activation(27, "sin", 5, "sin(x)"),
    Activation(28, "cos", 5, "cos(x)"),
    Activation(29, "tan", 5, "tan(x)"),
    Activation(30, "asin", 5, "asin(x) (NaN outside [-1, 1])"),
    Activation(31, "acos", 5, "acos(x) (NaN outside [-1, 1])"),
    Activation(32, "atan", 5, "atan(x)"),
    Activation(33, "sinh", 5, "sinh(x)"),
    Activation(34, "cosh", 5, "cosh(x)"),
    Activation(35, "asinh", 5, "asinh(x)"),
    Activation(36, "acosh", 5, "acosh(x) (NaN below 1)"),
    Activation(37, "atanh", 5, "atanh(x) (NaN outside [-1, 1], -inf and inf at -1 and 1)"),
    Activation(38, "mish", 5, "x * tanh(log(1 + exp(x)))"),
    Activation(39, "celu", 5, "x > 0 ? x : alpha * (exp(x / alpha) - 1)"),
    Activation(40, "shrink", 5, "x < -alpha ? x + beta : x > alpha ? x - beta : 0 (ONNX's lambd as alpha, its bias "
                                "as beta; NaN gives 0, as ONNX's definition and onnxruntime)"),
    Activation(41, "thresholded_relu", 5, "x > alpha ? x : 0 (NaN gives 0, as ONNX's definition and onnxruntime)"),
    Activation(42, "swish", 5, "x * sigmoid(alpha * x)"),
)


def check(ops=OPS, activations=ACTIVATIONS, enums=ENUMS) -> None:
    """Raises ValueError if the schema contradicts itself (codes, names, slots)."""
    enums = {e.name for e in enums}
    for what, items in (("op", ops), ("activation", activations)):
        codes = [i.code for i in items]
        names = [i.name for i in items]
        if len(set(codes)) != len(codes) or len(set(names)) != len(names):
            raise ValueError(f"duplicate {what} code or name")
        if sorted(codes) != codes:
            raise ValueError(f"{what} codes are not in order")
    for op in ops:
        used: dict = {}
        for p in op.params:
            limit = INT_SLOTS if p.kind == "int" else FLOAT_SLOTS
            if p.kind not in ("int", "float") or p.count < 1 or p.slot < 0 or p.slot + p.count > limit:
                raise ValueError(f"op {op.name}: parameter {p.name} lies outside the {p.kind} slots")
            if p.enum is not None and p.enum not in enums:
                raise ValueError(f"op {op.name}: parameter {p.name} names an unknown enum {p.enum}")
            for s in range(p.slot, p.slot + p.count):
                other = used.setdefault((p.kind, s), p.name)
                if other != p.name:
                    raise ValueError(f"op {op.name}: {p.name} and {other} share {p.kind} slot {s}")
        if len({p.name for p in op.params}) != len(op.params):
            raise ValueError(f"op {op.name}: duplicate parameter name")
        if op.act not in ACT_RULES:
            raise ValueError(f"op {op.name}: activation rule {op.act!r} is not one of {', '.join(ACT_RULES)}")
        try:
            ar = op.arity
        except ValueError as e:
            raise ValueError(f"op {op.name}: {e}") from None
        if op.int_minor and not op.dtypes:
            raise ValueError(f"op {op.name}: computing on integers (int_minor) needs its dtypes stated")
        if op.binary and (ar.max_in, ar.max_out) != (2, 1):
            raise ValueError(f"op {op.name}: a binary op takes two inputs and gives one output")
