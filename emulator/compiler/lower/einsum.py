"""Einsum, lowered to what the runtime has: sums over labels (reduce), transposes and reshapes (copies),
batched matrix products (matmul) and, where two operands share no summed label, a broadcast mul."""
from __future__ import annotations

import math
import re

import numpy as np

from ..errors import CompileError
from ..op_params import Reduce, ReduceFn, Slice, Transpose
from .context import F32, unsupported

_TERM = re.compile(r"^[A-Za-z]*(\.\.\.)?[A-Za-z]*$")


class _Operand:
    """A tensor (its name) with one label per dim."""

    def __init__(self, name, labels, shape):
        self.name, self.labels, self.shape = name, list(labels), tuple(int(d) for d in shape)


def _parse(node, equation, ranks):
    """The labels of each operand and of the output: letters, and '.0', '.1', ... for the ellipsis dims
    (right-aligned over the operands, as numpy broadcasts them)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise CompileError(f"{node.label}: equation '{equation}' has {len(terms)} operand terms for "
                           f"{len(ranks)} inputs")
    for t in terms + ([rhs] if arrow else []):
        if not _TERM.match(t):
            raise CompileError(f"{node.label}: equation '{equation}': term '{t}' is not letters with at most "
                               f"one '...'")
    ell = []
    for t, rank in zip(terms, ranks):
        letters = len(t.replace("...", ""))
        n = rank - letters
        if n < 0 or (n > 0 and "..." not in t):
            raise CompileError(f"{node.label}: equation '{equation}': term '{t}' does not fit an input of "
                               f"rank {rank}")
        ell.append(n if "..." in t else 0)
    width = max(ell, default=0)

    def expand(t, n):
        head, dots, tail = t.partition("...")
        return list(head) + ([f".{width - n + k}" for k in range(n)] if dots else []) + list(tail)

    inputs = [expand(t, n) for t, n in zip(terms, ell)]
    if arrow:
        output = expand(rhs, width)
        if width and "..." not in rhs:
            raise CompileError(f"{node.label}: equation '{equation}': the inputs have '...' dims but the "
                               f"output has no '...'")
        if len(set(output)) != len(output):
            raise CompileError(f"{node.label}: equation '{equation}': output '{rhs}' repeats a label")
        every = {lab for labels in inputs for lab in labels}
        missing = [lab for lab in output if lab not in every]
        if missing:
            raise CompileError(f"{node.label}: equation '{equation}': output label '{missing[0]}' is in no "
                               f"input")
    else:  # numpy's implicit output: the ellipsis dims, then the letters seen once, in alphabetical order
        counts: dict = {}
        for labels in inputs:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        output = [f".{k}" for k in range(width)] + sorted(lab for lab, c in counts.items()
                                                          if c == 1 and not lab.startswith("."))
    return inputs, output


class _Builder:
    """Emits the runtime nodes of one Einsum node; folds what is constant."""

    def __init__(self, ctx, node):
        self.ctx, self.node = ctx, node
        self.hint = ctx.output(node)

    def _const(self, name):
        v = self.ctx.g.value(name)
        return v.const if v.is_const else None

    def reshape(self, op: _Operand, labels, shape) -> _Operand:
        shape = tuple(int(d) for d in shape)
        if shape == op.shape:
            return _Operand(op.name, labels, shape)
        c = self._const(op.name)
        if c is not None:
            return _Operand(self.ctx.const(np.asarray(c, F32).reshape(shape), f"{self.hint}_operand"), labels, shape)
        return _Operand(self.ctx.reshape_temp(op.name, shape, self.node.name, f"{self.hint}_reshaped"), labels, shape)

    def transpose(self, op: _Operand, labels) -> _Operand:
        perm = [op.labels.index(lab) for lab in labels]
        if perm == list(range(len(perm))):
            return op
        shape = tuple(op.shape[p] for p in perm)
        c = self._const(op.name)
        if c is not None:
            return _Operand(self.ctx.const(np.ascontiguousarray(np.transpose(c, perm)), f"{self.hint}_operand"),
                            labels, shape)
        t = self.ctx.temp(f"{self.hint}_transposed", F32, shape)
        self.ctx.emit("transpose", [op.name], [t], self.node.name, params=Transpose(perm=perm))
        return _Operand(t, labels, shape)

    def diagonal(self, op: _Operand) -> _Operand:
        """op with each label it repeats taken once, along the diagonal: the two dims made neighbours (a
        transpose), merged (a reshape) and read with a step of d + 1 (a slice)."""
        while len(set(op.labels)) != len(op.labels):
            labels = op.labels
            second = next(i for i, lab in enumerate(labels) if labels.index(lab) != i)
            first = labels.index(labels[second])
            d = op.shape[second]
            if op.shape[first] != d:
                raise CompileError(f"{self.node.label}: label '{labels[first]}' is {op.shape[first]} and {d} in "
                                   f"one operand (a diagonal needs equal sizes)")
            order = [i for i in range(len(labels)) if i != second]
            order.insert(first + 1, second)
            # positions stand for the labels here: the operand repeats one
            moved = self.transpose(_Operand(op.name, range(len(labels)), op.shape), order)
            rest = [op.shape[i] for i in order]
            merged = self.reshape(moved, [], rest[:first] + [d * d] + rest[first + 2:])
            shape = tuple(rest[:first + 1] + rest[first + 2:])
            new_labels = [labels[i] for i in order[:first + 1] + order[first + 2:]]
            c = self._const(merged.name)
            if c is not None:
                diag = np.ascontiguousarray(np.asarray(c)[(slice(None),) * first + (slice(None, None, d + 1),)])
                op = _Operand(self.ctx.const(diag, f"{self.hint}_diagonal"), new_labels, shape)
                continue
            name = self.ctx.temp(f"{self.hint}_diagonal", F32, shape)
            steps = [1] * len(shape)
            steps[first] = d + 1 if d > 1 else 1  # within the axis of d * d (FORMAT.md)
            self.ctx.emit("slice", [merged.name], [name], self.node.name,
                          params=Slice(starts=[0] * len(shape), steps=steps))
            op = _Operand(name, new_labels, shape)
        return op

    def drop(self, op: _Operand, labels) -> _Operand:
        """op without the (size-1) dims of `labels`."""
        keep = [i for i, lab in enumerate(op.labels) if lab not in labels]
        return self.reshape(op, [op.labels[i] for i in keep], [op.shape[i] for i in keep])

    def sum(self, op: _Operand, labels) -> _Operand:
        """op summed over `labels` (those dims removed)."""
        axes = [i for i, lab in enumerate(op.labels) if lab in labels]
        if not axes:
            return op
        keep = [i for i in range(len(op.labels)) if i not in axes]
        c = self._const(op.name)
        if c is not None:
            s = np.asarray(np.sum(np.asarray(c, F32), axis=tuple(axes), dtype=F32), F32)
            return _Operand(self.ctx.const(s, f"{self.hint}_operand"), [op.labels[i] for i in keep], s.shape)
        kept = tuple(1 if i in axes else d for i, d in enumerate(op.shape))
        t = self.ctx.temp(f"{self.hint}_summed", F32, kept)
        mask = sum(1 << a for a in axes)
        self.ctx.emit("reduce", [op.name], [t], self.node.name, params=Reduce(function=ReduceFn.SUM, axes_mask=mask))
        return self.reshape(_Operand(t, op.labels, kept), [op.labels[i] for i in keep], [op.shape[i] for i in keep])

    def product(self, a: _Operand, b: _Operand, keep: set, order: list) -> _Operand:
        """The contraction of a and b over their shared labels not in `keep`; the result's labels follow
        `order` where it can (the final output's order)."""
        a = self.sum(a, [lab for lab in a.labels if lab not in b.labels and lab not in keep])
        b = self.sum(b, [lab for lab in b.labels if lab not in a.labels and lab not in keep])
        rank = {lab: i for i, lab in enumerate(order)}

        def ordered(labels):
            return sorted(labels, key=lambda lab: rank.get(lab, len(order)))

        shared = [lab for lab in a.labels if lab in b.labels]
        batch = ordered([lab for lab in shared if lab in keep])
        summed = [lab for lab in shared if lab not in keep]
        a_only = ordered([lab for lab in a.labels if lab not in b.labels])
        b_only = ordered([lab for lab in b.labels if lab not in a.labels])
        size = {lab: d for op in (a, b) for lab, d in zip(op.labels, op.shape)}
        if not summed:  # no sum: a broadcast mul in the order of the result
            labels = ordered(batch + a_only + b_only)
            a2 = self.transpose(a, [lab for lab in labels if lab in a.labels])
            b2 = self.transpose(b, [lab for lab in labels if lab in b.labels])
            # right-aligned broadcasting: each operand from its first label on, with 1s for the others
            operands = []
            for op in (a2, b2):
                first = labels.index(op.labels[0]) if op.labels else len(labels)
                tail = labels[first:]
                operands.append(self.reshape(op, tail, [size[lab] if lab in op.labels else 1 for lab in tail]).name)
            shape = tuple(size[lab] for lab in labels)
            t = self.ctx.temp(f"{self.hint}_product", F32, shape)
            self.ctx.emit("mul", operands, [t], self.node.name)
            return _Operand(t, labels, shape)
        # matmul's batch dims broadcast: every label but the last of a_only (M) and of b_only (N) rides
        # along as a batch dim the other operand has as 1 (no copies to merge them into M or N)
        m_lab, n_lab = a_only[-1:], b_only[-1:]
        batch = ordered(batch + a_only[:-1] + b_only[:-1])
        k = math.prod(size[lab] for lab in summed)
        a2 = self.transpose(a, [lab for lab in batch if lab in a.labels] + m_lab + summed)
        a2 = self.reshape(a2, a2.labels, self._batch_dims(batch, a.labels, size) + [size[m_lab[0]] if m_lab else 1, k])
        b2 = self.transpose(b, [lab for lab in batch if lab in b.labels] + summed + n_lab)
        b2 = self.reshape(b2, b2.labels, self._batch_dims(batch, b.labels, size) + [k, size[n_lab[0]] if n_lab else 1])
        shape = tuple([size[lab] for lab in batch] + [size[m_lab[0]] if m_lab else 1, size[n_lab[0]] if n_lab else 1])
        t = self.ctx.temp(f"{self.hint}_matmul", F32, shape)
        self.ctx.emit("matmul", [a2.name, b2.name], [t], self.node.name)
        labels = batch + m_lab + n_lab
        return self.reshape(_Operand(t, labels, shape), labels, [size[lab] for lab in labels])

    @staticmethod
    def _batch_dims(batch, labels, size) -> list:
        """An operand's batch dims, right-aligned to `batch` as matmul broadcasts them: from its first batch
        label on, 1 for the labels it does not have."""
        have = [i for i, lab in enumerate(batch) if lab in labels]
        return [size[lab] if lab in labels else 1 for lab in batch[have[0]:]] if have else []


def lower_einsum(ctx, node):
    """Einsum (opset 12+), float32 operands, any number of them: the equation with explicit ('->') or
    implicit output, '...' (ellipsis dims broadcast as numpy's), and labels of size 1 in one operand
    broadcasting against the others. Lowered to sums over the labels only one operand has (reduce),
    transposes and reshapes, and one batched matmul per pair of operands, left to right (a broadcast mul
    for a pair that shares no summed label): attention's 'bhqd,bhkd->bhqk' and 'bhqk,bhkd->bhqd', 'ij,jk->ik',
    'bi,bi->b', 'ij->ji', 'ij->i', 'bchw,c->bchw' and the like. A label repeated within one operand takes
    its diagonal first ('ii->i', 'bii->bi', 'ii' the trace: a transpose, a copy and a strided slice). Not
    supported: other dtypes than float32 (accel has no float64 or bfloat16 tensors), empty tensors.
    """
    eq = node.attr("equation")
    if eq is None:
        raise CompileError(f"{node.label}: attribute equation is required")
    eq = eq.decode() if isinstance(eq, bytes) else str(eq)
    values = [ctx.input(node, i) for i in range(len(node.inputs))]
    if not values:
        raise CompileError(f"{node.label}: no inputs")
    for v in values:
        if v.dtype != F32:
            raise unsupported(node, f"dtype {v.dtype} of input '{v.name}' (float32 only)")
        if any(d < 1 for d in v.shape):
            raise unsupported(node, f"empty input '{v.name}' {tuple(v.shape)}")
    inputs, output = _parse(node, eq, [len(v.shape) for v in values])
    size: dict = {}
    for v, labels in zip(values, inputs):
        for lab, d in zip(labels, v.shape):
            if size.get(lab, 1) not in (1, d) and d != 1:
                raise CompileError(f"{node.label}: equation '{eq}': label '{lab}' is {size[lab]} in one input "
                                   f"and {d} in '{v.name}'")
            size[lab] = max(size.get(lab, 1), d)
    b = _Builder(ctx, node)
    ops = []
    for v, labels in zip(values, inputs):
        op = b.diagonal(_Operand(v.name, labels, v.shape))
        labels = op.labels
        # a size-1 dim of a label that is larger elsewhere broadcasts: as if this operand had no such label
        ops.append(b.drop(op, [lab for lab, d in zip(labels, op.shape) if d == 1 and size[lab] > 1]))
    cur = ops[0]
    for i in range(1, len(ops) + 1):
        keep = set(output).union(*[o.labels for o in ops[i + 1:]])
        if i == len(ops):
            cur = b.sum(cur, [lab for lab in cur.labels if lab not in keep])
            break
        cur = b.product(cur, ops[i], keep, output)
    cur = b.transpose(cur, output)
    shape = tuple(size[lab] for lab in output)
    ctx.copy_to(cur.name, ctx.output(node), shape, node.name)


HANDLERS: dict = {"Einsum": lower_einsum}
