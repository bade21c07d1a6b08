"""onnxruntime's SessionOptions and RunOptions and the enums they take: the attributes and methods scripts set,
with onnxruntime's defaults and its type checks (a wrong type raises TypeError, as its pybind attributes do).

accel reads few of them: the device is shared by every session of the process and sized by its URI, so thread
counts, the optimization level and the execution mode are kept (a script reads back what it set) but change
nothing; docs/shims/onnxruntime.md lists which options act."""
from __future__ import annotations

import enum
from typing import Any, Dict, Generic, List, Tuple, Type, TypeVar, Union, overload

__all__ = ["GraphOptimizationLevel", "ExecutionMode", "ExecutionOrder", "SessionOptions", "RunOptions"]


class GraphOptimizationLevel(int, enum.Enum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(int, enum.Enum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(int, enum.Enum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


T = TypeVar("T")


class _Typed(Generic[T]):
    """An attribute holding a value of one type, default ``default``; anything else raises TypeError (an int
    for an enum too, as onnxruntime's pybind setters refuse it)."""

    def __init__(self, kind: Union[Type[T], Tuple[type, ...]], default: T) -> None:
        self.kind, self.default, self.name = kind, default, ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> _Typed[T]: ...

    @overload
    def __get__(self, obj: object, owner: type) -> T: ...

    def __get__(self, obj: object, owner: type) -> Any:
        if obj is None:
            return self
        return obj.__dict__.get(self.name, self.default)

    def __set__(self, obj: object, value: T) -> None:
        ok = isinstance(value, self.kind)
        if self.kind is int and isinstance(value, enum.Enum):
            ok = False
        if not ok:
            want = getattr(self.kind, "__name__", str(self.kind))
            raise TypeError(f"{type(obj).__name__}.{self.name} takes a {want}, not {type(value).__name__} "
                            f"({value!r})")
        obj.__dict__[self.name] = value


class _ConfigEntries:
    """add_*_config_entry / get_*_config_entry: string keys and values, as onnxruntime keeps them."""

    _kind = "SessionOptions"

    def __init__(self) -> None:
        self._entries: Dict[str, str] = {}

    def _add(self, key: str, value: str) -> None:
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"config entries take str keys and values, not {key!r}: {value!r}")
        self._entries[key] = value

    def _get(self, key: str) -> str:
        if key not in self._entries:
            raise RuntimeError(f"{self._kind} does not have configuration with key: {key}")
        return self._entries[key]


class SessionOptions(_ConfigEntries):
    """onnxruntime.SessionOptions. What accel acts on: add_free_dimension_override_by_name and
    add_free_dimension_override_by_denotation (they fix symbolic dims, so the model loads at once). The rest is
    kept and read back unchanged."""

    enable_cpu_mem_arena = _Typed(bool, True)
    enable_mem_pattern = _Typed(bool, True)
    enable_mem_reuse = _Typed(bool, True)
    enable_profiling = _Typed(bool, False)
    execution_mode = _Typed(ExecutionMode, ExecutionMode.ORT_SEQUENTIAL)
    execution_order = _Typed(ExecutionOrder, ExecutionOrder.DEFAULT)
    graph_optimization_level = _Typed(GraphOptimizationLevel, GraphOptimizationLevel.ORT_ENABLE_ALL)
    inter_op_num_threads = _Typed(int, 0)
    intra_op_num_threads = _Typed(int, 0)
    log_severity_level = _Typed(int, -1)
    log_verbosity_level = _Typed(int, 0)
    logid = _Typed(str, "")
    optimized_model_filepath = _Typed(str, "")
    profile_file_prefix = _Typed(str, "onnxruntime_profile_")
    use_deterministic_compute = _Typed(bool, False)
    use_per_session_threads = _Typed(bool, True)

    def __init__(self) -> None:
        super().__init__()
        self.free_dimensions_by_name: Dict[str, int] = {}
        self.free_dimensions_by_denotation: Dict[str, int] = {}
        self.custom_ops_libraries: List[str] = []
        self.initializers: Dict[str, Any] = {}

    def add_session_config_entry(self, key: str, value: str) -> None:
        self._add(key, value)

    def get_session_config_entry(self, key: str) -> str:
        return self._get(key)

    def add_free_dimension_override_by_name(self, name: str, value: int) -> None:
        """Fixes every dim the model calls ``name`` to ``value`` (onnxruntime's free dimension override)."""
        self.free_dimensions_by_name[str(name)] = _dim(value)

    def add_free_dimension_override_by_denotation(self, denotation: str, value: int) -> None:
        """Fixes every dim whose denotation is ``denotation`` ("DATA_BATCH", ...) to ``value``."""
        self.free_dimensions_by_denotation[str(denotation)] = _dim(value)

    def register_custom_ops_library(self, path: str) -> None:
        """Kept, not loaded: accel runs only the ops its compiler knows (a custom op fails the load, naming it)."""
        self.custom_ops_libraries.append(str(path))

    def add_initializer(self, name: str, value: Any) -> None:
        """Refused when the session is made (accel compiles an initializer into the model)."""
        self.initializers[str(name)] = value

    def has_providers(self) -> bool:
        return False


class RunOptions(_ConfigEntries):
    """onnxruntime.RunOptions. ``terminate`` set before a run fails it with Fail, as onnxruntime does; the rest
    is kept and read back unchanged."""

    _kind = "RunOptions"
    log_severity_level = _Typed(int, -1)
    log_verbosity_level = _Typed(int, 0)
    logid = _Typed(str, "")
    only_execute_path_to_fetches = _Typed(bool, False)
    terminate = _Typed(bool, False)

    def add_run_config_entry(self, key: str, value: str) -> None:
        self._add(key, value)

    def get_run_config_entry(self, key: str) -> str:
        return self._get(key)


def _dim(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TypeError(f"a free dimension override takes an int >= 1, not {value!r}")
    return int(value)
