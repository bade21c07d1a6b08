"""The `accel` verbs on the emulator: info, compile, run, bench and demo. Their success paths with the output
checked (run's numbers against onnxruntime, the .npz it saves, the JSON and the Chrome trace), every usage
error (exit 2 and the message), and model and input errors (exit 1, the message, no traceback). Most run
in-process through cli.main; a few through the installed console script."""
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import CNN_PATH, ort_run, run_main
from onnx import TensorProto, helper

import accel
from accel import cli

EMU = "emu:cores=2"


def accel_command():
    """The installed `accel` console script (beside this Python), else the module."""
    script = Path(sys.executable).parent / "accel"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "accel.cli"]


def run_script(*args):
    return subprocess.run(accel_command() + [str(a) for a in args], capture_output=True, text=True, timeout=120)


def usage_error(capsys, *args):
    """The message of a usage error (exit 2, with the verb's usage line)."""
    code, out, err = run_main(capsys, *args)
    assert code == 2, (code, out, err)
    assert err.startswith("usage: accel"), err
    return err


@pytest.fixture(scope="module")
def unsupported_path(tmp_path_factory):
    """An ONNX model with an op the compiler lacks (NonZero, node 'nz')."""
    g = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"], name="nz")], "unsupported",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, [1, None])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path_factory.mktemp("unsupported") / "nonzero.onnx"
    onnx.save(m, str(path))
    return path


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """(path of an .npy input of the bundled CNN, the array)."""
    x = np.random.default_rng(5).random((1, 3, 64, 64), dtype=np.float32)
    path = tmp_path_factory.mktemp("inputs") / "image.npy"
    np.save(path, x)
    return path, x


# ---- every verb has --help and is listed -------------------------------------------------------------

@pytest.mark.parametrize("verb", sorted(cli.SUBCOMMANDS))
def test_every_verb_has_help(capsys, verb):
    code, out, _ = run_main(capsys, verb, "--help")
    assert code == 0 and out.startswith(f"usage: accel {verb}"), out


def test_console_script_lists_the_verbs():
    result = run_script("--help")
    assert result.returncode == 0, result.stderr
    for verb in cli.SUBCOMMANDS:
        assert re.search(rf"^\s+{verb}\s", result.stdout, re.M), result.stdout


def test_no_verb_is_a_usage_error(capsys):
    assert "required: COMMAND" in usage_error(capsys)


@pytest.mark.parametrize("verb", [["info"], ["compile", "--check", CNN_PATH]])
def test_a_reader_gone_ends_a_command_quietly_as_sigpipe_would(verb):
    """`accel info | head`: stdout's reader has closed the pipe before the first write. The command ends with no
    message and the shell's code for a process ended by SIGPIPE, as Unix tools do."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(accel_command() + [str(a) for a in verb], stdout=write_end, stderr=subprocess.PIPE,
                                text=True, timeout=120)
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (128 + signal.SIGPIPE, ""), result


# ---- info --------------------------------------------------------------------------------------------

def test_info_text(capsys):
    code, out, err = run_main(capsys, "info")
    assert code == 0, err
    abi = accel.abi_version()
    assert f"accel {accel.__version__} (libaccel {accel.library_version()}, ABI {abi >> 16}.{abi & 0xFFFF})" in out
    assert f"front-end: {accel.frontend}" in out
    assert re.search(r"^backends: .*\bemu\b", out, re.M)
    assert re.search(r"^  \S*libaccel_driver_emu\.so$", out, re.M), out
    # The emulator's name says its int8 rules and the int8 code path this CPU gives.
    name = (r"accel emulator \(float: (portable|avx2|avx512|neon), int8: ort rules, "
            r"(portable|avx2|avx512vnni|amx|neon|neondot)\)")
    assert re.search(rf"^device emu:\n  name: {name}\n  backend: emu\n", out, re.M), out


def test_info_json_of_one_device(capsys):
    code, out, err = run_main(capsys, "info", "--device", EMU, "--json")
    assert code == 0, err
    facts = json.loads(out)
    assert facts["accel_version"] == accel.__version__ and facts["frontend"] == accel.frontend
    assert facts["abi_version"] == "{}.{}".format(*divmod(accel.abi_version(), 1 << 16))
    assert "emu" in facts["backends"] and any(f.endswith("libaccel_driver_emu.so") for f in facts["driver_files"])
    (device,) = facts["devices"]
    assert device["uri"] == EMU
    with accel.open(EMU) as dev:
        assert device["info"] == dict(name=dev.info.name, backend="emu", cores=2, threads=dev.info.threads,
                                      max_inflight=dev.info.max_inflight, debug=False, alignment=dev.info.alignment,
                                      pool_bytes=dev.info.pool_bytes, hint="latency")
    assert device["info"]["threads"] == max(1, len(os.sched_getaffinity(0)) // 2)
    assert device["capabilities"] == dict(model_format="accm", file_suffixes=[".accm"], int8_rules="ort",
                                          int8_option=True, node_times=True, host_cpus=True,
                                          image_formats=["bgr", "nv12", "nv12_uv", "nv12_y", "rgb", "y", "yuv444"],
                                          first_device="", loads_subgraph=False)


def test_info_text_says_the_threads(capsys):
    code, out, err = run_main(capsys, "info", "--device", "emu:cores=2,threads=3")
    assert code == 0, err
    assert re.search(r"^  cores: 2\n  threads: 3\n", out, re.M), out
    assert re.search(r"^  hint: latency\n", out, re.M), out
    assert re.search(r"^  loads: accm \(\.accm\)\n  int8 rules: ort, chosen by the URI's int8=\n  node times: yes; "
                     r"runs on this host's CPUs: yes\n", out, re.M), out


def test_info_of_a_bad_device_fails(capsys):
    code, _out, err = run_main(capsys, "info", "--device", "emu:cores=0")
    assert code == 1 and err.startswith("accel info: error: ") and "cores='0'" in err, err
    assert "Traceback" not in err
    code, _out, err = run_main(capsys, "info", "--device", "emu:threads=999")
    assert code == 1 and "threads='999' is not a number from 1 to 256" in err, err


def test_info_of_a_missing_backend_fails(capsys):
    code, _, err = run_main(capsys, "info", "--device", "nosuchscheme:0")
    assert code == 1 and "nosuchscheme" in err, err


# ---- compile -----------------------------------------------------------------------------------------

def test_compile_writes_a_model_that_runs(capsys, tmp_path, image):
    accm = tmp_path / "cnn.accm"
    code, out, err = run_main(capsys, "compile", CNN_PATH, "-o", accm)
    assert code == 0, err
    assert re.fullmatch(rf"{re.escape(str(accm))}: \d+ nodes, \d+ tensors, \d+ weight bytes\n", out), out
    assert accm.read_bytes()[:4] == b"ACCM"
    with accel.open(EMU) as dev:
        (got,) = dev.load(accm).run(image[1])
        np.testing.assert_allclose(got, ort_run(CNN_PATH, {"image": image[1]})[0], rtol=1e-4, atol=1e-6)


def test_compile_counts_in_the_singular(capsys, tmp_path):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "one", [helper.make_tensor_value_info("x", 1, [1])],
                          [helper.make_tensor_value_info("y", 1, [1])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "one.onnx"))
    code, out, err = run_main(capsys, "compile", tmp_path / "one.onnx", "-o", tmp_path / "one.accm")
    assert code == 0, err
    assert re.fullmatch(r".*one\.accm: 1 node, 2 tensors, 0 weight bytes\n", out), out


def test_compile_with_input_shape(capsys, tmp_path, symbolic_path):
    accm = tmp_path / "sym.accm"
    code, _, err = run_main(capsys, "compile", symbolic_path, "-o", accm, "--input-shape", "x=3,16")
    assert code == 0, err
    with accel.open(EMU) as dev:
        assert dev.load(accm).inputs[0].shape == (3, 16)


def test_compile_names_the_unsupported_op_and_node(capsys, tmp_path, unsupported_path):
    code, out, err = run_main(capsys, "compile", unsupported_path, "-o", tmp_path / "x.accm")
    assert code == 1, (out, err)
    assert err.startswith("accel compile: error: ") and "NonZero" in err and "'nz'" in err, err
    assert "Traceback" not in err and not (tmp_path / "x.accm").exists()


def test_compile_of_a_symbolic_model_without_its_shape_fails(capsys, tmp_path, symbolic_path):
    code, _, err = run_main(capsys, "compile", symbolic_path, "-o", tmp_path / "x.accm")
    assert code == 1 and "'x'" in err, err
    # The fix in the command line's own syntax, not the Python API's.
    assert re.search(r"--input-shape x=<\w+>,16 ", err) and "input_shapes=" not in err, err


def test_a_symbolic_model_runs_on_the_shape_of_its_input_and_random_inputs_need_the_shape(capsys, tmp_path,
                                                                                          symbolic_path):
    # accel run takes the shape from the input given (the model compiles for it, as onnxruntime runs any shape);
    # bench's random inputs need the sizes: the error says the command line's syntax.
    np.save(tmp_path / "x.npy", np.ones((2, 16), np.float32))
    code, out, err = run_main(capsys, "run", symbolic_path, "--input", tmp_path / "x.npy")
    assert code == 0 and "shape (2, " in out, (out, err)
    code, _, err = run_main(capsys, "bench", symbolic_path, "--seconds", "0.1")
    assert code == 1 and re.search(r"dim 0 is set at run time .*random inputs need every dim's size: give them "
                                   r"with --input-shape x=<\w+>,16 ", err) and "input_shapes=" not in err, err
    code, _, err = run_main(capsys, "bench", symbolic_path, "--seconds", "0.1", "--input-shape", "x=3,16")
    assert code == 0, err


def test_compile_check_lists_every_unsupported_op(capsys, tmp_path):
    nodes = [helper.make_node("NonZero", ["x"], ["a"], name="nz1"), helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("NonZero", ["r"], ["b"], name="nz2"),
             helper.make_node("Unique", ["x"], ["s"], name="uq"), helper.make_node("Mul", ["s", "s"], ["y"])]
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("a", "b", "y")])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    code, out, err = run_main(capsys, "compile", "--check", path)
    assert code == 1 and err == "", (out, err)
    assert re.search(r"^NonZero\s+2\s+0\s+NO \(first: node 'nz1'\)$", out, re.M), out
    assert re.search(r"^Unique\s+1\s+0\s+NO \(first: node 'uq'\)$", out, re.M), out
    assert re.search(r"^Relu\s+1\s+0\s+yes$", out, re.M) and "2 of 4 op types (3 of 5 nodes)" in out, out
    assert "inside subgraphs" not in out  # the model has none
    assert not list(tmp_path.glob("*.accm"))
    # Compiling it names them all in one error.
    code, _, err = run_main(capsys, "compile", path, "-o", tmp_path / "m.accm", "--input-shape", "x=4")
    assert code == 1 and ("unsupported ops (2): 'NonZero' (2 nodes; the first 'nz1': its output's shape is the "
                          "input data's") in err and "'Unique' (node 'uq': its output's shape" in err, err


def if_model(tmp_path, condition_at_run_time):
    """An ONNX model whose If decides at run time (on x's sum), or at compile time (on x's static length), between a
    branch of Neg and a branch holding another If: of a Loop (of Identity and Abs) or of Unique (which the
    compiler lacks)."""
    from onnx import numpy_helper

    def graph(name, nodes, inputs, outputs, inits=()):
        return helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                                 [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                                 [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])

    f = TensorProto.FLOAT
    body = graph("body", [helper.make_node("Identity", ["go"], ["go_on"]), helper.make_node("Abs", ["v"], ["v1"])],
                 [("i", TensorProto.INT64, []), ("go", TensorProto.BOOL, []), ("v", f, None)],
                 [("go_on", TensorProto.BOOL), ("v1", f)])
    looped = graph("looped", [helper.make_node("Loop", ["two", "", "x"], ["l"], body=body)], [], [("l", f)],
                   [("two", np.array(2, np.int64))])
    plain = graph("plain", [helper.make_node("Unique", ["x"], ["p"], name="uq_inside")], [], [("p", f)])
    inner = graph("inner", [helper.make_node("If", ["c"], ["b"], then_branch=looped, else_branch=plain)], [],
                  [("b", f)])
    negated = graph("negated", [helper.make_node("Neg", ["x"], ["a"])], [], [("a", f)])
    if condition_at_run_time:
        decide = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                  helper.make_node("Greater", ["s", "zero"], ["c"])]
    else:
        decide = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Equal", ["s", "four"], ["c"])]
    main = graph("m", [*decide, helper.make_node("If", ["c"], ["y"], name="decides", then_branch=negated,
                                                 else_branch=inner)],
                 [("x", f, [4])], [("y", f)], [("zero", np.array(0, np.float32)), ("four", np.array([4], np.int64))])
    path = tmp_path / "if.onnx"
    onnx.save(helper.make_model(main, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize("at_run_time", [True, False])
def test_compile_check_lists_the_ops_inside_subgraphs(capsys, tmp_path, at_run_time):
    code, out, err = run_main(capsys, "compile", "--check", if_model(tmp_path, at_run_time))
    top, _, inside = out.partition("\ninside subgraphs (If branches, Loop and Scan bodies")
    assert inside, out
    # Every op of the main graph compiles; Unique, in a branch it may take, is listed below.
    assert re.search(r"^If\s+1\s+0\s+yes$", top, re.M) and "every op is supported" in top, out
    rows = dict(re.findall(r"^(\w+)\s+1\s+0\s+(yes|NO \(first: node '\w+'\))$", inside, re.M))
    # Every op of every depth, named plainly; whether the nested If and the Loop compile is the compiler's to say.
    assert set(rows) == {"Neg", "If", "Loop", "Identity", "Abs", "Unique"}, out
    assert rows["Neg"] == rows["Abs"] == "yes" and rows["Unique"] == "NO (first: node 'uq_inside')", out
    # Decided at compile time, the If keeps its Neg branch: Unique in the other is never compiled. Decided at run
    # time, both branches are compiled: Unique is met.
    if at_run_time:
        assert code == 1 and "compiling it fails: unsupported op 'Unique' (node 'decides/else/If_0/else/uq_inside')" \
            in out, out
    else:
        assert code == 0 and "every op is supported" in top and out.endswith("\nit compiles\n"), out
    assert err == "", err


def test_compile_check_of_a_supported_model(capsys, symbolic_path):
    code, out, _ = run_main(capsys, "compile", "--check", CNN_PATH)
    assert code == 0 and "every op is supported" in out and "it compiles" in out, out
    code, out, _ = run_main(capsys, "compile", "--check", symbolic_path)  # the ops are there; the shape is not
    assert code == 0 and "not compiled: " in out and "--input-shape x=" in out, out


def test_compile_usage_errors(capsys, tmp_path):
    assert "-o MODEL.accm is required (or --check)" in usage_error(capsys, "compile", CNN_PATH)
    assert "--check writes nothing" in usage_error(capsys, "compile", CNN_PATH, "--check", "-o", tmp_path / "x")
    assert "MODEL 'nope.onnx': no such file" in usage_error(capsys, "compile", "nope.onnx", "-o", tmp_path / "x")
    assert "no such folder" in usage_error(capsys, "compile", CNN_PATH, "-o", tmp_path / "no" / "x.accm")
    assert "expected name=d0,d1" in usage_error(capsys, "compile", CNN_PATH, "-o", tmp_path / "x", "--input-shape", "3")


# ---- run ---------------------------------------------------------------------------------------------

def test_run_matches_onnxruntime_and_saves_npz(capsys, tmp_path, image):
    path, x = image
    out_path = tmp_path / "out.npz"
    code, out, err = run_main(capsys, "run", CNN_PATH, "--input", path, "--output", out_path, "--device", EMU)
    assert code == 0, err
    (expected,) = ort_run(CNN_PATH, {"image": x})
    with np.load(out_path) as saved:
        assert list(saved) == ["probabilities"]
        got = saved["probabilities"]
    assert got.shape == (1, 10) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    m = re.search(r"^probabilities: shape \(1, 10\) float32: min (\S+) max (\S+) mean (\S+) values \[(.*)\]", out, re.M)
    assert m, out
    np.testing.assert_allclose([float(v) for v in m.group(1, 2, 3)], [expected.min(), expected.max(), expected.mean()],
                               rtol=1e-4)
    np.testing.assert_allclose([float(v) for v in m.group(4).split(",")], expected[0, :6], atol=1e-4)
    assert f"outputs saved to {out_path}" in out


def test_run_prints_each_output_on_one_line(capsys, tmp_path):
    """Values whose list is wider than NumPy's line width (75 characters) are not wrapped mid-list."""
    g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "neg",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [7])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "neg.onnx"))
    np.save(tmp_path / "x.npy", np.array([1.23456e-5, -2500, 3.25, -4e-8, -5.5, 6.1, -7], np.float32))
    code, out, err = run_main(capsys, "run", tmp_path / "neg.onnx", "--input", tmp_path / "x.npy")
    assert code == 0, err
    (line,) = out.splitlines()
    m = re.fullmatch(r"y: shape \(7,\) float32: min -6\.1 max 2500 mean \S+ values \[(.*)\] \.\.\.", line)
    assert m, out
    np.testing.assert_allclose([float(v) for v in m.group(1).split(",")], [-1.23456e-5, 2500, -3.25, 4e-8, 5.5, -6.1],
                               rtol=1e-4)


def test_run_saves_outputs_named_like_savez_arguments(capsys, tmp_path):
    """Outputs named `file` and `allow_pickle` (np.savez's own parameters) are saved under their names."""
    names = ("file", "allow_pickle")
    g = helper.make_graph([helper.make_node("Neg", ["x"], [names[0]]), helper.make_node("Abs", ["x"], [names[1]])],
                          "savez_names", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in names])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"))
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "x.npy", x)
    out_path = tmp_path / "out.data"  # not .npz: saved under this very name
    code, out, err = run_main(capsys, "run", tmp_path / "m.onnx", "--input", tmp_path / "x.npy", "--output", out_path,
                              "--device", EMU)
    assert code == 0, err
    assert f"outputs saved to {out_path}" in out
    with np.load(out_path) as saved:
        assert sorted(saved) == ["allow_pickle", "file"]
        np.testing.assert_array_equal(saved["file"], -x)
        np.testing.assert_array_equal(saved["allow_pickle"], np.abs(x))


def test_run_named_inputs_of_a_compiled_model(capsys, tmp_path, two_io_path):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    b = rng.standard_normal((2, 8)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    accm = tmp_path / "two_io.accm"
    assert run_main(capsys, "compile", two_io_path, "-o", accm)[0] == 0
    # b by name first, a unnamed: a fills the input left.
    code, out, err = run_main(capsys, "run", accm, "--input", f"b={tmp_path / 'b.npy'}", "--input", tmp_path / "a.npy",
                              "--output", tmp_path / "o.npz")
    assert code == 0, err
    assert "conv_out: shape (1, 4, 8, 8) float32" in out and "mm_out: shape (2, 5) float32" in out
    expected = ort_run(two_io_path, {"a": a, "b": b})
    with np.load(tmp_path / "o.npz") as saved:
        assert sorted(saved) == ["conv_out", "mm_out"]
        for name, want in zip(["conv_out", "mm_out"], expected):
            np.testing.assert_allclose(saved[name], want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("array, message", [
    (np.zeros((1, 3, 32, 32), np.float32), "input 'image': expected shape (1, 3, 64, 64), got (1, 3, 32, 32)"),
    (np.zeros((1, 3, 64, 64), np.float64), "input 'image': expected dtype float32, got float64"),
])
def test_run_reports_a_wrong_input(capsys, tmp_path, array, message):
    np.save(tmp_path / "x.npy", array)
    code, out, err = run_main(capsys, "run", CNN_PATH, "--input", tmp_path / "x.npy")
    assert code == 1 and out == "", (out, err)
    assert err.startswith("accel run: error: ") and message in err and "Traceback" not in err, err


def test_run_reports_wrong_names_and_counts(capsys, image):
    code, _, err = run_main(capsys, "run", CNN_PATH, "--input", f"foo={image[0]}")
    assert code == 1 and "has no input 'foo'" in err, err
    code, _, err = run_main(capsys, "run", CNN_PATH, "--input", image[0], "--input", image[0])
    assert code == 1 and "2 inputs given; model 'tiny_cnn' takes 1: image (1, 3, 64, 64) float32" in err, err


def test_run_reports_a_model_that_cannot_load(capsys, tmp_path, image, unsupported_path):
    code, _, err = run_main(capsys, "run", unsupported_path, "--input", image[0])
    assert code == 1 and "NonZero" in err and "Traceback" not in err, err
    (tmp_path / "junk.accm").write_bytes(b"ACCM" + bytes(60))
    code, _, err = run_main(capsys, "run", tmp_path / "junk.accm", "--input", image[0])
    assert code == 1 and "junk.accm" in err, err


def test_run_usage_errors(capsys, tmp_path, image):
    assert "required: --input" in usage_error(capsys, "run", CNN_PATH)
    assert "MODEL 'nope.onnx': no such file" in usage_error(capsys, "run", "nope.onnx", "--input", image[0])
    assert "--input 'x=nope.npy': no such file" not in usage_error(capsys, "run", CNN_PATH, "--input", "x=nope.npy")
    assert "--input 'nope.npy': no such file" in usage_error(capsys, "run", CNN_PATH, "--input", "x=nope.npy")
    (tmp_path / "text.npy").write_text("not numpy")
    assert "not a NumPy .npy array" in usage_error(capsys, "run", CNN_PATH, "--input", tmp_path / "text.npy")
    assert "no such folder" in usage_error(capsys, "run", CNN_PATH, "--input", image[0], "--output",
                                           tmp_path / "no" / "o.npz")
    assert "--input-shape applies to ONNX models only" in usage_error(
        capsys, "run", tmp_path / "text.npy", "--input", image[0], "--input-shape", "image=1,3,64,64")


def test_run_through_the_console_script(tmp_path, image):
    result = run_script("run", CNN_PATH, "--input", image[0], "--device", EMU, "--output", tmp_path / "o.npz")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("probabilities: shape (1, 10) float32: min ")
    result = run_script("run", CNN_PATH, "--input", f"nope={image[0]}")
    assert result.returncode == 1 and "has no input 'nope'" in result.stderr and "Traceback" not in result.stderr


# ---- bench -------------------------------------------------------------------------------------------

def test_bench_text_and_trace(capsys, tmp_path):
    trace = tmp_path / "trace.json"
    code, out, err = run_main(capsys, "bench", CNN_PATH, "--device", EMU, "--runs", "20", "--jobs", "3",
                              "--trace", trace)
    assert code == 0, err
    assert err == ""  # no progress bar: stderr is not a TTY
    assert re.search(r"^latency: p50 [0-9.]+ ms, p99 [0-9.]+ ms \(20 runs, one at a time\)$", out, re.M), out
    assert re.search(r"^throughput: [0-9.]+ runs/s \(20 runs, 3 jobs in flight on 2 cores: 1 waits in the device's "
                     r"queue\)$", out, re.M), out
    assert f"trace written to {trace} (40 jobs)" in out
    events = json.loads(trace.read_text())["traceEvents"]
    jobs = [e for e in events if e.get("ph") == "X"]
    assert len(jobs) == 40 and all(e["dur"] >= 0 and e["ts"] >= 0 for e in jobs)


@pytest.mark.parametrize("jobs, in_flight", [(None, "1 job in flight"),
                                            ("3", "3 jobs in flight on 1 core: 2 wait in the device's queue")])
def test_bench_says_jobs_that_queue_and_counts_one_in_the_singular(capsys, jobs, in_flight):
    more = [] if jobs is None else ["--jobs", jobs]
    code, out, err = run_main(capsys, "bench", CNN_PATH, "--device", "emu:cores=1", "--runs", "1", *more)
    assert code == 0, err
    assert re.search(r"^latency: .* \(1 run, one at a time\)$", out, re.M), out
    assert re.search(rf"^throughput: [0-9.]+ runs/s \(1 run, {in_flight}\)$", out, re.M), out


def test_bench_json_with_progress_and_integer_inputs(capsys, tmp_path):
    # An int32 input: random inputs follow the model's dtypes.
    g = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], "ints",
                          [helper.make_tensor_value_info("x", TensorProto.INT32, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "ints.onnx"))
    code, out, err = run_main(capsys, "bench", tmp_path / "ints.onnx", "--seconds", "0.2", "--json", "--progress")
    assert code == 0, err
    r = json.loads(out)
    assert r["inputs"] == "x (2, 3) int32" and r["jobs"] == r["cores"] >= 1
    assert r["latency_runs"] >= 1 and r["throughput_runs"] >= 1 and r["throughput_per_s"] > 0
    assert 0 < r["latency_p50_ms"] <= r["latency_p99_ms"]
    assert "latency: " in err and "throughput: " in err  # tqdm's bars, one per phase
    frames = [f.strip() for f in err.split("\r") if f.strip()]
    for phase in ("latency", "throughput"):  # each phase's bar ends at 100%, and only then reads 100%
        mine = [f for f in frames if f.startswith(phase)]
        assert f"{phase}: 100%|" in mine[-1] and all("%|" in f and "100%" not in f for f in mine[:-1]), mine


def test_progress_bar_on_a_log_prints_a_line_each_tenth_and_100_only_when_finished():
    # accel batch's bar (tqdm's) on a stream that is not a terminal: lines, not carriage returns; a count that
    # reaches its total shows 100% only once finish() says the work is over (bench's redrawn bar: the test above).
    from accel.commands.progress import ProgressBar

    log = io.StringIO()
    with ProgressBar(40, log, unit=" rows", lines=True) as bar:
        for done in range(1, 41):
            bar.update_to(done)
        assert "100%" not in log.getvalue()
        bar.finish()
    text = log.getvalue()
    lines = text.splitlines()
    assert "\r" not in text and len(lines) == 10, text
    assert [int(line.split("%")[0]) for line in lines] == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100], text
    assert re.match(r"^100%\|.*\| 40/40 \[", lines[-1]), text
    quiet = io.StringIO()
    with ProgressBar(40, quiet, lines=True, enabled=False) as bar:
        bar.update_to(20)
        bar.finish()
    assert quiet.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stream", [_Terminal, io.StringIO])
def test_a_bars_last_rate_is_the_one_a_command_prints_from_its_seconds(stream):
    """accel batch prints rows / ProgressBar.seconds at the end: the bar's own last figure is that one (the average
    since it started), not tqdm's moving average of its last updates, three times higher here (a fast start)."""
    import time

    from accel.commands.progress import ProgressBar

    shown = stream()
    with ProgressBar(100, shown, unit=" rows", lines=True) as bar:
        bar.update_to(90)
        for done in (91, 92, 93):
            time.sleep(0.3)
            bar.update_to(done)
        bar.finish()
    last = [f for f in re.split(r"[\r\n]", shown.getvalue()) if "100/100" in f][-1]
    rate = float(re.search(r"([0-9.]+) rows/s", last).group(1))
    assert rate == pytest.approx(100 / bar.seconds, rel=0.02), (last, bar.seconds)


def test_a_compile_shows_its_time_so_far_on_a_terminal_only():
    # A compile reports no progress of its own: on a terminal the CLI shows tqdm's bar without a total (the time
    # so far), redrawn while the compile runs and cleared after it; a log gets nothing.
    import time

    from accel.commands.progress import while_running

    terminal = _Terminal()
    with while_running("compiling model.onnx", terminal):
        time.sleep(1.2)
    frames = terminal.getvalue().split("\r")
    drawn = [f for f in frames if f.strip()]
    assert len(drawn) >= 2 and all(re.fullmatch(r"compiling model\.onnx: 00:0\d\s*", f) for f in drawn), frames
    assert frames[-1].strip() == "" and not frames[-2].strip(), frames  # cleared: the line is blank at the end
    log = io.StringIO()
    with while_running("compiling model.onnx", log):
        pass
    assert log.getvalue() == ""


def test_bench_usage_errors(capsys, tmp_path):
    assert "--jobs: expected an integer in [1, 4096], got '0'" in usage_error(capsys, "bench", CNN_PATH, "--jobs", "0")
    assert "--runs: expected an integer in [1, 1e+09], got '0'" in usage_error(capsys, "bench", CNN_PATH, "--runs", "0")
    # A phase that would never end, or a count past what the run counters hold, is a usage error, not a hang.
    for option, value in [("--seconds", "-1"), ("--seconds", "0"), ("--seconds", "inf"), ("--seconds", "1e999"),
                          ("--seconds", "nan"), ("--runs", "1e3"), ("--runs", str(10**30)), ("--jobs", str(2**63))]:
        assert f"{option}: expected a" in usage_error(capsys, "bench", CNN_PATH, option, value), (option, value)
    assert "not allowed with argument" in usage_error(capsys, "bench", CNN_PATH, "--runs", "3", "--seconds", "1")
    assert "--jobs: expected an integer" in usage_error(capsys, "bench", CNN_PATH, "--jobs", "x")
    assert "no such folder" in usage_error(capsys, "bench", CNN_PATH, "--trace", tmp_path / "no" / "t.json")
    assert "MODEL 'nope.onnx': no such file" in usage_error(capsys, "bench", "nope.onnx")


def test_bench_reports_a_bad_device(capsys):
    code, _, err = run_main(capsys, "bench", CNN_PATH, "--device", "emu:cores=0", "--runs", "1")
    assert code == 1 and err.startswith("accel bench: error: ") and "cores='0'" in err, err


# ---- demo --------------------------------------------------------------------------------------------

def test_demo_through_the_console_script():
    result = run_script("demo", "--repeat", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "accel-demo: OK" in result.stdout


def test_demo_usage_error(capsys):
    assert "--repeat: must be a whole number >= 1, got 'x'" in usage_error(capsys, "demo", "--repeat", "x")
    assert "--repeat: must be a whole number >= 1, got '0'" in usage_error(capsys, "demo", "--repeat", "0")
