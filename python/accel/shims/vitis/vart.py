"""Vitis AI 3.5's ``vart`` module as scripts run a DPU subgraph with it (its pybind11 binding,
src/vai_runtime/vart/runner/python/runner_py_module.cpp), over accel's Python API:

    runner = vart.Runner.create_runner(subgraph, "run")       # Device.load(file, subgraph=name) on the shim's device
    x = np.empty(tuple(runner.get_input_tensors()[0].dims), np.int8)   # xint8, NHWC, real = q * 2^-fix_point
    y = np.empty(tuple(runner.get_output_tensors()[0].dims), np.int8)
    job = runner.execute_async([x], [y])                       # (1, 0), as the DPU runner returns; y written
    runner.wait(job)                                           # 0

As on a board (Zynq's DPU runner), execute_async runs the job before it returns (without the GIL: one runner per
thread runs in parallel) and writes the outputs into the script's arrays; wait returns 0. ``RunnerExt`` adds
get_inputs()/get_outputs(), TensorBuffers run in place. Where VART aborts the process or reads and writes past an
array, the shim raises accel's errors first (_buffers.py; docs/shims/vitis.md has the table).
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import weakref
from typing import Any, List, Optional, Sequence, Tuple

from ...compiler import xir as _x
from ...errors import InvalidArgumentError, UnsupportedError
from .. import session
from . import _buffers
from .tensor_buffer import TensorBuffer
from .xir import Graph, Subgraph, Tensor

__all__ = ["Runner", "RunnerExt", "TensorBuffer"]


class Runner:
    """A runner of one DPU subgraph: ``vart.Runner.create_runner(subgraph, "run")``."""

    _graph: weakref.ReferenceType[Graph]
    _where: str
    _model: Any  # accel.Model
    _inputs: List[Tensor]
    _outputs: List[Tensor]
    _busy: threading.Lock

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError('vart.Runner has no constructor: vart.Runner.create_runner(subgraph, "run") makes one')

    @staticmethod
    def create_runner(subgraph: Subgraph, mode: str = "") -> Runner:
        """A runner of `subgraph` (a DPU subgraph of a deserialized graph) in `mode` ("run": the binding's default
        "" names no runner, and VART aborts on it)."""
        return _create(Runner, subgraph, mode)

    def get_input_tensors(self) -> List[Tensor]:
        """Its input tensors, in the order execute_async takes the arrays (XIR's sorted by name)."""
        return list(self._inputs)

    def get_output_tensors(self) -> List[Tensor]:
        return list(self._outputs)

    def execute_async(self, inputs: Sequence[Any], outputs: Sequence[Any],
                      enable_dynamic_array: bool = False) -> Tuple[int, int]:
        """Runs the subgraph on `inputs` (one array per input tensor: int8 as it is, or float32 real values) and
        writes `outputs` (one writable array per output tensor: int8, or float32 real values); returns (job id,
        status) = (1, 0), as the DPU runner does, once the outputs are written."""
        self._check_graph()
        ins = _buffers.arrays(inputs, self._inputs, "input", bool(enable_dynamic_array))
        outs = _buffers.arrays(outputs, self._outputs, "output", bool(enable_dynamic_array))
        feeds = [_buffers.feed(item, a, t) for item, a, t in zip(inputs, ins, self._inputs)]
        in_place = _in_place(outputs, self._outputs)
        if not self._busy.acquire(blocking=False):
            raise InvalidArgumentError(f"{self._where} is running a job in another thread: VART's runner is not "
                                       f"re-entrant (it aborts); make one runner per thread, as Vitis AI's samples do")
        try:
            results = self._model.run(feeds, outputs=in_place)
        finally:
            self._busy.release()
        if in_place is None:
            for r, a, t in zip(results, outs, self._outputs):
                _buffers.write(r, a, t)
        return (1, 0)

    def wait(self, job_id: Tuple[int, int]) -> int:
        """0 once job `job_id` (what execute_async returned) is over: it is, when execute_async returns."""
        self._check_graph()
        ok = isinstance(job_id, (tuple, list)) and len(job_id) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in job_id)
        if not ok:
            raise TypeError(f"wait() takes the (job id, status) pair execute_async returned, not {job_id!r}")
        return 0

    def _check_graph(self) -> None:
        if self._graph() is None:
            raise InvalidArgumentError(f"{self._where}: its xir.Graph is gone (the script keeps neither the graph "
                                       f"nor a subgraph of it); VART's runner does not own its graph and crashes "
                                       f"when used after it: keep the Graph alive while its runners run")

    def __repr__(self) -> str:
        return f"vart::Runner@{id(self):#x}"

    def __getattr__(self, name: str) -> Any:
        if name == "get_tensor_format":  # C++ only: 3.5's binding has no such method, so neither does the shim
            raise AttributeError("'vart.Runner' object has no attribute 'get_tensor_format': Vitis AI 3.5's Python "
                                 "binding has none either (the DPU's tensors are NHWC)")
        if name in ("get_inputs", "get_outputs") and not isinstance(self, RunnerExt):
            raise AttributeError(f"'vart.Runner' object has no attribute {name!r}: runner-owned buffers are "
                                 f"vart.RunnerExt's (vart.RunnerExt.create_runner(subgraph, \"run\"))")
        raise AttributeError(f"'vart.Runner' object has no attribute {name!r}")


class RunnerExt(Runner):
    """A runner with buffers of its tensors: ``vart.RunnerExt.create_runner(subgraph, "run")``."""

    @staticmethod
    def create_runner(subgraph: Subgraph, mode: str) -> RunnerExt:  # type: ignore[override]
        runner = _create(RunnerExt, subgraph, mode)
        assert isinstance(runner, RunnerExt)
        return runner

    def get_inputs(self) -> List[TensorBuffer]:
        """New zeroed buffers of its input tensors (as the binding, new ones at each call): fill
        ``np.asarray(tb)`` and pass them to execute_async, which runs them in place."""
        return [TensorBuffer._make(t, session.device()) for t in self._inputs]

    def get_outputs(self) -> List[TensorBuffer]:
        return [TensorBuffer._make(t, session.device()) for t in self._outputs]


def _in_place(outputs: Sequence[Any], tensors: Sequence[Tensor]) -> Optional[List[Any]]:
    """The device tensors to write the results into when every output is a TensorBuffer of its tensor's shape (no
    copy), else None: results are then copied into the script's arrays."""
    if all(isinstance(o, TensorBuffer) and o._shape_is(t.dims) for o, t in zip(outputs, tensors)):
        return [o._tensor for o in outputs]
    return None


def _create(cls: type, subgraph: Subgraph, mode: str) -> Runner:
    if not isinstance(subgraph, Subgraph):
        raise TypeError(f"create_runner() takes an xir.Subgraph (a child of graph.get_root_subgraph()), not "
                        f"{type(subgraph).__name__}")
    if not isinstance(mode, str):
        raise TypeError(f"create_runner()'s mode is a str (\"run\"), not {type(mode).__name__}")
    name = subgraph.get_name()
    device = subgraph.get_attr("device") if subgraph.has_attr("device") else ""
    if device != "DPU":
        raise UnsupportedError(f"subgraph {name!r} runs on {device or 'no device'!r}: accel's shim runs the DPU "
                               f"subgraphs (attribute device == \"DPU\"); the script computes the others itself")
    modes = subgraph.get_attr("runner") if subgraph.has_attr("runner") else None
    modes = modes if isinstance(modes, dict) else {"run": "the DPU runner"}
    if mode not in modes:
        raise InvalidArgumentError(f"subgraph {name!r} has no runner for mode {mode!r} (its modes: "
                                   f"{', '.join(repr(m) for m in modes)}); VART aborts here: pass \"run\"")
    if mode != "run":
        raise UnsupportedError(f"mode {mode!r} ({modes[mode]}) is not emulated: accel's shim runs mode \"run\", "
                               f"computing what the DPU computes")
    graph = subgraph.get_graph()
    path = _model_file(graph)
    model = session.load(path, f"{os.path.basename(path)} {name}", subgraph=name)
    runner: Runner = object.__new__(cls)
    runner._graph = weakref.ref(graph)
    runner._where = f"the runner of subgraph {name!r}"
    runner._model = model
    runner._inputs = [_tensor(graph, info) for info in model.inputs]
    runner._outputs = [_tensor(graph, info) for info in model.outputs]
    runner._busy = threading.Lock()
    return runner


def _tensor(graph: Graph, info: Any) -> Tensor:
    """The runner's own tensor for a model input or output (accel.TensorInfo): the graph's tensor of that name
    (its attributes: fix_point, ...) copied, as VART's DPU runner makes its tensors, with the model's shape."""
    op = graph._c.producer.get(info.name)
    if op is not None:
        t = graph._c.graph.ops[op].output
        own = _x.Tensor(t.name, tuple(info.shape), t.data_type, t.bit_width, dict(t.attrs))
    else:
        shifts = getattr(info.quant, "shifts", ()) if info.quant is not None else ()
        own = _x.Tensor(info.name, tuple(info.shape), "XINT", 8, {"fix_point": shifts[0]} if shifts else {})
    return Tensor._make(own, None, None)


_copies: List[str] = []


def _remove_copies() -> None:
    for folder in _copies:
        shutil.rmtree(folder, ignore_errors=True)


def _model_file(graph: Graph) -> str:
    """The file to load: the one deserialized, or (if it changed since) a copy of the bytes the graph was read from,
    under the same name in a folder removed at exit."""
    c = graph._c
    try:
        with open(c.path, "rb") as f:
            if f.read() == c.data:
                return c.path
    except OSError:
        pass
    folder = tempfile.mkdtemp(prefix="accel-shim-vitis-")
    if not _copies:
        atexit.register(_remove_copies)
    _copies.append(folder)
    path = os.path.join(folder, os.path.basename(c.path))
    with open(path, "wb") as f:
        f.write(c.data)
    return path
