"""Matrix products: Gemm and MatMul."""

from __future__ import annotations

from ..errors import CompileError
from ..op_params import Gemm
from .context import broadcast_shape


def lower_gemm(ctx, node):
    """Gemm (every opset): 2-D float32 A and B with transA, transB, alpha and beta, and an optional C
    that broadcasts to (M, N). Integer Gemm is not supported.
    """
    a, b, c = ctx.input(node, 0), ctx.input(node, 1), ctx.input_opt(node, 2)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise CompileError(f"{node.label}: A {a.shape} and B {b.shape} must be 2-D")
    ta, tb = int(int(node.attr("transA", 0)) != 0), int(int(node.attr("transB", 0)) != 0)  # nonzero is true
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    if k != k2:
        raise CompileError(f"{node.label}: inner dims differ (A {a.shape} transA={ta}, "
                           f"B {b.shape} transB={tb})")
    inputs = [a.name, b.name]
    if c is not None:
        if broadcast_shape(node, c.shape, (m, n)) != (m, n):
            raise CompileError(f"{node.label}: C {c.shape} does not broadcast to {(m, n)}")
        inputs.append(c.name)
    y = ctx.define(ctx.output(node), a.dtype, (m, n))
    params = Gemm(trans_a=ta, trans_b=tb, alpha=float(node.attr("alpha", 1.0)), beta=float(node.attr("beta", 1.0)))
    ctx.emit("gemm", inputs, [y], node.name, params=params)


def matmul_shape(node, a, b) -> tuple:
    if not a or not b:
        raise CompileError(f"{node.label}: MatMul operands must have rank >= 1")
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise CompileError(f"{node.label}: inner dims differ ({tuple(a)} x {tuple(b)})")
    batch = broadcast_shape(node, a2[:-2], b2[:-2])
    out = list(batch) + [a2[-2], b2[-1]]
    if len(b) == 1:
        out.pop(-1)
    if len(a) == 1:
        out.pop(-2 if len(b) != 1 else -1)
    return tuple(out)


def lower_matmul(ctx, node):
    """MatMul (every opset): float32 operands of rank >= 1 with numpy matmul semantics (1-D operands
    promoted, batch dims broadcast). Integer MatMul is not supported.
    """
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    y = ctx.define(ctx.output(node), a.dtype, matmul_shape(node, a.shape, b.shape))
    ctx.emit("matmul", [a.name, b.name], [y], node.name)


HANDLERS: dict = {"Gemm": lower_gemm, "MatMul": lower_matmul}
