"""Runs a recorded graph as one job: its model from the device's cache (built, compiled and loaded on a
miss), fresh device tensors for its outputs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Tuple

from ..errors import InternalError
from ..runtime import loading
from .cache import ModelCache
from .recording import Graph

if TYPE_CHECKING:
    from ..runtime.device import RuntimeDevice
    from ..runtime.model import Model


@dataclass(frozen=True)
class Loaded:
    """A graph's model and how its inputs and outputs line up with the graph's (by name)."""

    model: Model
    feed_order: Tuple[int, ...]  # per model input, the index of the graph input fed to it
    output_order: Tuple[int, ...]  # per model output, the index of the graph output it is


def load(device: RuntimeDevice, graph: Graph) -> Loaded:
    model = loading.load(device, graph.onnx())
    ins = {n: i for i, (n, _, _) in enumerate(graph.inputs)}
    outs = {n: i for i, (n, _) in enumerate(graph.outputs)}
    try:
        feed = tuple(ins[t.name] for t in model.inputs)
        order = tuple(outs[t.name] for t in model.outputs)
    except KeyError as e:
        raise InternalError(f"the compiled op model has a tensor {e} its graph has not") from None
    wrong = [(t.name, t.shape, graph.outputs[i][1]) for t, i in zip(model.outputs, order)
             if t.shape != graph.outputs[i][1]]
    if len(feed) != len(ins) or len(order) != len(outs) or wrong:
        raise InternalError(f"the compiled op model does not match its graph (outputs as compiled and as "
                            f"planned: {wrong})")
    return Loaded(model, feed, order)


def run(device: RuntimeDevice, cache: ModelCache, graph: Graph) -> Tuple[List[Any], Loaded]:
    """Runs ``graph`` once; returns its outputs (DeviceTensors, in the graph's order) and its model."""
    # The signature holds each constant's content key: a hit is a model of exactly these constants.
    loaded, _ = cache.get(graph.signature(), lambda: load(device, graph))
    outputs = [device.empty(shape) for _, shape in graph.outputs]
    feeds = [graph.inputs[i][2] for i in loaded.feed_order]
    loaded.model.run(feeds, outputs=[outputs[i] for i in loaded.output_order])
    return outputs, loaded
