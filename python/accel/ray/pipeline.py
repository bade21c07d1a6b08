"""``map_model``: a model mapped over a Ray Dataset by a pool of :class:`~accel.ray.Predictor` actors, with
defaults that fit the device: on the emulator one CPU per actor, the pool growing from one actor to one per CPU of
the cluster (a fixed pool holding every CPU would leave none to the dataset's other steps, and stall them); on a
board a fixed pool of an actor per board, each holding one unit of the resource named by the device's scheme
(``bpu``, ``vart``), which the boards' nodes declare (``ray start --resources='{"bpu": 1}'``; docs/ray.md)."""
from __future__ import annotations

import sys
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from .._lazy_import import import_optional
from ..runtime.capabilities import describe_or_unknown
from ..runtime.device_uri import parse_uri

from .predictor import ModelSource, Predictor
from .rows import Columns

__all__ = ["map_model", "map_predictor", "actors_that_fit", "import_ray", "DEFAULT_BATCH_SIZE"]

#: Rows per Ray batch unless ``batch_size`` says otherwise: enough runs per call to keep jobs in flight.
DEFAULT_BATCH_SIZE = 64


def import_ray() -> Any:
    """The ``ray`` module; ImportError saying what to install without it."""
    import_optional("ray.data", "accel.ray needs Ray Data", "pip install 'accel[ray]'")
    return sys.modules["ray"]


def map_model(ds: Any, model: ModelSource, *, device: str = "emu",
              concurrency: Union[int, Tuple[int, int], None] = None,
              batch_size: Optional[int] = None, num_cpus: Optional[float] = None,
              resources: Optional[Mapping[str, float]] = None, inputs: Optional[Mapping[str, str]] = None,
              outputs: Columns = None, input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
              image_inputs: Optional[Mapping[str, Any]] = None, int8: Optional[str] = None,
              id_column: Optional[str] = None, max_inflight: Optional[int] = None, **map_batches_args: Any) -> Any:
    """``ds`` with the model's outputs added as columns (a lazy Dataset, as ``map_batches`` returns).

    Args:
        ds: a ``ray.data.Dataset`` whose columns hold the model's inputs, a row each (see :class:`Predictor`).
        model, device, inputs, outputs, input_shapes, image_inputs, int8, id_column, max_inflight: as
            :class:`Predictor` takes them.
        concurrency: the actors: a number (a fixed pool) or ``(min, max)`` (a pool Ray grows and shrinks between
            them). Default: on the emulator ``(1, the cluster's CPUs // num_cpus)``; on a board, the units of its
            resource in the cluster (one per board).
        batch_size: rows per call (default 64; a multiple of the model's batch wastes no padding).
        num_cpus: CPUs per actor (default 1); on the emulator the actor runs a job per CPU.
        resources: Ray resources per actor (default ``{scheme: 1}`` on a device other than the emulator).
        map_batches_args: passed on to ``Dataset.map_batches`` (``memory``, ``ray_remote_args_fn``, ...).

    ValueError when the cluster has no CPU or board to give the actors (naming the resource and how to declare it).
    """
    kwargs: Dict[str, Any] = dict(model=model, device=device, inputs=inputs, outputs=outputs,
                                  input_shapes=input_shapes, image_inputs=image_inputs, int8=int8,
                                  id_column=id_column, max_inflight=max_inflight)
    return map_predictor(ds, Predictor, kwargs, device=device, concurrency=concurrency, batch_size=batch_size,
                         num_cpus=num_cpus, resources=resources, **map_batches_args)


def map_predictor(ds: Any, predictor: type, kwargs: Mapping[str, Any], *, device: str,
                  concurrency: Union[int, Tuple[int, int], None] = None, batch_size: Optional[int] = None,
                  num_cpus: Optional[float] = None, resources: Optional[Mapping[str, float]] = None,
                  **map_batches_args: Any) -> Any:
    """``ds.map_batches`` of the Predictor class ``predictor`` built with ``kwargs``, in a pool sized for ``device``
    as :func:`map_model` sizes it."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a URI str such as 'emu' or 'bpu:0', not {type(device).__name__}")
    ray = import_ray()
    on_host = describe_or_unknown(device).host_cpus
    cpus = 1.0 if num_cpus is None else float(num_cpus)
    if resources is None and not on_host:
        resources = {parse_uri(device).scheme: 1}  # a board: one unit of the resource its scheme names
    if concurrency is None:
        most = actors_that_fit(ray, cpus, resources)
        concurrency = (1, most) if on_host and most > 1 else most
    compute = (ray.data.ActorPoolStrategy(min_size=concurrency[0], max_size=concurrency[1])
               if isinstance(concurrency, tuple) else ray.data.ActorPoolStrategy(size=concurrency))
    if resources:
        map_batches_args["resources"] = dict(resources)
    return ds.map_batches(predictor, fn_constructor_kwargs=dict(kwargs), compute=compute, num_cpus=cpus,
                          batch_size=DEFAULT_BATCH_SIZE if batch_size is None else batch_size,
                          batch_format="numpy", **map_batches_args)


def actors_that_fit(ray: Any, cpus: float, resources: Optional[Mapping[str, float]]) -> int:
    """Actors the cluster can hold at once: by its CPUs, and by each resource an actor needs."""
    if not ray.is_initialized():
        ray.init()
    total = ray.cluster_resources()
    fits = [int(total.get("CPU", 0) // cpus)] if cpus > 0 else []
    for name, need in (resources or {}).items():
        if need > 0:
            if total.get(name, 0) < need:
                raise ValueError(f"no node of the Ray cluster has the resource {name!r} (the cluster has "
                                 f"{_describe(total)}): start each board's node with ray start --resources="
                                 f"'{{\"{name}\": 1}}' (docs/ray.md)")
            fits.append(int(total[name] // need))
    count = min(fits) if fits else 1
    if count < 1:
        raise ValueError(f"the Ray cluster has {_describe(total)}: not enough for one actor of {cpus:g} CPUs"
                         + (f" and {dict(resources)}" if resources else ""))
    return count


def _describe(total: Mapping[str, float]) -> str:
    shown = {k: v for k, v in total.items() if not k.startswith("node:") and "memory" not in k}
    return ", ".join(f"{v:g} {k}" for k, v in sorted(shown.items())) or "no resources"
