"""Compiled Vitis AI models (.xmodel) made for the tests, in the form vai_c_xir writes (checked on public files: see
docs/xmodel.md): a USER subgraph with the input's data-fix, one DPU subgraph (dpu_name DPUCZDX8G_ISA1_B4096) whose
ops are upload, const-fix (int8 values at their ddr_addr in the subgraph's REG_0), the *-fix ops and download, every
tensor xint8 with its fix_point, NHWC feature maps, OHWI weights; and a CPU subgraph (fix2float) after each output.

    b = XmodelBuilder("net")
    x = b.input("x", (1, 8, 8, 3), fix_point=4)
    w = b.const("w", weights_ohwi, fix_point=6)
    y = b.op("conv2d-fix", "conv", {"input": [x], "weights": [w]}, (1, 8, 8, 8), 3, kernel=[3, 3], ...)
    b.output(y)
    data = b.bytes()
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from accel.compiler import xir

FINGERPRINT = 0x101000056010407  # a KV260's DPUCZDX8G_ISA1_B4096 (the public mnist model's)


def _fix_tensor(name: str, shape: Sequence[int], fix_point: int, **extra: Any) -> xir.Tensor:
    attrs = {"fix_point": fix_point, "bit_width": 8, "if_signed": True, "round_mode": "DPU_ROUND", **extra}
    return xir.Tensor(name, tuple(int(d) for d in shape), "XINT", 8, attrs)


class XmodelBuilder:
    """A compiled model, op by op; bytes() serializes it."""

    def __init__(self, name: str, dpu_name: str = "DPUCZDX8G_ISA1_B4096") -> None:
        self.name = name
        self.dpu_name = dpu_name
        self.ops: Dict[str, xir.Op] = {}
        self.user: List[str] = []
        self.dpu: List[str] = []
        self.cpu: List[List[str]] = []
        self.register = bytearray()
        self.extra_dpu_attrs: Dict[str, Any] = {}

    def _add(self, op: xir.Op, where: List[str]) -> str:
        assert op.name not in self.ops, op.name
        self.ops[op.name] = op
        where.append(op.name)
        return op.name

    def input(self, name: str, shape: Sequence[int], fix_point: int) -> str:
        """The model input (data-fix, USER) and its upload (DPU); returns the upload."""
        self._add(xir.Op(name, "data-fix", {"shape": list(shape), "data_type": "XINT8", "device": "USER"}, {},
                         _fix_tensor(name, shape, fix_point)), self.user)
        return self._add(xir.Op(f"{name}_upload_0", "upload", {"device": "DPU"}, {"input": [name]},
                                _fix_tensor(f"{name}_upload_0", shape, fix_point, reg_id=2, ddr_addr=0)), self.dpu)

    def const(self, name: str, values: np.ndarray, fix_point: int) -> str:
        """A const-fix op: its int8 values appended to REG_0 (its data attribute empty, as vai_c_xir leaves it)."""
        values = np.ascontiguousarray(values, np.int8)
        addr = len(self.register)
        self.register += values.tobytes()
        self.register += bytes(-len(self.register) % 64)
        return self._add(xir.Op(name, "const-fix", {"shape": list(values.shape), "data_type": "XINT8",
                                                    "device": "DPU", "data": b""}, {},
                                _fix_tensor(name, values.shape, fix_point, reg_id=0, ddr_addr=addr)), self.dpu)

    def op(self, op_type: str, name: str, inputs: Dict[str, List[str]], out_shape: Sequence[int], fix_point: int,
           **attrs: Any) -> str:
        """A DPU op writing an xint8 tensor of `out_shape` at `fix_point`; `attrs` its attributes."""
        return self._add(xir.Op(name, op_type, {"device": "DPU", **attrs}, inputs,
                                _fix_tensor(f"{name}_fix", out_shape, fix_point, reg_id=1, ddr_addr=0)), self.dpu)

    def output(self, src: str) -> str:
        """A download of `src` (a DPU output) and the CPU's fix2float after it; returns the download."""
        t = self.ops[src].output
        down = self._add(xir.Op(f"{src}_download_0", "download", {"device": "DPU"}, {"input": [src]},
                                _fix_tensor(f"{t.name}_download", t.shape, t.fix_point)), self.dpu)
        cpu = f"{src}_fix2float"
        self.ops[cpu] = xir.Op(cpu, "fix2float", {"device": "CPU", "fix_point": t.fix_point}, {"input": [down]},
                               xir.Tensor(cpu, t.shape, "FLOAT", 32, {}))
        self.cpu.append([cpu])
        return down

    def graph(self) -> xir.Graph:
        leaves = [xir.Subgraph(f"subgraph_{n}", {}, [n]) for n in self.dpu]
        dpu = xir.Subgraph(f"subgraph_{self.dpu[1] if len(self.dpu) > 1 else self.name}", {
            "device": "DPU", "dpu_name": self.dpu_name, "dpu_fingerprint": FINGERPRINT,
            "reg_id_to_parameter_value": {"REG_0": bytes(self.register)},
            "reg_id_to_size": {"REG_0": len(self.register)},
            "reg_id_to_context_type": {"REG_0": "CONST", "REG_1": "DATA", "REG_2": "DATA"},
            "runner": {"run": "libvart-dpu-runner.so", "ref": "libvart-cpu-runner.so", "sim": "libvart-sim-runner.so"},
            "mc_code": b"", **self.extra_dpu_attrs}, [], leaves)
        children = [xir.Subgraph(f"subgraph_{n}", {"device": "USER"}, [n]) for n in self.user] + [dpu]
        children += [xir.Subgraph(f"subgraph_{ops[0]}", {"device": "CPU"}, ops) for ops in self.cpu]
        return xir.Graph(self.name, dict(self.ops), xir.Subgraph("root", {}, [], children), {"origin": "accel tests"})

    def bytes(self) -> bytes:
        return xir.write(self.graph())


class QuantizerBuilder:
    """The quantizer's graph (vai_q's *_int.xmodel), op by op: float32 ops, a fix op (DPU_ROUND, signed int8) after
    each quantized tensor, constants as float32 data already on their fix point's grid, every op in the root
    subgraph. A fix op's tensor is named as the compiled file names the folded op's (by default "<op>_fix")."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ops: Dict[str, xir.Op] = {}

    def _add(self, op: xir.Op) -> str:
        assert op.name not in self.ops, op.name
        self.ops[op.name] = op
        return op.name

    def input(self, name: str, shape: Sequence[int], fix_point: int) -> str:
        """A data op and its fix, which is named `name` (the compiled file's input); returns the fix."""
        data = self.op("data", f"{name}__float", {}, shape, shape=list(shape), data_type="FLOAT32")
        return self.fix(data, fix_point, name)

    def const(self, name: str, values: np.ndarray, fix_point: Optional[int] = None) -> str:
        """A const op of float32 `values` (int8 values given with a fix point: their reals), and its fix when
        `fix_point` is given (named "<name>_fix"); returns the last."""
        values = np.asarray(values)
        if fix_point is not None:
            values = np.ldexp(values.astype(np.float64), -fix_point)
        values = np.ascontiguousarray(values, "<f4")
        c = self._add(xir.Op(name, "const", {"shape": list(values.shape), "data_type": "FLOAT32",
                                             "data": values.tobytes()}, {},
                             xir.Tensor(name, values.shape, "FLOAT", 32, {})))
        return c if fix_point is None else self.fix(c, fix_point)

    def op(self, op_type: str, name: str, inputs: Dict[str, List[str]], out_shape: Sequence[int],
           **attrs: Any) -> str:
        """A float op writing a float32 tensor of `out_shape`; `attrs` its attributes."""
        return self._add(xir.Op(name, op_type, dict(attrs), inputs,
                                xir.Tensor(name, tuple(int(d) for d in out_shape), "FLOAT", 32, {})))

    def fix(self, src: str, fix_point: int, name: Optional[str] = None, **attrs: Any) -> str:
        """The fix op after `src` (named `name`, or "<src>_fix"); `attrs` replace the DPU's fix attributes."""
        name = name or f"{src}_fix"
        fix_attrs = {"fix_point": fix_point, "bit_width": 8, "if_signed": True, "round_mode": "DPU_ROUND", **attrs}
        shape = self.ops[src].output.shape
        return self._add(xir.Op(name, "fix", fix_attrs, {"input": [src]},
                                xir.Tensor(name, shape, "FLOAT", 32, {"fix_point": fix_point})))

    def graph(self) -> xir.Graph:
        return xir.Graph(self.name, dict(self.ops), xir.Subgraph("root", {}, list(self.ops)), {"origin": "accel tests"})

    def bytes(self) -> bytes:
        return xir.write(self.graph())
