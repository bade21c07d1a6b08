"""What a model front end is: a format that reaches a device by being turned into the one its driver loads (ONNX
through accel's compiler into ``.accm``). The registry Device.load chooses from is this package
(``accel.front_ends``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import compile_cache

__all__ = ["ALL_OPTIONS", "FrontEnd", "LoadRequest", "LoadNative"]

#: Device.load's options a front end may take (FrontEnd.options).
ALL_OPTIONS = ("input_shapes", "extra_outputs", "image_inputs", "source", "dequantized", "fold_limit")

#: The device's own load of bytes in its format: returns the core's model.
LoadNative = Callable[[Any], Any]


@dataclass(frozen=True)
class LoadRequest:
    """One Device.load call as a front end sees it: the file's bytes and the options, already normalized."""

    data: Any                        # bytes, or any buffer of the file's bytes
    what: str                        # how messages name it: "'model.onnx'" or "the model bytes"
    path: Optional[str]              # the file's path, or None for bytes
    input_shapes: Optional[Mapping[str, Sequence[int]]]  # as given: the front end normalizes it
    extra_outputs: compile_cache.ExtraOutputs
    image_inputs: compile_cache.ImageInputs
    int8_rules: Optional[str]        # the device's (DeviceCapabilities.int8_rules)
    subgraph: Optional[str] = None   # the subgraph to run, by name (a front end with ``subgraphs``)
    source: Optional[str] = None     # the path of the model the file was made from (a Horizon .bin's ONNX)
    dequantized: bool = False        # the model's float counterpart (accel.compiler.dequantize), not the model
    fold_limit: Optional[int] = None  # bytes one folded node may compute at compile time (None: the compiler's)

    def file_bytes(self) -> bytes:
        """The file's bytes as one bytes object (``data`` as it is when it is one, else a copy of the buffer)."""
        data = self.data
        return data if isinstance(data, bytes) else bytes(memoryview(data).cast("B"))


@dataclass(frozen=True)
class FrontEnd:
    """A model format a device takes through a conversion.

    Attributes:
        name: the format as messages name it (``"ONNX"``).
        suffixes: its files' suffixes, lower case (``(".onnx",)``).
        produces: the ``DeviceCapabilities.model_format`` it turns models into: the devices it serves.
        claims: ``claims(head, suffix)``: whether a file whose first bytes are ``head`` (up to 16) and whose
            lower-case suffix is ``suffix`` (``""`` for bytes) is of this format.
        load: ``load(request, load_native) -> (core model, extra output count)``: converts the file and loads
            the result through ``load_native``.
        options: which of Device.load's ``input_shapes``, ``extra_outputs``, ``image_inputs``, ``source``,
            ``dequantized`` and ``fold_limit`` it takes (ALL_OPTIONS); Device.load refuses the others by name.
        describe: ``describe(data) -> dict``: what a file of the format holds, as ``accel info MODEL`` prints it
            (plain values: str, int, lists and dicts of them); None where the front end says nothing.
        subgraphs: whether its files hold several runnable subgraphs, one chosen by ``LoadRequest.subgraph``.
        int8_rules: the int8 rules its models compute with, which the device must compute with (a DPU's
            ``"dpu"``) unless the load is ``dequantized``; None where the device's own are taken.
        signature: ``signature(data) -> (inputs, outputs)``, each a tuple of ``(name, numpy dtype, dims)`` with a
            dim an int, a symbol's name or None: the interface the file declares, for a format whose files may
            leave input dims to run time (Device.load then compiles per set of input shapes:
            ``accel.runtime.dynamic_model``); None where files have fixed shapes.
        tensor_order: ``tensor_order(data, subgraph) -> names``: the tensors a load with ``extra_outputs="all"``
            gives (and its inputs), in graph order, the order ``accel compare`` lists them in; None where the
            front end does not say (ONNX's graph says it).
    """

    name: str
    suffixes: Tuple[str, ...]
    produces: str
    claims: Callable[[bytes, str], bool]
    load: Callable[[LoadRequest, LoadNative], Tuple[Any, int]]
    options: Tuple[str, ...] = ALL_OPTIONS
    describe: Optional[Callable[[bytes], Dict[str, Any]]] = None
    subgraphs: bool = False
    tensor_order: Optional[Callable[[bytes, Optional[str]], List[str]]] = None
    int8_rules: Optional[str] = None
    signature: Optional[Callable[[bytes], Tuple[Any, Any]]] = None
