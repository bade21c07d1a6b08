"""Vitis AI scripts run unchanged under ``accel shim vitis``: scripts written as Vitis AI's own samples are (resnet50's
single runner, app_mt's one runner per thread, the RunnerExt example's runner-owned buffers, float32 arrays VART
converts with fix_point, a walk of the XIR graph) run with ``python -m accel.shims vitis -- python script.py`` on a
compiled .xmodel (a power-of-two QDQ ONNX model as vai_c_xir compiles it: tests/standin/vart/tools/qdq_to_xir.py)
and give the very integers of accel's own API (``accel.open("emu:int8=dpu").load(path)``). And every misuse where
VART aborts the process, or reads and writes past an array, raises the error docs/shims/vitis.md names."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import accel

TESTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "standin" / "vart" / "tools"))
from models.device_qdq import const_dq_fp, qdq_fp  # noqa: E402
from models.xmodel_builder import XmodelBuilder  # noqa: E402

from accel.compiler import xir as reader  # noqa: E402
from accel.shims.vitis import vart, xir  # noqa: E402

# Its head, as every Vitis AI Python sample has it: the DPU subgraphs of the graph, in topological order.
HEAD = """
import sys, threading
import numpy as np
import xir
import vart


def get_child_subgraph_dpu(graph):
    assert graph is not None, "'graph' should not be None."
    root_subgraph = graph.get_root_subgraph()
    assert root_subgraph is not None, "Failed to get root subgraph of input Graph object."
    if root_subgraph.is_leaf:
        return []
    child_subgraphs = root_subgraph.toposort_child_subgraph()
    assert child_subgraphs is not None and len(child_subgraphs) > 0
    return [cs for cs in child_subgraphs if cs.has_attr("device") and cs.get_attr("device").upper() == "DPU"]


g = xir.Graph.deserialize(sys.argv[1])
subgraphs = get_child_subgraph_dpu(g)
assert len(subgraphs) == 1  # only one DPU kernel
frames = np.load(sys.argv[2])["frames"]
"""

# resnet50.py's runResnet50, one runner, int8 arrays made from the tensors' dims.
SINGLE = HEAD + """
runner = vart.Runner.create_runner(subgraphs[0], "run")
inputTensors = runner.get_input_tensors()
outputTensors = runner.get_output_tensors()
input_ndim = tuple(inputTensors[0].dims)
results = []
for img in frames:
    inputData = [np.empty(input_ndim, dtype=np.int8, order="C")]
    outputData = [np.empty(tuple(t.dims), dtype=np.int8, order="C") for t in outputTensors]
    inputData[0][0, ...] = img.reshape(input_ndim[1:])
    job_id = runner.execute_async(inputData, outputData)
    assert runner.wait(job_id) == 0 and tuple(job_id) == (1, 0)
    results.append(outputData)
np.savez(sys.argv[3], **{f"{i}_{t.name}": r for i, outs in enumerate(results) for t, r in zip(outputTensors, outs)})
"""

# app_mt.py: one runner per thread, each running its share of the frames.
THREADS = HEAD + """
threads = 3
runners = [vart.Runner.create_runner(subgraphs[0], "run") for _ in range(threads)]
results = {}


def run(runner, indices):
    inputTensors = runner.get_input_tensors()
    outputTensors = runner.get_output_tensors()
    for i in indices:
        inputData = [np.empty(tuple(inputTensors[0].dims), dtype=np.int8, order="C")]
        outputData = [np.empty(tuple(t.dims), dtype=np.int8, order="C") for t in outputTensors]
        inputData[0][0] = frames[i]
        job_id = runner.execute_async(inputData, outputData)
        runner.wait(job_id)
        for t, r in zip(outputTensors, outputData):
            results[f"{i}_{t.name}"] = r


workers = [threading.Thread(target=run, args=(runners[k], range(k, len(frames), threads))) for k in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
del runners
np.savez(sys.argv[3], **results)
"""

# The RunnerExt example (docsrc pydoc runnerext_example.py, graph_runner's resnet_v1_50_tf.py): runner-owned buffers,
# filled through np.asarray and read back the same way.
EXT = HEAD + """
runner = vart.RunnerExt.create_runner(subgraphs[0], "run")
input_tensor_buffers = runner.get_inputs()
output_tensor_buffers = runner.get_outputs()
input_ndim = tuple(input_tensor_buffers[0].get_tensor().dims)
results = {}
for i, img in enumerate(frames):
    input_data = np.asarray(input_tensor_buffers[0])
    input_data[0] = img
    v = runner.execute_async(input_tensor_buffers, output_tensor_buffers)
    runner.wait(v)
    for tb in output_tensor_buffers:
        results[f"{i}_{tb.get_tensor().name}"] = np.asarray(tb).copy()
np.savez(sys.argv[3], **results)
"""

# float32 arrays, which VART converts with the tensors' fix points: input x * 2^fp, output q * 2^-fp.
FLOAT = HEAD + """
runner = vart.Runner.create_runner(subgraphs[0], "run")
inputTensors = runner.get_input_tensors()
outputTensors = runner.get_output_tensors()
fix = inputTensors[0].get_attr("fix_point")
results = {}
for i, img in enumerate(frames):
    x = (img.astype(np.float32) / 2 ** fix)[None]
    outputData = [np.empty(tuple(t.dims), dtype=np.float32) for t in outputTensors]
    runner.wait(runner.execute_async([x], outputData))
    for t, r in zip(outputTensors, outputData):
        results[f"{i}_{t.name}"] = r
np.savez(sys.argv[3], **results)
"""

# A walk of the graph: what scripts read of it, as JSON.
WALK = """
import json, sys
import xir

g = xir.Graph.deserialize(sys.argv[1])
root = g.get_root_subgraph()
out = {"graph": g.get_name(), "ops": g.get_op_num(), "root": [root.get_name(), root.is_root, root.is_leaf, root.depth],
       "children": []}
for s in root.toposort_child_subgraph():
    entry = {"name": s.get_name(), "device": s.get_attr("device") if s.has_attr("device") else None,
             "ops": s.get_op_num(), "depth": s.depth, "parent": s.get_parent().get_name(),
             "leaves": len(s.get_children())}
    if entry["device"] == "DPU":
        tensors = sorted(s.get_input_tensors(), key=lambda t: t.name) + sorted(s.get_output_tensors(),
                                                                               key=lambda t: t.name)
        entry["tensors"] = [[t.name, t.dims, t.dtype, t.get_attr("fix_point"), t.get_data_size(),
                             t.get_element_num(), t.producer.get_type()] for t in tensors]
        entry["dpu_name"] = s.get_attr("dpu_name")
        entry["registers"] = s.get_attr("reg_id_to_parameter_value")
    out["children"].append(entry)
print(json.dumps(out))
"""


@pytest.fixture(autouse=True)
def vitis_session(monkeypatch):
    """The shim's device as the launcher sets it up (emu:int8=dpu), opened afresh for each test run in this process
    (session.py keeps one per process) and closed after it."""
    from accel.shims import session

    monkeypatch.setenv(session.ENV_VENDOR, "vitis")
    monkeypatch.delenv(session.ENV_DEVICE, raising=False)
    monkeypatch.setattr(session, "_device", None)
    yield
    if session._device is not None:
        session._device.close()


def _float_activations(nodes, inits, name, fp, out=None):
    """qdq_fp's place in _qdq_model's float twin: the tensor as it is (under the output's name where it is one)."""
    from onnx import helper

    if out is None:
        return name
    nodes.append(helper.make_node("Identity", [name], [out]))
    return out


def _qdq_model(rng, qdq_fp=qdq_fp):
    """A power-of-two QDQ model, as Vitis AI's quantizer writes one: x [1, 4, 8, 8] -> conv 3x3 + relu -> conv 1x1 +
    leaky relu -> add + relu (output y_add) -> max pool (y_max) and global average pool (y_avg). With
    ``qdq_fp=_float_activations``, its float twin: the same weights (drawn alike from rng), activations in float."""
    from onnx import TensorProto, helper

    nodes, inits = [], []
    x = qdq_fp(nodes, inits, "x", 5)
    w1, b1 = (const_dq_fp(nodes, inits, "w1", rng.integers(-128, 128, (8, 4, 3, 3)), 7),
              const_dq_fp(nodes, inits, "b1", rng.integers(-128, 128, 8), 4))
    nodes += [helper.make_node("Conv", [x, w1, b1], ["c1"], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["c1"], ["r1"])]
    r1 = qdq_fp(nodes, inits, "r1", 4)
    w2, b2 = (const_dq_fp(nodes, inits, "w2", rng.integers(-128, 128, (8, 8, 1, 1)), 6),
              const_dq_fp(nodes, inits, "b2", rng.integers(-128, 128, 8), 5))
    nodes += [helper.make_node("Conv", [r1, w2, b2], ["c2"]),
              helper.make_node("LeakyRelu", ["c2"], ["l2"], alpha=26 / 256)]
    l2 = qdq_fp(nodes, inits, "l2", 3)
    nodes += [helper.make_node("Add", [r1, l2], ["a"]), helper.make_node("Relu", ["a"], ["ar"])]
    a = qdq_fp(nodes, inits, "ar", 3, out="y_add")
    nodes.append(helper.make_node("MaxPool", [a], ["mp"], kernel_shape=[2, 2], strides=[2, 2]))
    qdq_fp(nodes, inits, "mp", 3, out="y_max")
    nodes.append(helper.make_node("GlobalAveragePool", [a], ["gp"]))
    qdq_fp(nodes, inits, "gp", 5, out="y_avg")
    f = TensorProto.FLOAT
    g = helper.make_graph(nodes, "dpu_net", [helper.make_tensor_value_info("x", f, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y_add", f, [1, 8, 8, 8]),
                           helper.make_tensor_value_info("y_max", f, [1, 8, 4, 4]),
                           helper.make_tensor_value_info("y_avg", f, [1, 8, 1, 1])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    import qdq_to_xir

    onnx_model = _qdq_model(np.random.default_rng(35))
    path = tmp_path_factory.mktemp("vitis") / "dpu_net.xmodel"
    path.write_bytes(reader.write(qdq_to_xir.convert(onnx_model, "dpu_net")))
    return path


@pytest.fixture(scope="module")
def frames():
    return np.random.default_rng(36).integers(-128, 128, (6, 8, 8, 4)).astype(np.int8)


@pytest.fixture(scope="module")
def reference(model_path, frames):
    """accel's own API's outputs for each frame, by "<frame>_<output name>"."""
    with accel.open("emu:int8=dpu") as dev:
        m = dev.load(str(model_path))
        ref = {f"{i}_{o.name}": np.asarray(r).copy() for i, f in enumerate(frames)
               for o, r in zip(m.outputs, m.run(f[None]))}
    assert all(len(np.unique(v)) > 2 for v in ref.values())  # numbers worth comparing, not a saturated constant
    return ref


def _launch(tmp_path, script, *args, options=()):
    path = tmp_path / "app.py"
    path.write_text(textwrap.dedent(script))
    return subprocess.run([sys.executable, "-m", "accel.shims", "vitis", *map(str, options), "--", sys.executable,
                           str(path), *map(str, args)], capture_output=True, text=True, timeout=600)


def _run_script(tmp_path, script, model_path, frames, options=()):
    np.savez(tmp_path / "in.npz", frames=frames)
    done = _launch(tmp_path, script, model_path, tmp_path / "in.npz", tmp_path / "out.npz", options=options)
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "out.npz") as got:
        return {k: got[k] for k in got.files}


@pytest.mark.parametrize("script", [SINGLE, THREADS, EXT], ids=["single runner", "runner per thread",
                                                                "runner-owned buffers"])
def test_a_sample_script_gives_accels_own_numbers(tmp_path, model_path, frames, reference, script):
    got = _run_script(tmp_path, script, model_path, frames)
    assert sorted(got) == sorted(reference)
    for key, want in reference.items():
        assert got[key].dtype == np.int8 and got[key].shape == want.shape, key
        np.testing.assert_array_equal(got[key], want, err_msg=key)
    print(f"\n{len(reference)} outputs of {len(frames)} frames identical to accel's own API")


def test_float_arrays_are_converted_with_the_fix_points(tmp_path, model_path, frames, reference):
    got = _run_script(tmp_path, FLOAT, model_path, frames)
    with accel.open("emu:int8=dpu") as dev:
        shifts = {o.name: o.quant.shifts[0] for o in dev.load(str(model_path)).outputs}
    for key, want in reference.items():
        name = key.split("_", 1)[1]
        assert got[key].dtype == np.float32
        np.testing.assert_array_equal(got[key], want.astype(np.float32) * np.float32(2.0 ** -shifts[name]))


def test_compare_holds_every_output_against_the_float_network(tmp_path, model_path, frames, reference):
    """``--compare`` with one runner per thread: the table's figures for each output are those of the script's int8
    outputs (dequantized with their fix points) against onnxruntime's run of the network with float activations
    (the same weights) on the frames' real values; the script's own numbers are unchanged."""
    import onnxruntime as ort

    rows_path = tmp_path / "rows.json"
    np.savez(tmp_path / "in.npz", frames=frames)
    done = _launch(tmp_path, THREADS, model_path, tmp_path / "in.npz", tmp_path / "out.npz",
                   options=("--compare", "--compare-json", rows_path))
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "out.npz") as got:
        for key, want in reference.items():
            np.testing.assert_array_equal(got[key], want, err_msg=key)
    assert "every output against its model's float run on 'emu' (runs: dpu_net.xmodel " in done.stderr
    assert f"dpu_net.xmodel {_dpu_subgraph_name(model_path)} 6)" in done.stderr, done.stderr
    rows = {r["tensor"]: r for r in json.loads(rows_path.read_text())}
    twin = _qdq_model(np.random.default_rng(35), _float_activations)
    session = ort.InferenceSession(twin.SerializeToString(), providers=["CPUExecutionProvider"])
    with accel.open("emu:int8=dpu") as dev:
        model = dev.load(str(model_path))
        fix = {t.name: t.quant.shifts[0] for t in model.inputs + model.outputs}
    x_fix = fix[model.inputs[0].name]
    floats = [dict(zip([o.name for o in twin.graph.output],
                       session.run(None, {"x": (f.astype(np.float32) * 2.0 ** -x_fix).transpose(2, 0, 1)[None]})))
              for f in frames]
    assert sorted(rows) == sorted(o.name for o in model.outputs)
    for out in model.outputs:
        onnx_name = next(n for n in ("y_add", "y_max", "y_avg") if out.name.startswith(n))
        real = np.stack([reference[f"{i}_{out.name}"] * 2.0 ** -fix[out.name] for i in range(len(frames))])
        want = np.stack([fl[onnx_name].transpose(0, 2, 3, 1) for fl in floats]).reshape(real.shape)
        err = np.abs(real - want)
        row = rows[out.name]
        print(f"\n{out.name}: max error {row['max_abs_error']:.4g} (independently {err.max():.4g}), cosine "
              f"{row['cosine']:.6f}, {row['differing']} integers differ by up to {row['max_lsb']} steps")
        assert row["dtype_a"] == "int8" and row["dtype_b"] == "float32"
        assert row["max_abs_error"] == pytest.approx(float(err.max()), rel=1e-4, abs=1e-6)
        assert row["mean_abs_error"] == pytest.approx(float(err.mean()), rel=1e-4, abs=1e-7)
        assert 0.5 < row["cosine"] < 1.0 and row["differing"] > 0


@pytest.mark.vendor("vart", formats=(".xmodel",))
def test_the_script_on_the_board_with_compare(tmp_path, frames):
    """The runner-per-thread sample with --device vart:0 (CI: accel's VART driver over the stand-in VART, the file as
    vai_c_xir writes it: real DPU ops): the integers of the emulator's run of the same file, and --compare holds
    each output against the float run on the host."""
    import onnx

    from standin_toolchain import tool

    onnx_path = tmp_path / "dpu_net.onnx"
    onnx.save(_qdq_model(np.random.default_rng(35)), str(onnx_path))
    board_path = tmp_path / "dpu_net.xmodel"
    board_path.write_bytes(tool(".xmodel").build_dpu_ops(str(onnx_path)))
    rows_path = tmp_path / "rows.json"
    got = _run_script(tmp_path, THREADS, board_path, frames,
                      options=("--device", "vart:0", "--compare", "--compare-json", rows_path))
    with accel.open("emu:int8=dpu") as dev:
        m = dev.load(str(board_path))
        for i, f in enumerate(frames):
            for o, want in zip(m.outputs, m.run(f[None])):
                np.testing.assert_array_equal(got[f"{i}_{o.name}"], want, err_msg=f"frame {i} {o.name}")
    rows = json.loads(rows_path.read_text())
    assert sorted(r["tensor"] for r in rows) == sorted(o.name for o in m.outputs)
    assert all(r["dtype_a"] == "int8" and 0.5 < r["cosine"] < 1 for r in rows)


def _dpu_subgraph_name(model_path):
    graph = reader.read(Path(model_path).read_bytes())
    return reader.dpu_subgraph(graph).name


def test_a_walk_of_the_graph_reads_what_the_file_holds(tmp_path, model_path):
    done = _launch(tmp_path, WALK, model_path)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    g = reader.read(model_path.read_bytes())
    assert (got["graph"], got["ops"], got["root"]) == (g.name, len(g.ops), [g.root.name, True, False, 0])
    assert [c["name"] for c in got["children"]] == [c.name for c in g.root.children]
    (dpu,) = [c for c in got["children"] if c["device"] == "DPU"]
    part = reader.dpu_subgraph(g)
    assert (dpu["ops"], dpu["depth"], dpu["parent"], dpu["leaves"]) == (len(part.ops()), 1, g.root.name,
                                                                        len(part.children))
    inputs, outputs = reader.boundary(g, part)
    want = [[op.output.name, list(op.output.shape), "xint8", op.output.fix_point, int(np.prod(op.output.shape)),
             int(np.prod(op.output.shape)), op.type] for op in inputs + outputs]
    assert dpu["tensors"] == want
    assert dpu["dpu_name"] == "DPUCZDX8G_ISA1_B4096" and dpu["registers"] is None  # a map of bytes: None, as XIR


def test_the_launcher_makes_the_names_importable_only_under_it(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import vart"], capture_output=True, text=True)
    assert done.returncode != 0  # the real packages are not installed here
    done = _launch(tmp_path, "import vart, xir; print(vart.__name__, xir.__name__)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["accel.shims.vitis.vart", "accel.shims.vitis.xir"]


# ---- misuse: what VART aborts on, or reads and writes past an array for, raises here --------------------------------

@pytest.fixture()
def runner(model_path):
    g = xir.Graph.deserialize(str(model_path))
    (dpu,) = [s for s in g.get_root_subgraph().toposort_child_subgraph() if s.get_attr("device") == "DPU"]
    r = vart.Runner.create_runner(dpu, "run")
    r.graph = g  # keeps the graph alive for the test, as a script's variable does
    return r


def _arrays(tensors, dtype=np.int8):
    return [np.zeros(tuple(t.dims), dtype) for t in tensors]


def test_arrays_of_another_dtype_size_or_count_are_refused(runner):
    ins, outs = _arrays(runner.get_input_tensors()), _arrays(runner.get_output_tensors())
    with pytest.raises(accel.DTypeError, match=r"input 0 \('x'\) is float64: VART takes int8 .* aborts"):
        runner.execute_async([ins[0].astype(np.float64)], outs)
    with pytest.raises(accel.DTypeError, match=r"is int16: VART would copy 2 bytes per element"):
        runner.execute_async([ins[0].astype(np.int16)], outs)
    with pytest.raises(accel.DTypeError, match=r"output 1 .* is uint8"):
        runner.execute_async(ins, [outs[0], outs[1].view(np.uint8), outs[2]])
    with pytest.raises(accel.ShapeError, match=r"input 0 \('x'\) has shape \[1, 8, 8, 3\] .* VART would read past"):
        runner.execute_async([ins[0][..., :3]], outs)
    with pytest.raises(accel.ShapeError, match=r"VART would write past its end"):
        runner.execute_async(ins, [outs[0][:, :4], *outs[1:]])
    with pytest.raises(accel.InvalidArgumentError, match=r"got 2 output arrays for 3 output tensors"):
        runner.execute_async(ins, outs[:2])
    read_only = outs[0].copy()
    read_only.flags.writeable = False
    with pytest.raises(accel.InvalidArgumentError, match=r"is read-only"):
        runner.execute_async(ins, [read_only, *outs[1:]])
    with pytest.raises(TypeError, match=r"not an array"):
        runner.execute_async([[0] * 256], outs)
    with pytest.raises(TypeError, match=r"pair execute_async returned"):
        runner.wait(1)


def test_an_array_of_the_right_size_and_any_shape_is_taken_as_vart_takes_it(runner, frames, reference):
    outs = [np.zeros(t.get_element_num(), np.int8) for t in runner.get_output_tensors()]  # flat: VART ignores shapes
    assert runner.execute_async([frames[0].reshape(-1)], outs) == (1, 0)
    for t, o in zip(runner.get_output_tensors(), outs):
        np.testing.assert_array_equal(o, reference[f"0_{t.name}"].reshape(-1))


def test_a_runner_outliving_its_graph_is_refused(model_path):
    def make():
        g = xir.Graph.deserialize(str(model_path))
        (dpu,) = [s for s in g.get_root_subgraph().toposort_child_subgraph() if s.get_attr("device") == "DPU"]
        return vart.Runner.create_runner(dpu, "run")

    r = make()
    gc.collect()
    with pytest.raises(accel.InvalidArgumentError, match=r"its xir.Graph is gone .* keep the Graph alive"):
        r.execute_async(_arrays(r.get_input_tensors()), _arrays(r.get_output_tensors()))


def test_one_runner_used_by_two_threads_at_once_is_refused(runner):
    started, release = threading.Event(), threading.Event()
    real_run = runner._model.run

    def slow_run(*args, **kwargs):
        started.set()
        release.wait(10)
        return real_run(*args, **kwargs)

    runner._model = type("Slow", (), {"run": staticmethod(slow_run)})()
    ins, outs = _arrays(runner.get_input_tensors()), _arrays(runner.get_output_tensors())
    first = threading.Thread(target=runner.execute_async, args=(ins, outs))
    first.start()
    try:
        assert started.wait(10)
        with pytest.raises(accel.InvalidArgumentError, match=r"not re-entrant .* one runner per thread"):
            runner.execute_async(_arrays(runner.get_input_tensors()), _arrays(runner.get_output_tensors()))
    finally:
        release.set()
        first.join()


def test_what_xir_and_vart_abort_on_is_refused(model_path, tmp_path):
    g = xir.Graph.deserialize(str(model_path))
    children = g.get_root_subgraph().toposort_child_subgraph()
    user = next(s for s in children if s.get_attr("device") == "USER")
    dpu = next(s for s in children if s.get_attr("device") == "DPU")
    with pytest.raises(accel.UnsupportedError, match=r"runs on 'USER': accel's shim runs the DPU subgraphs"):
        vart.Runner.create_runner(user, "run")
    with pytest.raises(accel.InvalidArgumentError, match=r"has no runner for mode '' .* pass \"run\""):
        vart.Runner.create_runner(dpu)
    with pytest.raises(accel.InvalidArgumentError, match=r"has no attribute 'nope' .* has_attr"):
        dpu.get_attr("nope")
    t = vart.Runner.create_runner(dpu, "run").get_input_tensors()[0]
    with pytest.raises(accel.InvalidArgumentError, match=r"tensor 'x' has no attribute 'scale'"):
        t.get_attr("scale")
    with pytest.raises(FileNotFoundError):
        xir.Graph.deserialize(str(tmp_path / "none.xmodel"))
    (tmp_path / "bad.xmodel").write_bytes(b"\x00not a graph")
    with pytest.raises(accel.ModelFormatError, match=r"cannot read .*bad.xmodel"):
        xir.Graph.deserialize(str(tmp_path / "bad.xmodel"))
    with pytest.raises(accel.UnsupportedError, match=r"Graph.create_op is not covered"):
        g.create_op("x", "conv2d")
    with pytest.raises(accel.InvalidArgumentError, match=r"builds a new graph"):
        xir.Graph("new")


def test_modes_runner_kinds_and_methods_the_binding_has_not(tmp_path):
    b = XmodelBuilder("modes")  # vai_c_xir's "runner" attribute: run, ref, sim
    x = b.input("x", (1, 4, 4, 8), 4)
    b.output(b.op("pool-fix", "pool", {"input": [x]}, (1, 2, 2, 8), 4, type="MAX", kernel=[2, 2], stride=[2, 2],
                  pad=[0, 0, 0, 0]))
    (tmp_path / "modes.xmodel").write_bytes(b.bytes())
    g = xir.Graph.deserialize(str(tmp_path / "modes.xmodel"))
    dpu = next(s for s in g.get_root_subgraph().toposort_child_subgraph() if s.get_attr("device") == "DPU")
    assert dpu.get_attr("runner")["run"] == "libvart-dpu-runner.so"
    with pytest.raises(accel.UnsupportedError, match=r"mode 'ref' .* is not emulated"):
        vart.Runner.create_runner(dpu, "ref")
    plain = vart.Runner.create_runner(dpu, "run")
    assert type(plain) is vart.Runner and repr(plain).startswith("vart::Runner@")
    with pytest.raises(AttributeError, match=r"runner-owned buffers are vart.RunnerExt's"):
        plain.get_inputs()
    with pytest.raises(AttributeError, match=r"3.5's Python binding has none either"):
        plain.get_tensor_format()
    ext = vart.RunnerExt.create_runner(dpu, "run")
    (tb,) = ext.get_inputs()
    assert tb.get_tensor().dims == [1, 4, 4, 8] and np.asarray(tb).dtype == np.int8 and not np.asarray(tb).any()
    np.asarray(tb)[...] = np.arange(128, dtype=np.int8).reshape(1, 4, 4, 8)
    (out,) = ext.get_outputs()
    ext.wait(ext.execute_async([tb], [out]))
    want = np.arange(128, dtype=np.int8).reshape(1, 2, 2, 2, 2, 8).max(axis=(2, 4))
    np.testing.assert_array_equal(np.asarray(out), want)


def test_non_contiguous_arrays_are_read_and_written_element_by_element(runner, frames, reference):
    x = np.zeros((1, 8, 8, 8), np.int8)[..., ::2]  # VART would read this memory as if contiguous
    x[0] = frames[1]
    outs = [np.zeros((*t.dims[:-1], 2 * t.dims[-1]), np.int8)[..., ::2] for t in runner.get_output_tensors()]
    runner.execute_async([x], outs)
    for t, o in zip(runner.get_output_tensors(), outs):
        np.testing.assert_array_equal(o, reference[f"1_{t.name}"])
        assert not o.base[..., 1::2].any()  # nothing written between the view's elements


def test_float_inputs_out_of_range_wrap_as_the_boards_cast(runner, frames, reference, capsys):
    (t,) = runner.get_input_tensors()
    fp = t.get_attr("fix_point")
    q = frames[2].astype(np.int64)[None]
    x = ((q + 256 * np.where(q % 3 == 0, 1, 0)) / 2.0 ** fp).astype(np.float32)  # a third of them 256 past int8
    x += np.float32(0.4 / 2 ** fp) * np.sign(x)  # and a fraction, truncated toward zero
    outs = [np.zeros(tuple(o.dims), np.int8) for o in runner.get_output_tensors()]
    runner.execute_async([x], outs)
    runner.execute_async([x], outs)
    for o, ot in zip(outs, runner.get_output_tensors()):
        np.testing.assert_array_equal(o, reference[f"2_{ot.name}"])
    assert capsys.readouterr().err.count("they wrap around, as VART's (int8_t) cast does") == 1


def test_a_file_changed_after_deserialize_runs_as_it_was_read(tmp_path, model_path, frames, reference):
    copy = tmp_path / "copy.xmodel"
    copy.write_bytes(model_path.read_bytes())
    g = xir.Graph.deserialize(str(copy))
    copy.write_bytes(b"changed")  # VART runs the graph it holds in memory
    dpu = next(s for s in g.get_root_subgraph().toposort_child_subgraph() if s.get_attr("device") == "DPU")
    r = vart.Runner.create_runner(dpu, "run")
    outs = [np.zeros(tuple(t.dims), np.int8) for t in r.get_output_tensors()]
    r.execute_async([frames[3][None]], outs)
    for t, o in zip(r.get_output_tensors(), outs):
        np.testing.assert_array_equal(o, reference[f"3_{t.name}"])


def test_a_file_with_two_dpu_subgraphs_runs_each_with_its_own_runner(tmp_path):
    """As Xilinx's pointpillars and custom-op examples: two DPU subgraphs, a runner each, the first's output fed to
    the second; together they give what the one subgraph gives."""
    b = XmodelBuilder("two")
    x = b.input("x", (1, 4, 4, 8), 4)
    pool = b.op("pool-fix", "pool", {"input": [x]}, (1, 2, 2, 8), 4, type="MAX", kernel=[2, 2], stride=[2, 2],
                pad=[0, 0, 0, 0])
    w = b.const("w", np.random.default_rng(7).integers(-60, 60, (4, 1, 1, 8)), 6)
    b.output(b.op("conv2d-fix", "conv", {"input": [pool], "weights": [w]}, (1, 2, 2, 4), 3, kernel=[1, 1],
                  stride=[1, 1], dilation=[1, 1], pad=[0, 0, 0, 0], pad_mode="FLOOR", group=1, nonlinear="RELU"))
    (tmp_path / "one.xmodel").write_bytes(b.bytes())
    g = b.graph()
    dpu = next(c for c in g.root.children if c.device == "DPU")
    cut = next(i for i, leaf in enumerate(dpu.children) if leaf.leaf_ops == ["pool"]) + 1
    at = g.root.children.index(dpu)
    g.root.children[at:at + 1] = [reader.Subgraph("subgraph_tail", dict(dpu.attrs), [], dpu.children[cut:]),
                                  reader.Subgraph("subgraph_head", dict(dpu.attrs), [], dpu.children[:cut])]
    (tmp_path / "two.xmodel").write_bytes(reader.write(g))  # the tail first in the file: toposort puts it second

    graph = xir.Graph.deserialize(str(tmp_path / "two.xmodel"))
    head, tail = [s for s in graph.get_root_subgraph().toposort_child_subgraph() if s.get_attr("device") == "DPU"]
    assert (head.get_name(), tail.get_name()) == ("subgraph_head", "subgraph_tail")
    first, second = vart.Runner.create_runner(head, "run"), vart.Runner.create_runner(tail, "run")
    assert [t.name for t in first.get_output_tensors()] == [t.name for t in second.get_input_tensors()] == ["pool_fix"]
    q = np.random.default_rng(8).integers(-128, 128, (1, 4, 4, 8)).astype(np.int8)
    pooled = np.empty(tuple(first.get_output_tensors()[0].dims), np.int8)
    first.wait(first.execute_async([q], [pooled]))
    y = np.empty(tuple(second.get_output_tensors()[0].dims), np.int8)
    second.wait(second.execute_async([pooled], [y]))
    with accel.open("emu:int8=dpu") as dev:
        (want,) = dev.load(str(tmp_path / "one.xmodel")).run(q)
        np.testing.assert_array_equal(y, want)
    assert len(np.unique(y)) > 2
