"""Rules of the elementwise ops (activations, arithmetic with broadcasting), matmul and softmax."""
from __future__ import annotations

from typing import Any, Callable

from ..errors import InvalidArgumentError, ShapeError
from ..runtime.messages import shown
from .args import Shape, as_float, axis, broadcast, ndim_error, sized
from .plan import Arg, Call, Plan, Prev, const, node, plan

Rule = Callable[[Call], Plan]


def unary(onnx_op: str, **attrs: Any) -> Rule:
    """An activation computed by one ONNX node of the same shape."""
    def rule(c: Call) -> Plan:
        return plan(c.shape(), node(onnx_op, Arg("input"), **attrs))
    return rule


def relu6(c: Call) -> Plan:
    return plan(c.shape(), node("Clip", Arg("input"), const(0.0), const(6.0)))


def silu(c: Call) -> Plan:
    # x * sigmoid(x): the compiler fuses the pair into one node.
    return plan(c.shape(), node("Sigmoid", Arg("input")), node("Mul", Arg("input"), Prev(0)))


def gelu(c: Call) -> Plan:
    approximate = c.get("approximate")
    if approximate not in ("none", "tanh"):
        raise InvalidArgumentError(f"{c.op}: approximate must be 'none' or 'tanh', not {shown(approximate)}")
    return plan(c.shape(), node("Gelu", Arg("input"), approximate=approximate))


def leaky_relu(c: Call) -> Plan:
    return plan(c.shape(), node("LeakyRelu", Arg("input"), alpha=as_float(c.op, "negative_slope",
                                                                              c.get("negative_slope"))))


def binary(onnx_op: str) -> Rule:
    """input (op) other with NumPy broadcasting; ``other`` may be a number (a constant)."""
    def rule(c: Call) -> Plan:
        a, b = c.shape("input"), c.shape("other")
        shape = sized(c.op, broadcast(c.op, ("input", "other"), (a, b)),
                      f"broadcasting input of shape {a} with other of shape {b}")
        return plan(shape, node(onnx_op, Arg("input"), Arg("other")))
    return rule


def matmul_shape(op: str, a: Shape, b: Shape) -> Shape:
    """numpy.matmul's (and torch.matmul's) result shape: 1-D operands promoted and the added dim
    removed, batch dims broadcast."""
    if not a or not b:
        raise ndim_error(op, "input" if not a else "other", "at least 1-D", a if not a else b)
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ShapeError(f"{op}: input of shape {a} and other of shape {b} cannot be multiplied (input's last "
                         f"dim {a2[-1]} != other's {'only' if len(b) == 1 else 'second-to-last'} dim {b2[-2]})")
    batch = broadcast(op, ("input batch dims", "other batch dims"), (a2[:-2], b2[:-2]))
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def matmul(c: Call) -> Plan:
    a, b = c.shape("input"), c.shape("other")
    shape = sized(c.op, matmul_shape(c.op, a, b), f"multiplying input of shape {a} by other of shape {b}")
    return plan(shape, node("MatMul", Arg("input"), Arg("other")))


def softmax(c: Call) -> Plan:
    x = c.shape()
    if not x:
        raise ndim_error(c.op, "input", "at least 1-D", x)
    return plan(x, node("Softmax", Arg("input"), axis=axis(c.op, "dim", c.get("dim"), len(x), x)))
