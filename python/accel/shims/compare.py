"""``accel shim --compare``: every output of every run the script makes held against the same run of the model's float
counterpart (``Device.load(..., dequantized=True)`` on the host's emulator, whatever device the script runs on),
tallied per model and output as ``accel compare`` tallies tensors (accel.comparison.metrics), the table printed on
stderr when the script exits (and written as JSON when asked).

A model whose float run cannot be made (an operator-form ONNX, a Horizon .bin with no source beside it) is said once
and runs uncompared: comparing never stops the script or changes what it gets.
"""
from __future__ import annotations

import concurrent.futures
import sys
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

from ..comparison.metrics import Tally, Tensor
from ..comparison.report import Comparison, Row

__all__ = ["FLOAT_DEVICE", "THRESHOLD", "ComparedModel", "Comparisons"]

#: Where the float runs run: the host's emulator, float kernels (the counterpart has no quantized op).
FLOAT_DEVICE = "emu"
#: The cosine below which an output is flagged (accel compare's default).
THRESHOLD = 0.99


class Comparisons:
    """The process's tallies: one per (model, output), in the order the runs gave them."""

    def __init__(self, say_once: Callable[[str, str], None], json_path: Optional[str] = None) -> None:
        self._say_once = say_once  # (key, message): says the message on stderr the first time key is said
        self._lock = threading.Lock()
        self._device: Any = None
        self._tallies: Dict[Tuple[str, str], Tally] = {}
        self._sides: Dict[Tuple[str, str], Tuple[Tuple[int, ...], str]] = {}  # the run's side: shape, dtype
        self._runs: Dict[str, int] = {}
        self._uncompared: Dict[str, str] = {}
        self._pending: List[concurrent.futures.Future[Any]] = []
        self._json = json_path

    def float_device(self) -> Any:
        with self._lock:
            if self._device is None:
                import accel

                self._device = accel.open(FLOAT_DEVICE)
            return self._device

    def watch(self, model: Any, label: str, source: Any, options: Mapping[str, Any]) -> Any:
        """``model`` as a ComparedModel when its float counterpart loads (``source`` with ``options``, as the model
        was loaded), else ``model`` itself, said once."""
        try:
            twin = self.float_device().load(source, dequantized=True, **options)
        except Exception as e:  # noqa: BLE001 - any failure of the float run leaves the script's run alone
            return self.uncompared(model, label, e)
        return ComparedModel(model, twin, label, self)

    def uncompared(self, model: Any, label: str, why: BaseException) -> Any:
        """``model`` as it is, and said once: it has no float run because of ``why``."""
        with self._lock:
            self._uncompared[label] = str(why)
        self._say_once(f"compare:{label}", f"--compare: {label} runs uncompared: no float run ({why})")
        return model

    def add(self, label: str, run: Any, outputs: List[np.ndarray], floats: List[np.ndarray]) -> None:
        with self._lock:
            self._runs[label] = self._runs.get(label, 0) + 1
            for info, got, want in zip(run.outputs, outputs, floats):
                key = (label, info.name)
                if key not in self._tallies:
                    self._tallies[key] = Tally()
                    self._sides[key] = (tuple(np.shape(got)), str(np.asarray(got).dtype))
                self._tallies[key].add(Tensor(info.name, [np.asarray(got)], info.quant),
                                       Tensor(info.name, [np.asarray(want)], None))

    def track(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._pending = [f for f in self._pending if not f.done()] + [future]

    def comparison(self) -> Comparison:
        """What the runs so far give: a Row per (model, output), each side's name the output's."""
        with self._lock:
            pending = list(self._pending)
        concurrent.futures.wait(pending, timeout=60)
        rows = []
        with self._lock:
            for (label, name), tally in self._tallies.items():
                m = tally.metrics()
                shape, dtype = self._sides[(label, name)]
                below = m.cosine is not None and not m.cosine >= THRESHOLD
                rows.append(Row(tensor=name, tensor_b=name, key=f"{label}: {name}", shape=shape, shape_b=shape,
                                dtype_a=dtype, dtype_b="float32", cosine=m.cosine, max_abs_error=m.max_abs_error,
                                mean_abs_error=m.mean_abs_error, differing=m.differing, max_lsb=m.max_lsb,
                                below_threshold=below, note=m.note))
        return Comparison(rows, "the runs", "their float runs", THRESHOLD)

    def report(self) -> None:
        """Prints the table on stderr (and writes the JSON when asked), then closes the float device."""
        c = self.comparison()
        with self._lock:
            runs = ", ".join(f"{label} {n}" for label, n in self._runs.items()) or "none"
            uncompared = dict(self._uncompared)
        print(f"accel shim --compare: every output against its model's float run on {FLOAT_DEVICE!r} (runs: {runs})",
              file=sys.stderr)
        if len(c):
            print(c.table(), file=sys.stderr)
        if uncompared:
            print(f"accel shim --compare: uncompared (no float run, as said above): {', '.join(uncompared)}",
                  file=sys.stderr)
        print(f"accel shim --compare: {c.summary()}", file=sys.stderr)
        if self._json:
            c.to_json(self._json)
            print(f"accel shim --compare: rows written to {self._json}", file=sys.stderr)
        with self._lock:
            device, self._device = self._device, None
        if device is not None:
            device.close()


class ComparedModel:
    """A model whose every run (``run``, ``run_async``) is also run on its float counterpart and tallied; everything
    else is the model's."""

    def __init__(self, model: Any, twin: Any, label: str, owner: Comparisons) -> None:
        self._model, self._twin, self._label, self._owner = model, twin, label, owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def __repr__(self) -> str:
        return f"<compared {self._model!r}>"

    def run(self, inputs: Any, outputs: Any = None, **options: Any) -> List[np.ndarray]:
        results: List[np.ndarray] = self._model.run(inputs, outputs, **options)
        self._compare(self._float_feeds(inputs), results)
        return results

    def run_async(self, inputs: Any, outputs: Any = None, **options: Any) -> Any:
        feeds = self._float_feeds(inputs)  # copied now: the caller may change its arrays once this returns
        future = self._model.run_async(inputs, outputs, **options)
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._owner.track(done)

        def compare(f: Any) -> None:
            try:
                if f.exception() is None:  # copied first: once the future is done the caller may reuse its outputs
                    self._compare(feeds, [np.array(r, copy=True) for r in f.result()])
            finally:
                done.set_result(None)

        future.add_done_callback(compare)
        return future

    def _compare(self, feeds: Dict[str, np.ndarray], results: List[np.ndarray]) -> None:
        self._owner.add(self._label, self._model, results, self._twin.run(feeds))

    def _float_feeds(self, inputs: Any) -> Dict[str, np.ndarray]:
        """The run's inputs by name, as the float counterpart takes them: a quantized input's real values."""
        import accel

        infos = self._model.inputs
        if isinstance(inputs, Mapping):
            named = dict(inputs)
        elif isinstance(inputs, (list, tuple)):
            named = {i.name: v for i, v in zip(infos, inputs)}
        else:
            named = {infos[0].name: inputs}
        feeds = {}
        for info, twin in zip(infos, self._twin.inputs):
            value = named[info.name]
            array = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
            if info.quant is not None and twin.dtype != info.dtype:
                feeds[twin.name] = accel.dequantize(array, info)
            else:
                feeds[twin.name] = np.array(array, copy=True)
        return feeds
