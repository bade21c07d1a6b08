"""The ops, one record each: which arguments are tensors and the rule that checks a call and plans its
ONNX node(s) and output shape. ``Ops`` (eager.py) gives each a torch.nn.functional signature and hands
its arguments here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Tuple

from . import rules_elementwise as ew
from . import rules_nn as nn
from . import rules_shape as sh
from .plan import Call, Plan


@dataclass(frozen=True)
class OpSpec:
    """One op.

    Attributes:
        rule: checks the call (shapes of its tensors, its other arguments) and returns its Plan.
        tensors: its tensor arguments (DeviceTensor, NumPy array or PendingTensor), in order.
        scalar: a tensor argument that may also be a Python number (a constant of the model).
        sequence: a tensor argument that is a sequence of tensors (named ``name[i]`` in messages).
    """

    rule: Callable[[Call], Plan]
    tensors: Tuple[str, ...] = ("input",)
    scalar: str = ""
    sequence: str = ""


_BINARY = ("input", "other")

OPS: Dict[str, OpSpec] = {
    "conv2d": OpSpec(nn.conv2d),
    "linear": OpSpec(nn.linear),
    "matmul": OpSpec(ew.matmul, tensors=("input", "other")),
    "add": OpSpec(ew.binary("Add"), _BINARY, scalar="other"),
    "sub": OpSpec(ew.binary("Sub"), _BINARY, scalar="other"),
    "mul": OpSpec(ew.binary("Mul"), _BINARY, scalar="other"),
    "div": OpSpec(ew.binary("Div"), _BINARY, scalar="other"),
    "relu": OpSpec(ew.unary("Relu")),
    "relu6": OpSpec(ew.relu6),
    "sigmoid": OpSpec(ew.unary("Sigmoid")),
    "tanh": OpSpec(ew.unary("Tanh")),
    "silu": OpSpec(ew.silu),
    "gelu": OpSpec(ew.gelu),
    "leaky_relu": OpSpec(ew.leaky_relu),
    "hardswish": OpSpec(ew.unary("HardSwish")),
    # torch: relu6(x + 3) / 6, which is ONNX's HardSigmoid with alpha 1/6 and beta 1/2.
    "hardsigmoid": OpSpec(ew.unary("HardSigmoid", alpha=1.0 / 6.0, beta=0.5)),
    "max_pool2d": OpSpec(nn.max_pool2d),
    "avg_pool2d": OpSpec(nn.avg_pool2d),
    "adaptive_avg_pool2d": OpSpec(nn.adaptive_avg_pool2d),
    "softmax": OpSpec(ew.softmax),
    "concat": OpSpec(sh.concat, tensors=("tensors",), sequence="tensors"),
    "reshape": OpSpec(sh.reshape),
    "permute": OpSpec(sh.permute),
    "flatten": OpSpec(sh.flatten),
    "interpolate": OpSpec(sh.interpolate),
    "layer_norm": OpSpec(nn.layer_norm),
}
