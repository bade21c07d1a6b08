"""Bad input never crashes: every case raises its exact exception class, with a message that names the
offending input, shape, dtype, option or file. After each, the device still works."""
from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import accel
from accel.errors import InvalidArgumentError
from conftest import DEVICE_URI, NCHW, assert_names_shape, rand


def raises(cls, fn, *patterns):
    """Calls fn(); asserts it raises exactly `cls` and that the message matches every regex pattern."""
    with pytest.raises(BaseException) as info:
        fn()
    e = info.value
    assert type(e) is cls, f"expected {cls.__name__}, got {type(e).__name__}: {e}"
    msg = str(e)
    for p in patterns:
        assert re.search(p, msg), f"{cls.__name__} message {msg!r} does not match {p!r}"
    if isinstance(e, accel.AccelError):
        assert e.status == cls.default_status and e.message
    return e


@pytest.fixture(autouse=True)
def device_survives(request):
    """After every bad call the process and (when used) the device still work."""
    d = request.getfixturevalue("dev") if "dev" in request.fixturenames else None
    yield
    if d is not None and not d.closed:
        t = d.tensor(np.arange(4, dtype=np.float32))
        assert np.array_equal(np.asarray(t), np.arange(4, dtype=np.float32))


# ---------------------------------------------------------------------------------------------------
# opening devices
# ---------------------------------------------------------------------------------------------------

def test_open_unknown_scheme():
    raises(accel.NotFoundError, lambda: accel.open("nosuchdevice:0"), "nosuchdevice")


def test_open_unknown_option():
    raises(InvalidArgumentError, lambda: accel.open("emu:bogus=1"), "bogus")


def test_open_bad_option_value():
    raises(InvalidArgumentError, lambda: accel.open("emu:cores=0"), "cores")


def test_open_bad_pool_size():
    raises(InvalidArgumentError, lambda: accel.open("emu:pool=lots"), "pool")


def test_open_not_a_string():
    raises(TypeError, lambda: accel.open(42), "int")


# ---------------------------------------------------------------------------------------------------
# Device.empty / Device.tensor
# ---------------------------------------------------------------------------------------------------

def test_empty_negative_dimension(dev):
    e = raises(accel.ShapeError, lambda: dev.empty((2, -3), np.float32))
    assert_names_shape(str(e), (2, -3))


def test_empty_too_many_dimensions(dev):
    raises(accel.ShapeError, lambda: dev.empty((1,) * 9, np.float32), "9")


def test_empty_float_dimension(dev):
    raises(TypeError, lambda: dev.empty((2, 2.5), np.float32), "float")


def test_empty_shape_not_a_sequence(dev):
    raises(TypeError, lambda: dev.empty("abc", np.float32), "str")


def test_empty_unsupported_dtype(dev):
    raises(accel.DTypeError, lambda: dev.empty((2, 2), np.complex64), "complex64")


def test_empty_not_a_dtype(dev):
    raises(accel.DTypeError, lambda: dev.empty((2, 2), "floaty32"), "floaty32")


def test_empty_unknown_layout(dev):
    raises(InvalidArgumentError, lambda: dev.empty((1, 3, 4, 4), np.float32, layout="NCWH"), "NCWH")


def test_empty_layout_needs_4d(dev):
    raises(InvalidArgumentError, lambda: dev.empty((3, 4), np.float32, layout="NCHW"), "NCHW", "4")


def test_empty_out_of_device_memory(dev):
    e = raises(accel.OutOfMemoryError, lambda: dev.empty((1 << 20, 1 << 20), np.float32))
    assert isinstance(e, MemoryError)


def test_tensor_unsupported_dtype(dev):
    raises(accel.DTypeError, lambda: dev.tensor(np.zeros(3, np.complex128)), "complex128")


def test_tensor_string_array(dev):
    raises(accel.DTypeError, lambda: dev.tensor(np.array(["a", "bc"])), "<U2|str")


def test_tensor_object_array(dev):
    raises(accel.DTypeError, lambda: dev.tensor(np.array([object(), 1], dtype=object)), "object")


def test_tensor_non_native_byte_order(dev):
    raises(accel.DTypeError, lambda: dev.tensor(np.zeros(3, ">f4")), "byte order|>f4")


# ---------------------------------------------------------------------------------------------------
# Device.load
# ---------------------------------------------------------------------------------------------------

def test_load_missing_file(dev, tmp_path):
    path = tmp_path / "missing_model.onnx"
    raises(FileNotFoundError, lambda: dev.load(str(path)), "missing_model")


def test_load_missing_accm_file(dev, tmp_path):
    path = tmp_path / "missing_model.accm"
    raises(FileNotFoundError, lambda: dev.load(path), "missing_model")


def test_load_input_shapes_for_a_compiled_model(dev, tiny_accm):
    raises(InvalidArgumentError, lambda: dev.load(str(tiny_accm), input_shapes={"x": (1, 16)}),
           "input_shapes")


def test_load_garbage_bytes(dev):
    raises(accel.ModelFormatError, lambda: dev.load(b"this is not a model at all" * 10))


def test_load_garbage_file(dev, tmp_path):
    p = tmp_path / "junk.onnx"
    p.write_bytes(b"\x00\x01garbage" * 100)
    raises(accel.ModelFormatError, lambda: dev.load(str(p)), "junk")


@pytest.mark.emulator
def test_load_truncated_accm(dev, tiny_accm):
    data = tiny_accm.read_bytes()
    raises(accel.ModelFormatError, lambda: dev.load(data[: len(data) // 2]))


@pytest.mark.emulator
def test_load_corrupt_accm_header(dev, tiny_accm):
    data = bytearray(tiny_accm.read_bytes())
    data[8:16] = b"\xff" * 8  # version / sizes
    raises(accel.ModelFormatError, lambda: dev.load(bytes(data)))


def test_load_unsupported_op(dev, tmp_path):
    g = helper.make_graph([helper.make_node("Det", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    p = tmp_path / "det.onnx"
    onnx.save(m, str(p))
    raises(accel.UnsupportedError, lambda: dev.load(str(p)), "Det")


def test_load_symbolic_dim_without_input_shapes(dev, symbolic_path):
    if dev.capabilities.model_format != "accm":
        # A board's compiled file has fixed shapes: its toolchain (here the stand-in's) needs them given.
        raises(InvalidArgumentError, lambda: dev.load(str(symbolic_path)), "'?x'?", "N|dim")
        return
    # The emulator loads it, its dims set at run time (test_dynamic_shapes.py); a request that needs fixed shapes
    # names them.
    assert dev.load(str(symbolic_path)).inputs[0].shape[0] == -1
    raises(InvalidArgumentError, lambda: dev.load(str(symbolic_path), extra_outputs="all"), "'?x'?", "N|dim")


def test_a_compiled_file_names_the_shapes_it_was_compiled_for(dev, tiny_accm):
    # On a board the compiled file (here the stand-in's .bin, .hbm or .xmodel packing the same model) is the model:
    # asking for shapes to compile names those it has.
    for options in ({"shapes": [{"x": (2, 16)}]}, {"pad": True}):
        raises(InvalidArgumentError, lambda options=options: dev.load(str(tiny_accm), **options),
               r"shapes= and pad= apply to models whose input dims are set at run time \(ONNX\); .* was compiled for "
               r"x \[1, 16\]")


def test_load_input_shapes_unknown_name(dev, symbolic_path):
    raises(InvalidArgumentError, lambda: dev.load(str(symbolic_path), input_shapes={"nope": (1, 16)}),
           "nope")


def test_load_input_shapes_not_a_dict(dev, symbolic_path):
    raises(TypeError, lambda: dev.load(str(symbolic_path), input_shapes=[(1, 16)]), "input_shapes")


def test_load_input_shapes_negative(dev, symbolic_path):
    raises(InvalidArgumentError, lambda: dev.load(str(symbolic_path), input_shapes={"x": (-1, 16)}),
           "x")


def test_load_into_a_too_small_pool(slow_path):
    with accel.open("emu:cores=1,pool=1M") as d:  # the weights alone are 1 MiB
        raises(accel.OutOfMemoryError, lambda: d.load(str(slow_path)))
        assert d.stats()["live_buffers"] == 0 and d.stats()["bytes_in_use"] == 0


def test_load_not_a_path_or_bytes(dev):
    raises(TypeError, lambda: dev.load(12345), "int")


# ---------------------------------------------------------------------------------------------------
# Model.run: inputs
# ---------------------------------------------------------------------------------------------------

def test_run_float64_input(tiny):
    raises(accel.DTypeError, lambda: tiny.run(np.zeros((1, 16), np.float64)), "'x'", "float32", "float64")


def test_run_int32_input(tiny):
    raises(accel.DTypeError, lambda: tiny.run(np.zeros((1, 16), np.int32)), "'x'", "float32", "int32")


def test_run_float16_device_tensor(dev, tiny):
    t = dev.empty((1, 16), np.float16)
    raises(accel.DTypeError, lambda: tiny.run(t), "'x'", "float32", "float16")


def test_run_dtype_error_in_dict(two_io):
    raises(accel.DTypeError,
           lambda: two_io.run({"a": rand((1, 3, 8, 8)), "b": rand((2, 8)).astype(np.float64)}),
           "'b'", "float32", "float64")


def test_run_wrong_shape(tiny):
    e = raises(accel.ShapeError, lambda: tiny.run(np.zeros((1, 15), np.float32)), "'x'")
    assert_names_shape(str(e), (1, 16))
    assert_names_shape(str(e), (1, 15))


def test_run_wrong_rank(tiny):
    e = raises(accel.ShapeError, lambda: tiny.run(np.zeros((16,), np.float32)), "'x'")
    assert_names_shape(str(e), (1, 16))
    assert_names_shape(str(e), (16,))


def test_run_same_size_other_shape_is_not_reshaped(tiny):
    e = raises(accel.ShapeError, lambda: tiny.run(np.zeros((2, 8), np.float32)), "'x'")
    assert_names_shape(str(e), (2, 8))


def test_run_wrong_shape_device_tensor(dev, tiny):
    t = dev.empty((4, 4), np.float32)
    e = raises(accel.ShapeError, lambda: tiny.run(t), "'x'")
    assert_names_shape(str(e), (4, 4))
    assert_names_shape(str(e), (1, 16))


def test_run_wrong_shape_second_input(two_io):
    e = raises(accel.ShapeError, lambda: two_io.run([rand((1, 3, 8, 8)), rand((3, 8))]), "'b'")
    assert_names_shape(str(e), (2, 8))
    assert_names_shape(str(e), (3, 8))


def test_run_wrong_layout_device_tensor(dev, two_io):
    a = dev.empty((1, 3, 8, 8), np.float32, layout="NHWC")
    if NCHW is None:  # the model's input has no layout (S100): a tensor's layout has nothing to contradict
        two_io.run([a, rand((2, 8))])
    else:
        raises(accel.ShapeError, lambda: two_io.run([a, rand((2, 8))]), "'a'", "NCHW", "NHWC")


def test_run_too_few_inputs(two_io):
    raises(InvalidArgumentError, lambda: two_io.run([rand((1, 3, 8, 8))]), "2", "1", "'a'", "'b'")


def test_run_single_array_for_two_inputs(two_io):
    raises(InvalidArgumentError, lambda: two_io.run(rand((1, 3, 8, 8))), "2 inputs")


def test_run_too_many_inputs(tiny):
    raises(InvalidArgumentError, lambda: tiny.run([rand((1, 16)), rand((1, 16))]), "1 input", "2")


def test_run_unknown_input_name(tiny):
    raises(InvalidArgumentError, lambda: tiny.run({"nope": rand((1, 16))}), "'nope'", "'x'")


def test_run_missing_input_name(two_io):
    raises(InvalidArgumentError, lambda: two_io.run({"a": rand((1, 3, 8, 8))}), "'b'", "missing")


def test_run_none(tiny):
    raises(TypeError, lambda: tiny.run(None), "'x'", "None")


def test_run_none_in_list(two_io):
    raises(TypeError, lambda: two_io.run([rand((1, 3, 8, 8)), None]), "'b'", "None")


def test_run_none_in_dict(two_io):
    raises(TypeError, lambda: two_io.run({"a": rand((1, 3, 8, 8)), "b": None}), "'b'", "None")


def test_run_python_list_of_numbers(tiny):
    raises(TypeError, lambda: tiny.run([[0.0] * 16]), "'x'", "list")


def test_run_string(tiny):
    raises(TypeError, lambda: tiny.run("x"), "'x'", "str")


def test_run_tensor_of_another_device(tiny):
    with accel.open("emu:cores=1") as other:
        t = other.empty((1, 16), np.float32)
        raises(InvalidArgumentError, lambda: tiny.run(t), "'x'")


# ---------------------------------------------------------------------------------------------------
# Model.run: outputs and options
# ---------------------------------------------------------------------------------------------------

def test_outputs_wrong_count(dev, two_io):
    o = dev.empty((1, 4, 8, 8), np.float32)
    raises(InvalidArgumentError, lambda: two_io.run([rand((1, 3, 8, 8)), rand((2, 8))], outputs=[o]),
           "2 outputs", "1")


def test_outputs_wrong_shape(dev, tiny):
    o = dev.empty((1, 9), np.float32)
    e = raises(accel.ShapeError, lambda: tiny.run(rand((1, 16)), outputs=[o]), "'y'")
    assert_names_shape(str(e), (1, 8))
    assert_names_shape(str(e), (1, 9))


def test_outputs_wrong_dtype(dev, tiny):
    o = dev.empty((1, 8), np.int32)
    raises(accel.DTypeError, lambda: tiny.run(rand((1, 16)), outputs=[o]), "'y'", "float32", "int32")


def test_outputs_numpy_array(tiny):
    raises(TypeError, lambda: tiny.run(rand((1, 16)), outputs=[np.zeros((1, 8), np.float32)]),
           "'y'", "DeviceTensor")


def test_outputs_unknown_name(dev, tiny):
    o = dev.empty((1, 8), np.float32)
    raises(InvalidArgumentError, lambda: tiny.run(rand((1, 16)), outputs={"z": o}), "'z'", "'y'")


def test_outputs_not_a_container(tiny):
    raises(TypeError, lambda: tiny.run(rand((1, 16)), outputs=5), "int")


def test_output_aliases_an_input(dev, tiny):
    """A buffer may not be both an input and an output of one job (the C ABI's rule)."""
    x = dev.tensor(rand((1, 16)))
    y = accel.DeviceTensor(x.buffer, (1, 8), np.dtype(np.float32), None, dev)  # same device memory
    raises(InvalidArgumentError, lambda: tiny.run(x, outputs=[y]), "output")


def test_two_outputs_share_a_buffer(dev, two_io):
    o = dev.empty((1, 4, 8, 8), np.float32)
    o2 = accel.DeviceTensor(o.buffer, (2, 5), np.dtype(np.float32), None, dev)
    raises(InvalidArgumentError, lambda: two_io.run([rand((1, 3, 8, 8)), rand((2, 8))], outputs=[o, o2]),
           "output")


def test_priority_out_of_range(tiny):
    raises(InvalidArgumentError, lambda: tiny.run(rand((1, 16)), priority=256), "priority", "256")


def test_priority_negative(tiny):
    raises(InvalidArgumentError, lambda: tiny.run(rand((1, 16)), priority=-1), "priority", "-1")


def test_priority_not_an_int(tiny):
    raises(TypeError, lambda: tiny.run(rand((1, 16)), priority="high"), "priority", "str")


def test_timeout_negative(tiny):
    raises(InvalidArgumentError, lambda: tiny.run(rand((1, 16)), timeout=-1), "timeout", "-1")


def test_numbers_past_float_and_str_are_words_not_tracebacks(tiny):
    """An int past float's range (OverflowError in float()) or past str()'s 4300 digits (ValueError in the
    message) is accel's error; a positive one as a timeout is longer than any wait, as inf is."""
    (y,) = tiny.run(rand((1, 16)), timeout=10**400)
    assert y.shape == tiny.outputs[0].shape
    raises(InvalidArgumentError, lambda: tiny.run(rand((1, 16)), timeout=-10**400), "timeout", "an int of 1329 bits")
    raises(InvalidArgumentError, lambda: tiny.run(rand((1, 16)), priority=10**5000), "priority", "an int of")
    raises(InvalidArgumentError, lambda: tiny.run_async(rand((1, 16)), timeout=-10**400).result(), "timeout")


def test_timeout_not_a_number(tiny):
    raises(TypeError, lambda: tiny.run(rand((1, 16)), timeout="soon"), "timeout", "str")


def test_job_timeout(slow):
    raises(accel.TimeoutError, lambda: slow.run(rand((512, 512)), timeout=1e-4))


def test_run_async_bad_dtype_raises_before_submitting(dev, tiny):
    s0 = dev.stats()["jobs_submitted"]
    raises(accel.DTypeError, lambda: tiny.run_async(np.zeros((1, 16), np.float64)), "'x'", "float64")
    assert dev.stats()["jobs_submitted"] == s0


def test_run_async_bad_shape_raises_before_submitting(dev, tiny):
    s0 = dev.stats()["jobs_submitted"]
    e = raises(accel.ShapeError, lambda: tiny.run_async(np.zeros((1, 17), np.float32)), "'x'")
    assert_names_shape(str(e), (1, 17))
    assert dev.stats()["jobs_submitted"] == s0


def test_future_result_timeout(slow):
    f = slow.run_async(rand((512, 512)))
    raises(TimeoutError, lambda: f.result(timeout=0.001))
    assert f.exception(timeout=30) is None  # the job itself went on and succeeded


# ---------------------------------------------------------------------------------------------------
# closed devices
# ---------------------------------------------------------------------------------------------------

def _closed(tiny_path):
    d = accel.open(DEVICE_URI)
    m = d.load(str(tiny_path))
    t = d.tensor(rand((1, 16)))
    d.close()
    return d, m, t


def test_run_after_close(tiny_path):
    _d, m, t = _closed(tiny_path)
    raises(accel.ClosedError, lambda: m.run(t), "closed")
    raises(accel.ClosedError, lambda: m.run(rand((1, 16))), "closed")


def test_run_async_after_close(tiny_path):
    _d, m, t = _closed(tiny_path)
    raises(accel.ClosedError, lambda: m.run_async(t), "closed")


def test_empty_after_close(tiny_path):
    d, _m, _t = _closed(tiny_path)
    raises(accel.ClosedError, lambda: d.empty((2,), np.float32), "closed")


def test_tensor_after_close(tiny_path):
    d, _m, _t = _closed(tiny_path)
    raises(accel.ClosedError, lambda: d.tensor(rand((2,))), "closed")


def test_load_after_close(tiny_path):
    d, _m, _t = _closed(tiny_path)
    raises(accel.ClosedError, lambda: d.load(str(tiny_path)), "closed")


def test_stats_after_close(tiny_path):
    d, _m, _t = _closed(tiny_path)
    raises(accel.ClosedError, lambda: d.stats(), "closed")


# ---------------------------------------------------------------------------------------------------
# DeviceTensor
# ---------------------------------------------------------------------------------------------------

def test_dlpack_copy_refused(dev):
    raises(BufferError, lambda: dev.empty((4,), np.float32).__dlpack__(copy=True), "cop")


def test_device_tensor_buffer_too_small(dev):
    t = dev.empty((4,), np.float32)
    raises(ValueError, lambda: accel.DeviceTensor(t.buffer, (1024, 1024), np.dtype(np.float32), None, dev))


def test_device_tensor_negative_dim(dev):
    t = dev.empty((4,), np.float32)
    raises(ValueError, lambda: accel.DeviceTensor(t.buffer, (-1,), np.dtype(np.float32), None, dev))
