"""``Predictor``: a model on a device as a callable class for Ray Data's ``Dataset.map_batches``.

Ray builds one Predictor per actor: it opens its device and loads the model once, then each call runs a batch
(:mod:`accel.ray.rows` cuts it into runs, ``Model.run_batch`` keeps them in flight) and returns the batch with the
outputs added as columns. It works without Ray too: called on a ``{column: array}`` dict in any process.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, Mapping, Optional, Sequence, Union

from ..runtime.capabilities import describe_or_unknown
from ..runtime.device_uri import parse_uri
from .rows import Columns, RowPlan, Split

__all__ = ["Predictor", "device_uri", "assigned_cpus"]

ModelSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


def assigned_cpus() -> Optional[float]:
    """The CPUs Ray gave this process (an actor's ``num_cpus``), or None outside a Ray worker."""
    import sys

    ray = sys.modules.get("ray")
    if ray is None:  # never import Ray only to ask: a process Ray started has it imported
        return None

    try:
        if not ray.is_initialized():
            return None
        context = ray.get_runtime_context()
        if context.worker.mode != ray.WORKER_MODE:  # the driver: it was given nothing
            return None
        cpus = context.get_assigned_resources().get("CPU")
    except Exception:  # an older or newer Ray without these calls: size the device as outside Ray
        return None
    return None if cpus is None else float(cpus)


def device_uri(device: str, int8: Optional[str] = None, cpus: Optional[float] = None) -> str:
    """``device`` with the emulator options a Predictor adds: ``int8=`` (the integer rules) and, in a Ray actor
    given ``cpus`` CPUs, ``cores=N,threads=1`` (N = the CPUs, at least 1) unless ``device`` sets cores or threads:
    an emulated core per CPU, each running a job of its own, so the actor uses what Ray reserved for it and no
    more. ValueError for ``int8`` on a device other than the emulator (a board computes with its own rules)."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a URI str such as 'emu' or 'bpu:0', not {type(device).__name__}")
    uri = parse_uri(device)
    caps = describe_or_unknown(device)
    added = uri
    if int8 is not None:
        if not caps.int8_option:
            raise ValueError(f"int8={int8!r} chooses the emulator's integer rules; device {device!r} computes with its "
                             f"own")
        if "int8" in uri.keys:
            raise ValueError(f"int8={int8!r} given twice: as a keyword and in device {device!r}")
        added = added.with_option("int8", int8)
    if caps.host_cpus and cpus is not None and not uri.keys & {"cores", "threads"}:
        added = added.with_option("cores", str(max(1, int(cpus)))).with_option("threads", "1")
    return device if added == uri else str(added)


_RUN_BATCH_ITEM = re.compile(r"^run_batch: item (\d+): ")


class Predictor:
    """Runs a model on batches of rows: ``ds.map_batches(Predictor, fn_constructor_kwargs={"model": path},
    concurrency=2, num_cpus=1, batch_format="numpy")`` (or :func:`accel.ray.map_model`).

    Args:
        model: the model: a path every node can read, or its bytes (ONNX on the emulator, or the device's own
            format), as ``Device.load`` takes it.
        device: the device URI (default ``"emu"``). On the emulator in a Ray actor, one emulated core per CPU Ray
            gave the actor (``cores=N,threads=1``) unless the URI sets ``cores`` or ``threads``.
        inputs: ``{model input: column}`` (default: each input reads the column of its name).
        outputs: ``{model output: column}`` or a list of output names (default: every output, to the column of
            its name). A column the batch has already is refused.
        input_shapes, image_inputs: as ``Device.load`` takes them (ONNX only).
        int8: the emulator's integer rules (``"ort"``, ``"dpu"``, ``"bpu"``): the URI's ``int8=`` option.
        id_column: a column that names rows (a path, an index), quoted with the row's position when a row is bad.
        max_inflight: jobs in flight per batch (default: the device's).

    A call takes a batch ``{column: array}`` (the first axis the row), runs it (see :mod:`accel.ray.rows` for how
    rows become runs) and returns the batch's columns with the outputs added. A batch the model cannot take raises
    ValueError naming the column, its dtype or shape, and for a column of objects the row.
    """

    def __init__(self, model: ModelSource, *, device: str = "emu", inputs: Optional[Mapping[str, str]] = None,
                 outputs: Columns = None, input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
                 image_inputs: Optional[Mapping[str, Any]] = None, int8: Optional[str] = None,
                 id_column: Optional[str] = None, max_inflight: Optional[int] = None) -> None:
        import accel

        self.device_uri = device_uri(device, int8, assigned_cpus())
        self.id_column = id_column
        self.max_inflight = max_inflight
        self.device = accel.open(self.device_uri)
        try:
            self.model = self.device.load(model, input_shapes=input_shapes, image_inputs=image_inputs)
            self.plan = RowPlan(self.model.inputs, self.model.outputs, inputs, outputs)
        except BaseException:
            self.device.close()
            raise

    def __call__(self, batch: Mapping[str, Any]) -> Dict[str, Any]:
        split = self.plan.split(batch, self.id_column)
        try:
            results = self.model.run_batch(split.runs, max_inflight=self.max_inflight) if split.runs else []
        except Exception as e:
            raise _at_rows(e, split) from None
        out: Dict[str, Any] = dict(batch)
        out.update(self.plan.columns(split, results))
        return out

    def close(self) -> None:
        """Closes the device (the model with it). A Ray actor's process closes it when it ends."""
        self.device.close()

    def __repr__(self) -> str:
        return f"Predictor({self.model.name!r} on {self.device_uri!r})"


def _at_rows(error: BaseException, split: Split) -> BaseException:
    """A failed job's error from run_batch (``run_batch: item K: ...``, as its docs promise) as the same class,
    naming the rows of run K."""
    from ..runtime.batching import prefixed

    match = _RUN_BATCH_ITEM.match(str(error))
    if match is None:
        return error
    first = split.first_row(int(match.group(1)))
    last = min(first + split.per_run, split.rows) - 1
    where = f"row {first} of the batch" if first == last else f"rows {first} to {last} of the batch"
    return prefixed(error, f"{where}: ", str(error)[match.end():])
