"""``accel.Device``: an opened accelerator (or the emulator), and ``DeviceInfo``.

The runtime's device (accel/runtime/device.py: its state and memory, what models refer to) with what sits above the
runtime: loading models (accel/runtime/loading.py) and the ops (accel/ops/)."""
from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Sequence, Union

from .ops import FusionScope, Ops
from .runtime import loading
from .runtime.device import DeviceInfo, RuntimeDevice
from .runtime.loading import PathOrBytes
from .runtime.model import Model

__all__ = ["Device", "DeviceInfo"]


class Device(RuntimeDevice):
    """An opened device (``accel.open(uri)``); a context manager that closes it on exit.

    It makes tensors in device memory (:meth:`empty`, :meth:`tensor`), loads models (:meth:`load`), runs
    operators (:attr:`ops`, :meth:`fusion_scope`) and reports memory and job counters (:meth:`stats`). After
    :meth:`close`, every method of the device and of its models raises :class:`~accel.ClosedError`; arrays and
    DeviceTensors made earlier stay valid.
    """

    def __init__(self, uri: str = "emu") -> None:
        """Opens the device at ``uri`` (see :func:`accel.open`)."""
        self._ops: Optional[Ops] = None
        super().__init__(uri)

    # -- models ----------------------------------------------------------------------------------------

    def load(self, path_or_bytes: PathOrBytes,
             input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
             extra_outputs: Union[str, Sequence[str], None] = None,
             image_inputs: Optional[Mapping[str, Any]] = None, *, subgraph: Optional[str] = None,
             source: Optional[Union[str, os.PathLike[str]]] = None, dequantized: bool = False,
             shapes: Optional[Sequence[Mapping[str, Sequence[int]]]] = None, pad: bool = False,
             fold_limit: Optional[int] = None) -> Model:
        """Loads a model on the device.

        Args:
            path_or_bytes: a path (str or PathLike) or the model's bytes (bytes, bytearray, memoryview
                or any buffer). Formats: the one the device loads (:attr:`capabilities`: the emulator's
                ``.accm``; ``.hbm``/``.bin`` on BPU, ``.xmodel`` on VART), and those a front end of
                ``accel.front_ends`` turns into it, chosen by the device's format and the file's: ONNX on a device
                that loads ``.accm`` (the emulator), compiled on the fly with ``accel.compiler`` and cached (see
                ``accel.compile_cache``).
            input_shapes: for ONNX only: ``{input name: shape}`` fixing symbolic or overriding dims.
            extra_outputs: for ONNX only: intermediate tensors to keep as outputs after the model's own, a
                list of ONNX tensor names (in that order) or ``"all"`` (every tensor the model computes at run
                time, in graph order). ``model.outputs`` names them; a quantized model gives its int8 tensors
                with their quantization (``TensorInfo.quant``), or the float value where a DequantizeLinear
                output is named. Asking never changes what the model computes: a float tensor that exists only
                inside a fused int8 op cannot be given. See docs/find-the-layer.md.
            image_inputs: for ONNX only: camera frames in place of float image inputs, ``{"images": {"format":
                "nv12", "to": "rgb", "mean": [...], "scale": [...], "range": "full"}}`` (formats ``nv12``,
                ``nv12_planes`` (two inputs, ``images_y`` and ``images_uv``), ``y``, ``yuv444``, ``rgb``, ``bgr``):
                the model takes the frame as uint8 (``TensorInfo.image`` says its layout) and converts it to the
                channel order ``to`` with BT.601, then feeds ``(pixel - mean) * scale``, as Horizon's toolchain
                compiles an NV12 model. See docs/image-inputs.md.
            subgraph: for a Vitis AI ``.xmodel`` (on ``vart``, or the emulator): the name of the DPU subgraph to
                run, for a file with several (VART makes one runner per subgraph); by default the only one. A device
                that cannot choose (``capabilities.loads_subgraph`` false) raises UnsupportedError. See
                docs/xmodel.md.
            source: for a Horizon RDK ``.bin`` on the emulator: the ONNX it was made from (by default hb_mapper's
                ``<name>_calibrated_model.onnx`` next to it), run behind exactly the ``.bin``'s interface (its BPU part
                has no public description and is not emulated). See docs/horizon-bin.md.
            dequantized: a quantized model's float counterpart, on the emulator: every activation in float, the
                weights the real values of their integers, a quantized input or output given as its real values
                under its name (``accel.dequantize`` of what the model takes). The float run a deployed int8 model
                (a QDQ ONNX, a ``.xmodel``, a ``.bin``) is held against when its float model is not at hand
                (``accel shim --compare``); any emulator device loads it, whatever its int8 rules. A model in
                onnxruntime's operator form (QLinearConv, MatMulInteger, ...) has none: UnsupportedError naming
                its nodes. See docs/quantization.md.
            shapes, pad: for an ONNX model whose input dims are set at run time (symbolic dims that
                ``input_shapes`` leaves open): the model loads at once and compiles for each set of input shapes
                the runs bring, the first time each comes (``Model.compiled`` lists them with their compile
                times; ``TensorInfo.shape`` has -1 and ``TensorInfo.symbols`` the name where a dim is open).
                ``shapes`` (a list of ``{input name: shape}``) compiles those now; with ``pad=True`` a run is padded
                with zeros up to the smallest of them that holds it, and its outputs cut back (shape buckets,
                as for a static NPU). Not with ``extra_outputs`` or ``image_inputs``, which need fixed shapes.
            fold_limit: the bytes one constant-folded node may compute while the model compiles (default
                ``accel.compiler.FOLD_LIMIT_BYTES``, 256 MiB): raise it for a model whose compile says a node is past
                it (a large weight made by ConstantOfShape, say).

        Raises:
            FileNotFoundError: no file at the path (the message names it). ModelFormatError: not a valid
            model. UnsupportedError: ONNX on a device that does not load ``.accm`` (a board), or an op the
            emulator lacks. ValueError: ``input_shapes``, ``extra_outputs`` or ``image_inputs`` for a model that is not
            ONNX, a bad input shape, an extra output the model cannot give (InvalidArgumentError naming it and the
            nearest names), or an image input it cannot take.
            ClosedError: the device is closed.
        """
        return loading.load(self, path_or_bytes, input_shapes, extra_outputs, image_inputs, subgraph, source,
                            dequantized, shapes, pad, fold_limit)

    # -- ops -------------------------------------------------------------------------------------------

    @property
    def ops(self) -> Ops:
        """The device's operators (torch.nn.functional's names and arguments), each call one job:
        ``dev.ops.conv2d(x, w, b, padding=1)``; inside :meth:`fusion_scope` they are recorded instead.
        Emulator only: on other backends every op raises UnsupportedError. See docs/python-api.md."""
        ops = self._ops
        if ops is None:
            with self._lock:
                if self._ops is None:
                    self._ops = Ops(self)
                ops = self._ops
        return ops

    def fusion_scope(self) -> FusionScope:
        """A context manager recording the ops called on this device in this thread, then compiling them
        into one model run as one job when the block ends; results inside are :class:`~accel.PendingTensor`.
        Results still referenced at the end are the fused model's outputs. Emulator only."""
        return self.ops._fusion_scope()
