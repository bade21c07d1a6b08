"""Rows read from files where they are used: a ``FilePredictor`` is a :class:`~accel.ray.Predictor` whose batches
hold only row indices (a column ``index``), and which reads each input's rows itself, from a ``.npy`` array (rows
along its first axis, mapped, not loaded) or from a list of picture files.

So the driver ships row numbers, not data, and no step runs before the actors (a task step would need CPUs a full
pool of actors holds). The files must be readable at the same path on every node that runs an actor: on one
machine they are; on a cluster, a shared file system (docs/ray.md). This is what ``accel batch`` runs.

Pictures are read by accel.image's one reader (``read_image``: Pillow, a pixel limit checked from the header before
decoding, resized to the input's frame size with the bilinear filter, errors naming the file) and converted to the
frame format the input takes (``accel.image.to_frame``, full range): the model's image input (its own, or one given
with ``image_inputs``) does the rest (BT.601, mean, scale). docs/ray.md, docs/image-inputs.md.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .._wording import counted
from .predictor import Predictor

__all__ = ["ArrayRows", "PictureRows", "Source", "Given", "FilePredictor", "INDEX", "assign", "picture_files"]

#: The column of row indices a FilePredictor's batches carry.
INDEX = "index"


class ArrayRows:
    """The rows of a ``.npy`` array (its first axis), mapped read-only when first asked for."""

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None:
        self.path = os.fspath(path)
        self._array: Optional[np.ndarray] = None

    def array(self) -> np.ndarray:
        if self._array is None:
            self._array = np.load(self.path, mmap_mode="r", allow_pickle=False)
        return self._array

    def __len__(self) -> int:
        return int(self.array().shape[0]) if self.array().ndim else 0

    def rows(self, indices: np.ndarray, info: Any) -> List[np.ndarray]:
        return [self.array()[indices]]

    def __getstate__(self) -> Dict[str, Any]:  # shipped to actors as its path: each maps the file itself
        return {"path": self.path, "_array": None}


class PictureRows:
    """Picture files, a row each: decoded into the frame of the image input they feed, by accel.image's one
    reader (``read_image``: at most ``max_pixels`` pixels a picture, checked before decoding)."""

    def __init__(self, paths: Sequence[Union[str, os.PathLike[str]]], max_pixels: Optional[int] = None) -> None:
        from ..image import MAX_PIXELS

        self.paths = [os.fspath(p) for p in paths]
        self.max_pixels = MAX_PIXELS if max_pixels is None else max_pixels

    def __len__(self) -> int:
        return len(self.paths)

    def rows(self, indices: np.ndarray, info: Any) -> List[np.ndarray]:
        """The frames of the rows ``indices`` for the image input ``info``: one array, or the y and uv planes
        of an NV12 pair (``info`` its y plane). InvalidArgumentError naming the row and its file for a picture
        that cannot be read."""
        from ..errors import InvalidArgumentError
        from ..image import read_image, to_frame

        image = info.image
        if image is None:
            raise ValueError(f"input {info.name!r} ({info.dtype}{list(info.shape)}) is not an image input: pictures "
                             f"feed only an image input (for an ONNX model, give it one with image_inputs, or "
                             f"accel batch's --image-input)")
        frames: List[Any] = []
        for i in indices:
            path = self.paths[int(i)]
            try:
                bgr = read_image(path, (image.width, image.height), max_pixels=self.max_pixels)
            except (OSError, ValueError) as e:  # read_image names the file: the row is said here
                raise InvalidArgumentError(f"row {int(i)}: {e}") from None
            frames.append(to_frame(bgr, image.format))
        if isinstance(frames[0], tuple):
            return [np.stack([f[0] for f in frames]), np.stack([f[1] for f in frames])]
        return [np.stack(frames)]


Source = Union[ArrayRows, PictureRows]
#: Sources as given: (input name, or None for the next input not named, the source).
Given = Sequence[Tuple[Optional[str], Source]]


class FilePredictor(Predictor):
    """A Predictor that reads its inputs' rows from files. ``sources``: ``(input name, source)`` pairs, a source an
    :class:`ArrayRows` or a :class:`PictureRows`, the name None for the next input not named (in the model's
    order; an NV12 pair of planes is one input, named by its y plane). A batch is ``{"index": row indices}``
    (other columns pass through). The other keywords are Predictor's, ``inputs`` excepted."""

    def __init__(self, model: Any, sources: Given, **predictor_args: Any) -> None:
        super().__init__(model, **predictor_args)
        self.feeds = assign(list(self.model.inputs), sources)

    def __call__(self, batch: Mapping[str, Any]) -> Dict[str, Any]:
        indices = np.asarray(batch[INDEX])
        columns: Dict[str, Any] = {}
        for names, source, info in self.feeds:
            columns.update(zip(names, source.rows(indices, info)))
        out = super().__call__({**columns, **batch})
        for name in columns:
            del out[name]
        return out


def assign(infos: Sequence[Any], sources: Given) -> List[Tuple[List[str], Source, Any]]:
    """``(the inputs it fills, source, the first one's TensorInfo)`` for each source: named ones by name, the others
    filling the inputs left in order; an NV12 y plane takes its uv plane (the input after it) with it. ValueError
    for an unknown name, too many sources or an input left without one."""
    names = [i.name for i in infos]
    plane_pairs = {i.name: infos[k + 1].name for k, i in enumerate(infos[:-1])
                   if i.image is not None and i.image.format == "nv12_y"}
    units = [i for i in infos if i.name not in plane_pairs.values()]
    chosen: Dict[str, Source] = {}
    for name, source in sources:
        if name is not None:
            if name not in names:
                raise ValueError(f"the model has no input {name!r} (its inputs: {', '.join(names)})")
            chosen[name] = source
    for name, source in sources:
        if name is None:
            free = [i.name for i in units if i.name not in chosen]
            if not free:
                raise ValueError(f"{counted(len(sources), 'input')} given; the model takes {len(units)}: "
                                 f"{', '.join(names)}")
            chosen[free[0]] = source
    missing = [i.name for i in units if i.name not in chosen]
    if missing:
        raise ValueError(f"no rows given for input {missing[0]!r} (the model's inputs: {', '.join(names)})")
    by_name = {i.name: i for i in infos}
    return [([n] + ([plane_pairs[n]] if n in plane_pairs else []), s, by_name[n]) for n, s in chosen.items()]


def picture_files(folder: Union[str, os.PathLike[str]]) -> List[Path]:
    """The picture files under ``folder`` (any depth), sorted by their path relative to it."""
    from ..image import IMAGE_SUFFIXES

    root = Path(folder)
    return sorted((p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES),
                  key=lambda p: p.relative_to(root).as_posix())
