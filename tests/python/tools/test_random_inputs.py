"""The random inputs of accel compare, bench and selftest (accel.comparison.inputs.random_array, one definition):
an integer input whose values are positions (token ids into an embedding table, through Cast and Reshape;
GatherElements, GatherND and ScatterND indices, OneHot indices, RNN sequence lengths) is drawn from [0, the
smallest table), read from an ONNX graph or an .accm (accel.comparison.index_inputs), so that a run on them is
not refused (the emulator fails a run on an index past its table, as onnxruntime does). Checked on a BERT-like
model with a 2-row token-type embedding and a 30-row word embedding, and its QDQ version."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import onnx_model, run_main
from onnx import TensorProto, helper

import accel
from accel import compiler
from accel.comparison import index_inputs, inputs
from accel.selftest import PASS, SKIP, checks_runs, framework, run_selftest
from accel import TensorInfo

pytestmark = pytest.mark.emulator

TOKENS, WIDTH, VOCAB, TYPES = 16, 32, 30, 2
LIMITS = {"input_ids": VOCAB, "token_type_ids": TYPES}


def bert_like() -> onnx.ModelProto:
    """Word embedding (30 rows) of int64 ids, token-type embedding (2 rows) of int32 ids through Cast and Reshape,
    position embedding, LayerNormalization and a MatMul: BERT's first layers in small."""
    r = np.random.default_rng(0)
    inits = {"word_emb": r.standard_normal((VOCAB, WIDTH)), "tt_emb": r.standard_normal((TYPES, WIDTH)),
             "pos_emb": r.standard_normal((1, TOKENS, WIDTH)) * 0.1, "gamma": np.ones(WIDTH),
             "beta": np.zeros(WIDTH), "w": r.standard_normal((WIDTH, 8)) * 0.2}
    inits = {k: v.astype(np.float32) for k, v in inits.items()}
    inits.update(flat=np.array([TOKENS], np.int64), axes=np.array([0], np.int64))
    nodes = [helper.make_node("Gather", ["word_emb", "input_ids"], ["word"], name="word_embeddings"),
             helper.make_node("Cast", ["token_type_ids"], ["tt64"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["tt64", "flat"], ["tt_flat"]),
             helper.make_node("Gather", ["tt_emb", "tt_flat"], ["tt_rows"], name="token_type_embeddings"),
             helper.make_node("Unsqueeze", ["tt_rows", "axes"], ["tt"]),
             helper.make_node("Add", ["word", "tt"], ["sum1"]), helper.make_node("Add", ["sum1", "pos_emb"], ["emb"]),
             helper.make_node("LayerNormalization", ["emb", "gamma", "beta"], ["norm"], axis=-1),
             helper.make_node("MatMul", ["norm", "w"], ["logits"])]
    return onnx_model(nodes, [("input_ids", "int64", (1, TOKENS)), ("token_type_ids", "int32", (1, TOKENS))],
                      [("logits", "float32")], inits)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    """(float ONNX, its QDQ version by onnxruntime's quantize_static, its .accm) paths."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    folder = tmp_path_factory.mktemp("bert_like")
    float_path, qdq_path, accm_path = folder / "bert.onnx", folder / "bert_qdq.onnx", folder / "bert.accm"
    onnx.save(bert_like(), float_path)
    r = np.random.default_rng(1)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.sets = iter([{"input_ids": r.integers(0, VOCAB, (1, TOKENS)),
                               "token_type_ids": r.integers(0, TYPES, (1, TOKENS)).astype(np.int32)}
                              for _ in range(4)])

        def get_next(self):
            return next(self.sets, None)

    quantize_static(str(float_path), str(qdq_path), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QUInt8)
    compiler.compile_file(str(float_path), str(accm_path))
    return float_path, qdq_path, accm_path


def test_index_limits_of_the_onnx_the_qdq_and_the_accm_model(bert):
    for path in bert:
        assert index_inputs.index_limits([path]) == LIMITS, path.name
    assert index_inputs.index_limits([]) == {}


def in_range(feeds):
    """Every id inside its table, and the draws cover it (not all zeros)."""
    for name, n in LIMITS.items():
        ids = np.asarray(feeds[name])
        assert ids.min() >= 0 and ids.max() < n, (name, ids)
        assert ids.max() > 0, (name, ids)


def test_compare_and_selftest_inputs_stay_in_range(bert):
    float_path, qdq_path, _ = bert
    with accel.Device("emu") as dev:
        model = dev.load(float_path)
        for feeds in inputs.random_sets(model.inputs, 5, seed=3, limits=index_inputs.index_limits(bert[:2])):
            in_range(feeds)
        ctx = framework.Context("emu", float_path, framework.QUICK, compare_model=qdq_path)
        ctx.model = model
        for seed in range(3):
            in_range(dict(zip([i.name for i in model.inputs], checks_runs.random_inputs(ctx, seed))))
        assert ctx.index_limits == LIMITS


def test_bench_and_selftest_run_the_model(bert, capsys):
    float_path, _, accm_path = bert
    for path in (float_path, accm_path):
        code, out, err = run_main(capsys, "bench", path, "--runs", "3")
        assert code == 0 and "latency" in out, out + err
    report = run_selftest("emu", float_path, quick=True)
    bad = [(r.name, r.status, r.summary) for r in report.results if r.status not in (PASS, SKIP)]
    assert not bad and any(r.name == "sync_run" and r.status == PASS for r in report.results), bad


def test_compare_float_against_its_qdq_model_does_not_blame_the_embedding(bert):
    float_path, qdq_path, _ = bert
    result = accel.compare(float_path, qdq_path, random=4)
    rows = {r.tensor: r for r in result}
    for name in ("word", "tt_rows", "tt", "emb", "logits"):
        assert rows[name].cosine is not None and rows[name].cosine > 0.999, (name, rows[name])
    assert result.first_below is None


# ---- the other position operands, one small graph each -------------------------------------------------------

def limits_of(tmp_path, nodes, ins, inits=None, opset=17):
    path = tmp_path / "m.onnx"
    m = onnx_model(nodes, ins, [("y", "float32")], inits or {}, opset=opset)
    onnx.save(m, path)
    return index_inputs.index_limits([path])


def test_gather_elements_gather_nd_scatter_nd_and_onehot(tmp_path):
    table = {"t": np.zeros((7, 5), np.float32)}
    assert limits_of(tmp_path, [helper.make_node("GatherElements", ["t", "i"], ["y"], axis=1)],
                     [("i", "int64", (7, 2))], table) == {"i": 5}
    assert limits_of(tmp_path, [helper.make_node("GatherND", ["t", "i"], ["y"])], [("i", "int64", (3, 1))],
                     table) == {"i": 7}
    assert limits_of(tmp_path, [helper.make_node("GatherND", ["t", "i"], ["y"])], [("i", "int64", (3, 2))],
                     table) == {"i": 5}
    assert limits_of(tmp_path, [helper.make_node("ScatterND", ["t", "i", "u"], ["y"])],
                     [("i", "int64", (2, 1)), ("u", "float32", (2, 5))], table) == {"i": 7}
    assert limits_of(tmp_path, [helper.make_node("OneHot", ["i", "d", "v"], ["y"])], [("i", "int32", (4,))],
                     {"d": np.array(9, np.int64), "v": np.array([0, 1], np.float32)}) == {"i": 9}


def test_a_value_that_is_not_a_position_keeps_the_default_range(tmp_path):
    """Ids that go through arithmetic, or that are the gathered data, are not positions of a table."""
    table = {"t": np.zeros((3, 4), np.float32), "one": np.array(1, np.int64)}
    added = [helper.make_node("Add", ["i", "one"], ["j"]), helper.make_node("Gather", ["t", "j"], ["y"])]
    assert limits_of(tmp_path, added, [("i", "int64", (2,))], table) == {}
    data = [helper.make_node("Gather", ["i", "k"], ["g"]), helper.make_node("Cast", ["g"], ["y"], to=1)]
    assert limits_of(tmp_path, data, [("i", "int64", (5,)), ("k", "int64", (2,))]) == {"k": 5}


def test_the_smallest_table_and_concat(tmp_path):
    """One input indexing two tables (through a Concat): the smaller counts."""
    tables = {"big": np.zeros((40, 2), np.float32), "small": np.zeros((6, 2), np.float32),
              "more": np.array([1], np.int64)}
    nodes = [helper.make_node("Gather", ["big", "i"], ["a"]),
             helper.make_node("Concat", ["more", "i"], ["c"], axis=0),
             helper.make_node("Gather", ["small", "c"], ["b"]), helper.make_node("Sum", ["a", "a"], ["y"])]
    assert limits_of(tmp_path, nodes, [("i", "int64", (3,))], tables) == {"i": 6}


@pytest.mark.parametrize("layout", [0, 1])
def test_rnn_sequence_lengths_are_zero_to_the_steps(tmp_path, layout):
    x_shape = (3, 5, 2) if layout else (5, 3, 2)  # 5 steps, batch 3
    w = {"W": np.zeros((1, 4, 2), np.float32), "R": np.zeros((1, 4, 4), np.float32)}
    node = helper.make_node("RNN", ["x", "W", "R", "", "L"], ["y"], hidden_size=4, layout=layout)
    limits = limits_of(tmp_path, [node], [("x", "float32", x_shape), ("L", "int32", (3,))], w, opset=14)
    assert limits == {"L": 6}


def _info(name, shape, dtype):
    return TensorInfo(name, shape, np.dtype(dtype))


def test_random_array_draws_the_limit_whole_and_keeps_the_defaults():
    rng = np.random.default_rng(0)
    ids = inputs.random_array(_info("ids", (4000,), "int64"), rng, 2)
    assert set(np.unique(ids)) == {0, 1}
    assert inputs.random_array(_info("ids", (4000,), "int64"), rng).max() == 16
    small = inputs.random_array(_info("q", (4000,), "uint8"), rng, 1000)  # a limit past the dtype's range
    assert small.dtype == np.uint8 and small.max() == 255
    floats = inputs.random_array(_info("x", (100,), "float32"), rng, 3)
    assert floats.dtype == np.float32 and floats.min() >= 0 and floats.max() < 1


def test_files_that_say_nothing_add_nothing(bert, tmp_path):
    """A vendor's model, or a file no reader can parse, adds no limit; loading the model reports what is wrong
    with it (compare's B is read for its limits before it loads)."""
    for name, data in (("garbage.onnx", b"\x08\x01 not a model"), ("garbage.accm", b"ACCM short"),
                       ("vendor.bin", b"\0" * 64)):
        (tmp_path / name).write_bytes(data)
        assert index_inputs.index_limits([tmp_path / name]) == {}
    with pytest.raises(accel.ModelFormatError, match=r"garbage\.onnx"):
        accel.compare(bert[0], tmp_path / "garbage.onnx")
