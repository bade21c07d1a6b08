"""onnxruntime.InferenceSession over accel: the model runs on the process's shared accel device
(``session.device()``), loaded with ``Device.load``; what the session reports about the model (inputs, outputs,
metadata) comes from the ONNX file (graph.py), and its feeds are checked as onnxruntime checks them, with its
exception classes and messages, before accel sees them.

Symbolic dims: accel compiles static shapes only. A model whose inputs are all static (or fixed by the session
options' free dimension overrides) loads when the session is made, as onnxruntime's does; one with symbolic dims
loads at its first run with the shapes the feed brings, once per distinct set of shapes (and from accel's compile
cache after that)."""
from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .. import session
from . import errors, feeds, graph, not_covered
from . import providers as eps
from .options import RunOptions, SessionOptions

__all__ = ["InferenceSession", "Session"]

_NOT_COVERED = not_covered.DOCS


class InferenceSession:
    """onnxruntime.InferenceSession(path_or_bytes, sess_options=None, providers=None, provider_options=None)."""

    def __init__(self, path_or_bytes: Any, sess_options: Optional[SessionOptions] = None,
                 providers: Any = None, provider_options: Any = None, **kwargs: Any) -> None:
        # kwargs (enable_fallback, read_config_from_model, disabled_optimizers) change nothing on accel.
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path: Optional[str] = os.fspath(path_or_bytes)
            self._model_bytes: Optional[bytes] = None
        elif isinstance(path_or_bytes, bytes):
            self._model_path, self._model_bytes = None, path_or_bytes
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise TypeError(f"sess_options must be an onnxruntime.SessionOptions, not {type(sess_options).__name__}")
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        if self._sess_options.initializers:
            names = ", ".join(self._sess_options.initializers)
            raise errors.NotImplemented(f"SessionOptions.add_initializer ({names}) {_NOT_COVERED}: accel compiles "
                                        "initializers into the model")
        try:
            self.set_providers(providers, provider_options)
        except ValueError as e:
            if str(kwargs.get("enable_fallback", 1)) != "1":
                raise
            # onnxruntime falls back to the CPU provider for bad provider arguments, saying so on stdout.
            print(f"EP Error {e} when using {providers}\nFalling back to ['{eps.CPU}'] and retrying.")
            self.set_providers([eps.CPU])
        self._what = self._model_path or "the model's bytes"
        self._sig = graph.read(self._model_bytes, self._model_path)
        self._dims = {a.name: feeds.resolved(self._sig.dims[a.name], self._sig.denotations[a.name], self._sess_options)
                      for a in self._sig.inputs}
        self._sig.inputs = [self._shown(a) for a in self._sig.inputs]
        self._outputs = {a.name for a in self._sig.outputs}
        eps.say_device(self._providers)
        if self._sess_options.custom_ops_libraries:
            session.say_once("ort-custom-ops", "custom op libraries are not loaded: accel runs the ops its compiler "
                                               "knows")
        # The inputs whose every dim is known (the file's, or fixed by a free dimension override) are given to the
        # load where an override changed them or other inputs are left open; the dims left open are set at run
        # time (accel's DynamicModel compiles per set of input shapes, as onnxruntime's session runs any).
        static = {n: tuple(x for x in d if x is not None) for n, d in self._dims.items()
                  if d is not None and None not in d}
        overridden = any(list(shape) != self._sig.dims[n] for n, shape in static.items())
        self._model = self._load(static if overridden or len(static) < len(self._dims) else None)
        if any(-1 in t.shape for t in self._model.inputs):
            session.say_once("ort-symbolic", f"{self._what} has symbolic dims: accel compiles it for each set of "
                                             f"input shapes a run brings (cached)")

    # -- what the session says about its model ---------------------------------------------------------------

    def get_inputs(self) -> List[graph.NodeArg]:
        return list(self._sig.inputs)

    def get_outputs(self) -> List[graph.NodeArg]:
        return list(self._sig.outputs)

    def get_overridable_initializers(self) -> List[graph.NodeArg]:
        return list(self._sig.overridable)

    def get_modelmeta(self) -> graph.ModelMetadata:
        return self._sig.meta

    def get_providers(self) -> List[str]:
        return list(self._providers)

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {name: dict(options) for name, options in zip(self._providers, self._provider_options)}

    def get_session_options(self) -> SessionOptions:
        return self._sess_options

    def set_providers(self, providers: Any = None, provider_options: Any = None) -> None:
        """Records the providers as onnxruntime would register them; the session stays on accel's device."""
        self._providers, self._provider_options = eps.normalize(providers, provider_options)

    def enable_fallback(self) -> None:
        """Nothing to fall back from: every session runs on accel's device."""

    def disable_fallback(self) -> None:
        """Nothing to fall back from: every session runs on accel's device."""

    def end_profiling(self) -> str:
        """No onnxruntime profile is written (accel's per-layer trace is accel.profile's); returns ""."""
        return ""

    def get_profiling_start_time_ns(self) -> int:
        return 0

    def io_binding(self) -> Any:
        raise errors.NotImplemented(f"InferenceSession.io_binding {_NOT_COVERED}: pass NumPy arrays to run()")

    def run_with_ort_values(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.NotImplemented(f"InferenceSession.run_with_ort_values {_NOT_COVERED}: pass NumPy arrays "
                                    "to run()")

    def run_with_iobinding(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.NotImplemented(f"InferenceSession.run_with_iobinding {_NOT_COVERED}: pass NumPy arrays to run()")

    # -- running ---------------------------------------------------------------------------------------------

    def run(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
            run_options: Optional[RunOptions] = None) -> List[np.ndarray]:
        """The outputs named (None or []: all, in the model's order) as NumPy arrays, for the feed
        ``{input name: array}``. Raises ValueError for a missing input, InvalidArgument for an unknown name,
        a wrong dtype, rank or dim, Fail when ``run_options.terminate`` is set, and the translation of accel's
        error (errors.from_accel) when the run fails."""
        names, feed, model = self._prepare(output_names, input_feed, run_options)
        try:
            outs = model.run(feed)
        except Exception as e:  # noqa: BLE001 (accel's errors, as onnxruntime's)
            raise errors.from_accel(e, f"running {self._what}") from e
        return self._results(model, outs, names)

    def run_async(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
                  callback: Callable[[List[np.ndarray], Any, str], None], user_data: Any,
                  run_options: Optional[RunOptions] = None) -> None:
        """Submits one run and returns None at once; ``callback(results, user_data, err)`` is called on another
        thread with the outputs and "" when it is done, or with [] and onnxruntime's message for a failed run
        (a wrong dtype or shape included, as onnxruntime reports them there). A missing input raises ValueError
        here, as onnxruntime's does."""
        feeds.check_missing(self._sig.inputs, input_feed)
        caller = threading.get_ident()

        def deliver(results: List[np.ndarray], err: str) -> None:
            if threading.get_ident() == caller:  # a run already over: onnxruntime never calls back inline
                threading.Thread(target=callback, args=(results, user_data, err), daemon=True).start()
            else:
                callback(results, user_data, err)

        try:
            names, feed, model = self._prepare(output_names, input_feed, run_options)
            future = model.run_async(feed)
        except errors.OrtError as e:
            deliver([], e.detail)
            return
        except Exception as e:  # noqa: BLE001 (accel's errors, as onnxruntime's)
            deliver([], errors.from_accel(e, f"running {self._what}").detail)
            return

        def done(f: Any) -> None:
            try:
                results = self._results(model, f.result(), names)
            except Exception as e:  # noqa: BLE001 (the job's error goes to the callback, as onnxruntime's)
                deliver([], errors.from_accel(e, f"running {self._what}").detail)
            else:
                deliver(results, "")

        future.add_done_callback(done)

    # -- inside ----------------------------------------------------------------------------------------------

    def _shown(self, arg: graph.NodeArg) -> graph.NodeArg:
        """The input as the session reports it: dims a free dimension override fixed are numbers, as in
        onnxruntime's session."""
        dims = self._dims[arg.name]
        if dims is None or dims == self._sig.dims[arg.name]:
            return arg
        return graph.NodeArg(arg.name, arg.type, [d if d is not None else s for d, s in zip(dims, arg.shape or [])])

    def _load(self, input_shapes: Optional[Dict[str, Tuple[int, ...]]]) -> Any:
        source = self._model_path if self._model_path is not None else self._model_bytes
        try:
            label = os.path.basename(self._model_path) if self._model_path is not None else self._what
            return session.load(source, label, input_shapes=input_shapes or None)
        except Exception as e:  # noqa: BLE001 (accel's errors, as onnxruntime's)
            shapes = f" with input shapes {input_shapes}" if input_shapes else ""
            raise errors.from_accel(e, f"loading {self._what}{shapes}") from e

    def _prepare(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
                 run_options: Optional[RunOptions]) -> Tuple[List[str], Dict[str, np.ndarray], Any]:
        """The output names, the feed as arrays of the model's dtypes and the model to run, checked as
        onnxruntime checks them, in its order: missing inputs, unknown names, then each input's dtype, rank, dims."""
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise TypeError(f"run_options must be an onnxruntime.RunOptions, not {type(run_options).__name__}")
        feeds.check_missing(self._sig.inputs, input_feed)
        overridable = {a.name for a in self._sig.overridable}
        for name in input_feed:
            if name in overridable:
                raise errors.NotImplemented(f"feeding initializer '{name}' (an overridable initializer) "
                                            f"{_NOT_COVERED}: accel compiles initializers into the model")
            if name not in self._dims:
                raise errors.InvalidArgument(f"Invalid input name: {name}")
        names = list(output_names) if output_names else [a.name for a in self._sig.outputs]
        for name in names:
            if name not in self._outputs:
                raise errors.InvalidArgument(f"Invalid output name:{name}")
        if run_options is not None and run_options.terminate:
            raise errors.Fail("Exiting due to terminate flag being set to true.")
        feed = {a.name: feeds.checked(a, input_feed[a.name], self._sig.dtypes[a.name], self._dims[a.name])
                for a in self._sig.inputs if a.name in input_feed}
        return names, feed, self._model

    def _results(self, model: Any, outs: Sequence[np.ndarray], names: Sequence[str]) -> List[np.ndarray]:
        """The outputs named, in that order, each an array of its own as onnxruntime returns (writable, dense).
        accel's model keeps the ONNX outputs' names and order; a name it does not know is taken by position."""
        index = {a.name: i for i, a in enumerate(self._sig.outputs)}
        index.update({info.name: i for i, info in enumerate(model.outputs)})
        results = []
        for name in names:
            a = outs[index[name]]
            results.append(a if a.flags.writeable and a.flags.c_contiguous else np.array(a))
        return results


#: onnxruntime's base class of InferenceSession; scripts name it in annotations.
Session = InferenceSession
