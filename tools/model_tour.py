"""The model tour: each model family of issue 36, exported from torchvision / transformers with random weights,
loaded on the emulator with its dims open, run at two or three shapes and held against onnxruntime.

    python tools/model_tour.py [--only NAME ...] [--exporter dynamo|torchscript] [--cache DIR] [--device emu]
                               [--fold-limit BYTES] [--export-only] [--markdown FILE]

Families: torchvision's vit_b_16, swin_t, convnext_tiny, efficientnet_b0, regnet_y_400mf, googlenet (Inception
v1), alexnet, vgg19; transformers' bert_base (BertModel, BertConfig()), detr_resnet50 (DetrForObjectDetection,
``use_timm_backbone=False, use_pretrained_backbone=False``), whisper_tiny_encoder (WhisperEncoder at whisper-tiny's
sizes: it takes exactly 3000 mel frames) and whisper_tiny_encoder_var (the same layers, any length).

Needs: accel (the installed package, or ``PYTHONPATH`` at an overlay), onnx, onnxruntime and numpy. To export a
model that is not in the cache folder yet it also needs torch, torchvision, transformers and onnxscript (the
dynamo exporter's own dependency), for instance in a venv that sees the system's packages::

    python3 -m venv --system-site-packages /tmp/tour-venv
    /tmp/tour-venv/bin/pip install torch==2.13.0 torchvision transformers onnxscript
    PYTHONPATH=/tmp/x4 /tmp/tour-venv/bin/python tools/model_tour.py

(With torch's ``+cpu`` wheel, PyPI's CUDA-built torchvision cannot load its C ops; the tour declares the two op
schemas its import needs, see ``_import_torchvision``.)

Each family is exported once (``torch.onnx.export``, opset 18, a dynamic batch dim and, where the model has one, a
dynamic sequence, frame or image-size dim) into ``CACHE/EXPORTER/NAME.onnx`` (default /tmp/accel-model-tour) and
reused from there: the comparison runs from the cached ONNX files without torch. Weights are random, seeded (no
model hub is reached), with two changes that keep the outputs depending on the input: all-zero weight matrices
(ViT's head) are filled, and BatchNorm statistics are those of one random batch. The inputs are seeded too. The
emulator loads each file without shapes (``accel.open(device).load(path)``: compiled per input shape at run time)
and runs every shape of the family; onnxruntime (one thread) runs the same inputs. The table gives, per run, the
worst output's max |emulator - onnxruntime| and max |onnxruntime|, their ratio (the issue's bar: 1e-4), the
seconds the emulator's compile for that shape took, the run's seconds, and pass/FAIL, or the first line of the
error (``(export)`` or ``(load)`` in place of the shapes when that step failed). Exits 1 when a row is not a pass.

The compile cache is off by default (``ACCEL_CACHE_SIZE=0``, so the compile seconds are real and the tour's large
models do not evict the user's entries); ``--keep-compile-cache`` leaves the user's setting.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

#: The issue's bar for float models: the error within 1e-4 of the output's scale.
TOLERANCE = 1e-4
#: The opset the exporter is asked for (the issue asks for 17 or newer).
OPSET = 18
#: How an input is filled: "float" (normal), "ids:N" (int64 in [0, N)), "mask" (int64 ones, the last quarter of
#: each row zero), "zeros" (int64 zeros).
Fill = str


@dataclass
class Family:
    """One model to tour: how torch builds it (``build`` gives the module and example inputs by name; torch is
    imported inside it), how its inputs are filled, which dims are dynamic, and the input shapes to run."""

    name: str
    build: Callable[[], Tuple[Any, Dict[str, Any]]]
    fills: Dict[str, Fill]
    dynamic: Dict[str, Dict[int, str]]
    outputs: List[str]
    runs: List[Dict[str, Tuple[int, ...]]]
    note: str = ""


# -- builders (torch only inside them) --------------------------------------------------------------------------


_TORCHVISION_LIB: List[Any] = []


def _import_torchvision() -> Any:
    """torchvision, importable with a CPU-only torch: PyPI's Linux torchvision wheels are built against CUDA torch, so
    next to torch's ``+cpu`` wheel their C ops do not load and the import stops at registering a fake ``nms``. The
    models need none of those ops: declaring the two schemas it registers first lets the import go on."""
    import torch

    try:
        import torchvision
        return torchvision
    except RuntimeError as e:
        if "torchvision::nms" not in str(e):
            raise
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _TORCHVISION_LIB.append(lib)  # the library lives as long as the process
    import torchvision
    return torchvision


def _no_zero_weights(model: Any) -> Any:
    """Fills every all-zero weight matrix with N(0, 0.02): torchvision starts some heads at zero (ViT's), which makes
    the logits zero whatever the input and the comparison empty."""
    import torch

    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not bool(p.any()):
                p.normal_(0.0, 0.02)
    return model


def _calibrate_batchnorm(model: Any, example: Any) -> Any:
    """Sets each BatchNorm's running statistics to those of one random batch: with a fresh model's (mean 0, variance
    1) the activations of a deep CNN shrink layer by layer until the logits are their bias (GoogLeNet's, whatever the
    input) or about 1e-14 (EfficientNet's), and the comparison says little."""
    import torch

    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model
    for m in norms:
        m.momentum = 1.0  # the running statistics become this batch's
    with torch.no_grad():
        model.train()(example)
    return model.eval()


def _vision(ctor_name: str, size: int = 224) -> Callable[[], Tuple[Any, Dict[str, Any]]]:
    def build() -> Tuple[Any, Dict[str, Any]]:
        import torch

        torchvision = _import_torchvision()
        torch.manual_seed(0)
        kwargs: Dict[str, Any] = {"weights": None}
        if ctor_name == "googlenet":  # no aux heads at inference; init_weights spelled out (torchvision warns)
            kwargs.update(aux_logits=False, init_weights=True)
        if ctor_name == "inception_v3":
            kwargs.update(aux_logits=False, init_weights=True)
        model = _no_zero_weights(getattr(torchvision.models, ctor_name)(**kwargs).eval())
        _calibrate_batchnorm(model, torch.randn(8, 3, size, size))
        # batch 2 in the example: torch.export takes a dim of size 1 for a constant
        return model, {"x": torch.randn(2, 3, size, size)}
    return build


def _bert() -> Tuple[Any, Dict[str, Any]]:
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = _no_zero_weights(BertModel(BertConfig()).eval())

    class Bert(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state, out.pooler_output

    ids = torch.randint(0, 30522, (2, 16))
    return Bert().eval(), {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                           "token_type_ids": torch.zeros_like(ids)}


def _detr() -> Tuple[Any, Dict[str, Any]]:
    import torch
    from transformers import DetrConfig, DetrForObjectDetection

    torch.manual_seed(0)
    config = DetrConfig(use_timm_backbone=False, use_pretrained_backbone=False)
    model = _no_zero_weights(DetrForObjectDetection(config).eval())
    _calibrate_batchnorm(model, torch.randn(4, 3, 224, 224))

    class Detr(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.detr = model

        def forward(self, pixel_values):  # type: ignore[no-untyped-def]
            out = self.detr(pixel_values=pixel_values)
            return out.logits, out.pred_boxes

    return Detr().eval(), {"pixel_values": torch.randn(2, 3, 224, 224)}


def _whisper(variable_length: bool) -> Callable[[], Tuple[Any, Dict[str, Any]]]:
    def build() -> Tuple[Any, Dict[str, Any]]:
        import torch
        from transformers import WhisperConfig
        from transformers.models.whisper.modeling_whisper import WhisperEncoder

        torch.manual_seed(0)
        # whisper-tiny's sizes (openai/whisper-tiny's config.json)
        config = WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6, encoder_ffn_dim=1536,
                               decoder_layers=4, decoder_attention_heads=6, decoder_ffn_dim=1536, num_mel_bins=80,
                               max_source_positions=1500)
        encoder = _no_zero_weights(WhisperEncoder(config).eval())

        class Encoder(torch.nn.Module):
            """transformers' WhisperEncoder takes exactly 3000 mel frames; the variable-length form runs the same
            layers on any even length up to 3000, its positions cut to the length (what whisper.cpp does)."""

            def __init__(self) -> None:
                super().__init__()
                self.encoder = encoder

            def forward(self, input_features):  # type: ignore[no-untyped-def]
                if not variable_length:
                    return self.encoder(input_features).last_hidden_state
                enc = self.encoder
                h = torch.nn.functional.gelu(enc.conv1(input_features))
                h = torch.nn.functional.gelu(enc.conv2(h)).permute(0, 2, 1)
                h = h + enc.embed_positions.weight[: h.shape[1]]
                for layer in enc.layers:
                    h = layer(h, None)
                    h = h[0] if isinstance(h, tuple) else h
                return enc.layer_norm(h)

        frames = 400 if variable_length else 3000
        return Encoder().eval(), {"input_features": torch.randn(2, 80, frames)}
    return build


def _image_family(name: str, ctor: str, size: int = 224, note: str = "") -> Family:
    return Family(name, _vision(ctor, size), {"x": "float"}, {"x": {0: "batch"}}, ["logits"],
                  [{"x": (1, 3, size, size)}, {"x": (2, 3, size, size)}], note)


FAMILIES: List[Family] = [
    _image_family("vit_b_16", "vit_b_16"),
    _image_family("swin_t", "swin_t"),
    _image_family("convnext_tiny", "convnext_tiny"),
    _image_family("efficientnet_b0", "efficientnet_b0"),
    _image_family("regnet_y_400mf", "regnet_y_400mf"),
    _image_family("googlenet", "googlenet"),
    _image_family("alexnet", "alexnet"),
    _image_family("vgg19", "vgg19"),
    Family("bert_base", _bert, {"input_ids": "ids:30522", "attention_mask": "mask", "token_type_ids": "zeros"},
           {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "token_type_ids")},
           ["last_hidden_state", "pooler_output"],
           [dict.fromkeys(("input_ids", "attention_mask", "token_type_ids"), s) for s in [(1, 16), (2, 16), (2, 40)]]),
    Family("detr_resnet50", _detr, {"pixel_values": "float"}, {"pixel_values": {0: "batch", 2: "height", 3: "width"}},
           ["logits", "pred_boxes"], [{"pixel_values": (1, 3, 224, 224)}, {"pixel_values": (2, 3, 224, 224)},
                                      {"pixel_values": (1, 3, 256, 320)}]),
    Family("whisper_tiny_encoder", _whisper(False), {"input_features": "float"},
           {"input_features": {0: "batch"}}, ["last_hidden_state"],
           [{"input_features": (1, 80, 3000)}, {"input_features": (2, 80, 3000)}],
           "transformers' WhisperEncoder refuses any length but 3000 frames"),
    Family("whisper_tiny_encoder_var", _whisper(True), {"input_features": "float"},
           {"input_features": {0: "batch", 2: "frames"}}, ["last_hidden_state"],
           [{"input_features": (1, 80, 400)}, {"input_features": (2, 80, 400)}, {"input_features": (1, 80, 1000)}],
           "WhisperEncoder's layers run on any length, the positions cut to it (not transformers' forward)"),
]


# -- export ----------------------------------------------------------------------------------------------------


def export(family: Family, path: Path, exporter: str) -> None:
    """Exports ``family`` to ``path`` with torch.onnx.export (the only place torch is used)."""
    import torch

    # nn.MultiheadAttention's inference fast path is one aten op the TorchScript exporter cannot write (ViT's)
    torch.backends.mha.set_fastpath_enabled(False)
    _import_torchvision()  # transformers imports torchvision too, where it is installed
    module, example = family.build()
    names = list(example)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.onnx")
    with torch.no_grad():
        torch.onnx.export(module, tuple(example[n] for n in names), str(tmp), input_names=names,
                          output_names=family.outputs, dynamic_axes=family.dynamic, opset_version=OPSET,
                          dynamo=(exporter == "dynamo"), external_data=False)
    os.replace(tmp, path)


# -- comparison ------------------------------------------------------------------------------------------------


def make_inputs(family: Family, shapes: Dict[str, Tuple[int, ...]], seed: int) -> Dict[str, np.ndarray]:
    """Seeded random inputs of ``shapes``, each filled as the family says."""
    rng = np.random.default_rng(seed)
    feeds: Dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        fill = family.fills[name]
        if fill == "float":
            feeds[name] = rng.standard_normal(shape).astype(np.float32)
        elif fill.startswith("ids:"):
            feeds[name] = rng.integers(0, int(fill[4:]), size=shape, dtype=np.int64)
        elif fill == "mask":
            mask = np.ones(shape, np.int64)
            mask[..., shape[-1] - shape[-1] // 4:] = 0
            feeds[name] = mask
        elif fill == "zeros":
            feeds[name] = np.zeros(shape, np.int64)
        else:
            raise ValueError(f"unknown fill {fill!r} for input {name!r}")
    return feeds


@dataclass
class Row:
    model: str
    shapes: str
    ratio: Optional[float] = None
    err: Optional[float] = None
    scale: Optional[float] = None
    compile_s: Optional[float] = None
    run_s: Optional[float] = None
    status: str = ""


def _shape_text(shapes: Dict[str, Tuple[int, ...]]) -> str:
    seen: List[str] = []
    for s in shapes.values():
        text = "x".join(str(d) for d in s)
        if text not in seen:
            seen.append(text)
    return ",".join(seen)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def compare(family: Family, path: Path, device: str, fold_limit: Optional[int]) -> List[Row]:
    """Loads ``path`` on ``device`` without shapes and on onnxruntime, runs each of the family's shapes on both,
    and gives one row per shape."""
    import onnxruntime as ort

    import accel

    rows: List[Row] = []
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    with accel.open(device) as dev:
        try:
            model = dev.load(str(path), fold_limit=fold_limit)
        except Exception as e:  # the load itself refused: one row saying why
            return [Row(family.name, "(load)", status=_first_line(e))]
        try:
            session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # nothing to compare with
            return [Row(family.name, "(load)", status="onnxruntime: " + _first_line(e))]
        for i, shapes in enumerate(family.runs):
            row = Row(family.name, _shape_text(shapes))
            rows.append(row)
            feeds = make_inputs(family, shapes, seed=i)
            try:
                want = session.run(None, feeds)
            except Exception as e:
                row.status = "onnxruntime: " + _first_line(e)
                continue
            try:
                before = len(getattr(model, "compiled", []))
                start = time.perf_counter()
                got = model.run(feeds)
                took = time.perf_counter() - start
                compiled = getattr(model, "compiled", [])
                row.compile_s = compiled[-1].seconds if len(compiled) > before else 0.0
                row.run_s = took - row.compile_s
                worst = (-1.0, 0.0, 0.0)
                for g, w in zip(got, want):
                    g = np.asarray(g)
                    if g.shape != w.shape:
                        raise AssertionError(f"output shape {g.shape}, onnxruntime's {w.shape}")
                    err = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
                    scale = float(np.max(np.abs(w))) if w.size else 0.0
                    ratio = err / scale if scale else (0.0 if err == 0 else float("inf"))
                    if not np.isfinite(err):
                        ratio = float("inf")
                    if ratio > worst[0]:
                        worst = (ratio, err, scale)
                row.ratio, row.err, row.scale = worst
                row.status = "pass" if row.ratio <= TOLERANCE and row.scale else "FAIL"
                if not row.scale:
                    row.status = "FAIL: onnxruntime's outputs are all zero (nothing compared)"
            except Exception as e:
                row.status = _first_line(e)
    return rows


def _fmt(v: Optional[float], spec: str) -> str:
    return "" if v is None else format(v, spec)


def print_table(rows: Sequence[Row], out: Any = None, header: bool = True) -> None:
    out = out or sys.stdout
    if header:
        print("| model | input shapes | max abs err / max abs out | ratio | compile s | run s | result |", file=out)
        print("| --- | --- | --- | --- | --- | --- | --- |", file=out)
    for r in rows:
        print(_line(r), file=out, flush=True)


def _line(r: Row) -> str:
    errs = "" if r.err is None else f"{r.err:.3g} / {r.scale:.3g}"
    return (f"| {r.model} | {r.shapes} | {errs} | {_fmt(r.ratio, '.2e')} | {_fmt(r.compile_s, '.1f')} | "
            f"{_fmt(r.run_s, '.2f')} | {r.status} |")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", metavar="NAME",
                    help=f"run only this family (repeatable): {', '.join(f.name for f in FAMILIES)}")
    ap.add_argument("--cache", default="/tmp/accel-model-tour", help="the folder of the exported ONNX files")
    ap.add_argument("--device", default="emu", help="the accel device URI (default emu)")
    ap.add_argument("--exporter", choices=("dynamo", "torchscript"), default="dynamo",
                    help="torch.onnx.export's exporter (default dynamo, torch's default); each has its own files")
    ap.add_argument("--fold-limit", type=int, default=None, help="Device.load's fold_limit, in bytes")
    ap.add_argument("--export-only", action="store_true", help="export the missing ONNX files and stop")
    ap.add_argument("--keep-compile-cache", action="store_true",
                    help="use accel's compile cache as set (default: off, so compile times are real)")
    ap.add_argument("--markdown", default=None, help="also write the table to this file")
    args = ap.parse_args(argv)
    if not args.keep_compile_cache:
        os.environ["ACCEL_CACHE_SIZE"] = "0"
    known = {f.name: f for f in FAMILIES}
    unknown = [n for n in args.only or [] if n not in known]
    if unknown:
        ap.error(f"unknown family {unknown[0]!r}: one of {', '.join(known)}")
    chosen = [known[n] for n in args.only] if args.only else FAMILIES
    rows: List[Row] = []
    print_table([])
    for family in chosen:
        path = Path(args.cache) / args.exporter / f"{family.name}.onnx"
        if not path.exists():
            try:
                start = time.perf_counter()
                export(family, path, args.exporter)
                print(f"# exported {family.name} to {path} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
            except Exception as e:
                traceback.print_exc(file=sys.stderr)
                rows.append(Row(family.name, "(export)", status=_first_line(e)))
                print_table(rows[-1:], header=False)
                continue
        if args.export_only:
            continue
        got = compare(family, path, args.device, args.fold_limit)
        rows.extend(got)
        print_table(got, header=False)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            print_table(rows, f)
    for family in chosen:
        if family.note:
            print(f"# {family.name}: {family.note}")
    failed = [r for r in rows if r.status != "pass"]
    print(f"# {len(rows) - len(failed)} passed, {len(failed)} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
