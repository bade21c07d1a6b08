"""Run records (`accel run --save`, read by `accel compare` and run_record.load) whatever their tensors' names and
whoever wrote them: names that numpy.load's keys would confuse (`x` and `x.npy`), with '/', '%', '\\' and
unicode, read back each from its own entry; old (format 1) records still load; hostile files (a zip bomb, a
.npy header declaring 2^40 elements, deep or overflowing JSON, a .npy renamed .npz, ...) are each refused with a
ModelFormatError naming the file, the entry and the limit, before anything large is allocated."""
from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
import warnings
import zipfile
import zlib

import numpy as np
import pytest
from conftest import onnx_model, run_main
from onnx import helper

import accel
from accel import run_record
from accel.errors import ModelFormatError

pytestmark = pytest.mark.emulator

# Tensors named so that numpy.load's keys of their .npy entries would meet: `x` and `x.npy` (NpzFile takes key
# `x.npy` for the entry `x.npy` of tensor `x`), the escape of `x.npy` spelled out, the record's own key, and
# names with '/', '\\' and unicode. Each is a different function of the input x.
NAMES = ["x.npy", "x%2Enpy", "layer/1/out", "ünï©ode 名前", "__accel_run__", "back\\slash", "y"]
OPS = ["Relu", "Neg", "Abs", "Sigmoid", "Neg", "Tanh", "Exp"]
MIB = 1 << 20


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    """(model path, input path, input array): input `x`, then each of NAMES made from the one before."""
    d = tmp_path_factory.mktemp("named")
    nodes = [helper.make_node(op, [src], [dst]) for op, src, dst in zip(OPS, ["x", *NAMES], NAMES)]
    f32 = np.float32
    path = d / "named.onnx"
    import onnx

    onnx.save(onnx_model(nodes, [("x", f32, [2, 8])], [("y", f32)]), str(path))
    x = np.linspace(-2, 2, 16, dtype=f32).reshape(2, 8)
    np.save(d / "x.npy", x)
    return path, d / "x.npy", x


def expected(path, x):
    with accel.open("emu") as dev:
        m = dev.load(path, extra_outputs="all")
        return {o.name: np.array(r) for o, r in zip(m.outputs, m.run(x))}


def test_names_numpy_would_confuse_read_back_their_own_values(named, tmp_path, capsys):
    path, x_path, x = named
    run, out = tmp_path / "run.npz", tmp_path / "out.npz"
    code, _, err = run_main(capsys, "run", path, "--input", x_path, "--save", run, "--save-intermediates",
                            "--output", out)
    assert code == 0, err
    want = expected(path, x)
    assert set(want) == set(NAMES)
    rec = run_record.load(run)
    assert list(rec.inputs) == ["x"] and list(rec.outputs) == list(want)
    np.testing.assert_array_equal(rec.inputs["x"], x)
    for name, array in want.items():
        np.testing.assert_array_equal(rec.outputs[name], array, err_msg=name)
    plain = run_record.load(out)  # --output: a plain .npz, its escaped names read back as the tensors' own
    assert list(plain.outputs) == list(want) and not plain.inputs
    for name, array in want.items():
        np.testing.assert_array_equal(plain.outputs[name], array, err_msg=name)
    # numpy.load reads both files, each key one tensor: `x` is the input, never another tensor's values.
    with np.load(run) as z:
        np.testing.assert_array_equal(z["x"], x)
        np.testing.assert_array_equal(z["x%2Enpy"], want["x.npy"])
        np.testing.assert_array_equal(z["x%252Enpy"], want["x%2Enpy"])
        assert len(z.files) == len(set(z.files)) == len(NAMES) + 2
    with np.load(out) as z:
        assert sorted(z.files) == sorted(run_record.entry_name(n)[:-4] for n in NAMES)
    # The model against its own run: every tensor identical (x.npy was the input's values: cosine 0.78).
    code, table, err = run_main(capsys, "compare", path, run)
    assert code == 0, err
    rows = [line.split() for line in table.splitlines()[1:-1]]
    assert len(rows) == len(NAMES) + 1 and "x.npy" in table and "no tensor below" in table.splitlines()[-1]
    assert all(r[r.index("float32/float32") + 1:r.index("float32/float32") + 3] == ["1.000000", "0"]
               for r in rows), table


def test_a_format_1_record_reads_each_tensor_by_its_exact_entry(tmp_path):
    """Format 1 (before escaping) wrote each tensor as NAME.npy: `x` and `x.npy` as x.npy and x.npy.npy."""
    x, other = np.arange(4, dtype=np.float32), -np.ones(4, np.float32)
    meta = {"format": 1, "model": "m.onnx", "device": "emu", "inputs": ["x"], "outputs": ["x.npy"], "quant": {}}
    path = tmp_path / "old.npz"
    with zipfile.ZipFile(path, "w") as z:
        for entry, array in (("x.npy", x), ("x.npy.npy", other), ("__accel_run__.npy", np.array(json.dumps(meta)))):
            with z.open(entry, "w") as f:
                np.lib.format.write_array(f, array)
    rec = run_record.load(path)
    np.testing.assert_array_equal(rec.inputs["x"], x)
    np.testing.assert_array_equal(rec.outputs["x.npy"], other)
    assert rec.model == "m.onnx"


def test_entry_names_never_meet_under_numpys_keys():
    names = ["x", "x.npy", "x%2Enpy", "x.npy.npy", "%", "%25", "a\0b", "a%00b", "a\\b", "a/b", "__accel_run__",
             "%5F_accel_run__", ""]
    entries = [run_record.entry_name(n) for n in names]
    keys = [e[:-4] for e in entries]
    assert all(e.endswith(".npy") for e in entries) and len(set(entries)) == len(names)
    assert not any(k.endswith(".npy") for k in keys)  # NpzFile would take key k for entry k
    assert "__accel_run__.npy" not in entries and "\0" not in "".join(entries)
    with pytest.raises(ValueError, match="not valid Unicode"):
        run_record.entry_name("bad\udc80")


# ---- hostile files --------------------------------------------------------------------------------------


def npy_header(shape, descr="<f4", version=1):
    """The bytes of a .npy header (numpy's own writer) declaring ``shape`` of ``descr``."""
    import io

    buf = io.BytesIO()
    d = {"descr": descr, "fortran_order": False, "shape": tuple(shape)}
    (np.lib.format.write_array_header_1_0 if version == 1 else np.lib.format.write_array_header_2_0)(buf, d)
    return buf.getvalue()


def zip_file(path, entries):
    """Writes a zip by hand, sizes as given (zipfile would compute them): entries are (name, raw bytes as stored,
    method, declared size, crc), every size in a zip64 extra field."""
    out, central = bytearray(), bytearray()
    for name, raw, method, size, crc in entries:
        encoded = name.encode()
        extra = struct.pack("<HHQQ", 1, 16, size, len(raw))
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0x800, method, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                           len(encoded), len(extra)) + encoded + extra + raw
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0x800, method, 0, 0x21, crc, 0xFFFFFFFF,
                               0xFFFFFFFF, len(encoded), len(extra), 0, 0, 0, 0, offset) + encoded + extra
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(out), 0)
    path.write_bytes(bytes(out + central + end))
    return path


def zip_bomb(path, gib):
    """A .npz whose one entry truly inflates to ``gib`` GiB of zeros (plus its header) from about a MiB per GiB
    on disk: each MiB of zeros deflates, after a full flush, to the same kilobyte. Its CRC is left 0: nothing
    reads that far."""
    header = npy_header(((gib << 30) // 4,))
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(bytes(MIB)) + c.flush(zlib.Z_FULL_FLUSH)
    raw = start + block * (gib << 10) + c.flush()
    return zip_file(path, [("x.npy", raw, zipfile.ZIP_DEFLATED, len(header) + (gib << 30), 0)])


def stored(path, entries):
    """A zip of stored entries (name, bytes) with their true sizes and CRCs."""
    return zip_file(path, [(n, b, zipfile.ZIP_STORED, len(b), zlib.crc32(b)) for n, b in entries])


def npy_bytes(array):
    import io

    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array), allow_pickle=True)
    return buf.getvalue()


def record_with_json(path, text):
    """A record whose description is ``text`` (JSON as given), with one input x."""
    return stored(path, [("__accel_run__.npy", npy_bytes(np.array(text))), ("x.npy", npy_bytes(np.zeros(2)))])


def meta_json(**changes):
    meta = {"format": 2, "model": "m", "device": "d", "inputs": ["x"], "outputs": [], "entries": {"x": "x.npy"},
            "quant": {}}
    meta.update(changes)
    return json.dumps(meta)


def huge_header(path):
    return stored(path, [("x.npy", npy_header((1 << 40,)) + bytes(64))])


def duplicate(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it writes
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("x.npy", npy_bytes(np.zeros(2)))
            z.writestr("x.npy", npy_bytes(np.ones(2)))
    return path


def bz2_entry(path):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as z:
        z.writestr("x.npy", npy_bytes(np.zeros(2)))
    return path


def truncated(path):
    run_record.write_npz(path, {"x": np.zeros(1000)})
    data = path.read_bytes()
    path.write_bytes(data[:100] + data[-200:])  # an entry's data cut out, the central directory kept
    return path


HOSTILE = {
    "huge .npy header": (huge_header, r"entry 'x.npy': its \.npy header declares shape \(1099511627776,\) of "
                                      r"float32 \(4398046511104 bytes \(4\.0 TiB\)\), more than the limit of "
                                      r"4294967296 bytes \(4\.0 GiB\)"),
    "deep JSON": (lambda p: record_with_json(p, meta_json(model="@").replace('"@"', "[" * 100000 + "]" * 100000)),
                  r"entry '__accel_run__\.npy': its JSON nests 100001 deep, more than a record's limit of 8"),
    "format 1e999": (lambda p: record_with_json(p, meta_json().replace('"format": 2', '"format": 1e999')),
                     r"format inf is not a format number"),
    "format from the future": (lambda p: record_with_json(p, meta_json(format=3)), r"format 3 is newer than"),
    "a 5000-digit zero point": (lambda p: record_with_json(p, meta_json(quant={"x": {"type": "per_tensor"}})
                                                           .replace('"per_tensor"', '"per_tensor", "zero_points": ['
                                                                    + "9" * 5000 + "]")),
                                r"not a record's JSON: an integer of 5000 digits"),
    "a NaN scale": (lambda p: record_with_json(p, meta_json(quant={"x": {"type": "per_tensor", "scales": [1.0]}})
                                               .replace("1.0", "NaN")), r"quant of 'x': scales is not a list of "
                                                                        r"finite numbers"),
    "a JSON list": (lambda p: record_with_json(p, "[1, 2]"), r"its JSON is a list, not an object"),
    "a tensor without entry": (lambda p: record_with_json(p, meta_json(entries={})), r"tensor 'x' has no entry"),
    "an entry not in the file": (lambda p: record_with_json(p, meta_json(entries={"x": "z.npy"})),
                                 r"has no entry 'z\.npy', which its record lists"),
    "a tensor listed twice": (lambda p: record_with_json(p, meta_json(outputs=["x"])), r"tensor 'x' is listed twice"),
    ".npy renamed .npz": (lambda p: (np.save(p.with_suffix(".npy"), np.zeros(3)), p.with_suffix(".npy").rename(p))[1],
                          r"is a \.npy array, not a \.npz file of named arrays"),
    "text": (lambda p: (p.write_text("hello"), p)[1], r"is not a \.npz file \(a zip of \.npy arrays\)"),
    "an object array": (lambda p: stored(p, [("x.npy", npy_bytes(np.array([{}], object)))]),
                        r"entry 'x\.npy': holds dtype '\|O'; expected a plain array of booleans, integers"),
    "a 4 GiB .npy header": (lambda p: stored(p, [("x.npy", npy_header((2,), version=2)[:8]
                                                  + struct.pack("<I", 0xFFFFFFF0) + b"{")]),
                            r"its \.npy header declares 4294967280 bytes .*, more than the limit of 65536 bytes"),
    "sizes that disagree": (lambda p: stored(p, [("x.npy", npy_header((1 << 20,)) + bytes(64))]),
                            r"declares shape \(1048576,\) of float32 \(4194304 bytes \(4\.0 MiB\) of data\), but it "
                            r"holds 64 bytes"),
    "a bzip2 entry": (bz2_entry, r"entry 'x\.npy': compression method 12 is not one accel reads"),
    "an entry twice": (duplicate, r"holds entry 'x\.npy' twice"),
    "a truncated zip": (truncated, r"(damaged|not a readable \.npz)"),
    "not an array": (lambda p: stored(p, [("notes.txt", b"hi")]), r"holds entry 'notes\.txt', not a \.npy array"),
}


def maxrss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_records_are_refused_by_name_in_bounded_memory(case, named, tmp_path, capsys):
    build, words = HOSTILE[case]
    path = build(tmp_path / "run.npz")
    assert path.stat().st_size < MIB
    before = maxrss_bytes()
    with pytest.raises(ModelFormatError, match=words) as caught:
        run_record.load(path)
    assert f"run record {str(path)!r}" in str(caught.value)
    code, _, err = run_main(capsys, "compare", named[0], path)
    assert code == 1 and f"accel compare: error: run record {str(path)!r}" in err and "Traceback" not in err, err
    assert maxrss_bytes() - before < 200 * MIB


def test_a_record_past_the_limit_given(tmp_path):
    run_record.save(tmp_path / "run.npz", run_record.RunRecord(inputs={"x": np.zeros(1000)},
                                                               outputs={"y": np.zeros(2000)}))
    with pytest.raises(ModelFormatError, match=r"its 2 arrays declare 24\d\d\d bytes .* in all \(entry 'y\.npy': "
                                               r"16\d\d\d bytes .*\), more than the limit of 20000 bytes"):
        run_record.load(tmp_path / "run.npz", max_bytes=20000)
    assert run_record.load(tmp_path / "run.npz", max_bytes=30000).outputs["y"].shape == (2000,)


def test_a_zip_bomb_is_refused_before_it_inflates(named, tmp_path):
    """6 MB on disk, 6 GiB inflated: refused by its declared size, in a process that cannot map 1 GiB more."""
    bomb = zip_bomb(tmp_path / "bomb.npz", 6)
    assert bomb.stat().st_size < 8 * MIB
    script = f"""
import json, resource, sys
import accel
from accel import cli
vm = int(open("/proc/self/status").read().split("VmPeak:")[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), vm + (1 << 30)))
code = cli.main(["compare", {str(named[0])!r}, {str(bomb)!r}])
# VmHWM, not ru_maxrss: Linux carries the parent's (pytest's) peak across fork and exec into ru_maxrss.
rss = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(json.dumps({{"code": code, "rss": rss}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    assert (f"accel compare: error: run record {str(bomb)!r}, entry 'x.npy': declares 6442451072 bytes (6.0 GiB), "
            f"more than the limit of 4294967296 bytes (4.0 GiB)") in done.stderr, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 1 and result["rss"] < 400 * MIB


def test_a_hostile_npy_input_is_a_usage_error(named, tmp_path, capsys):
    """`accel run --input` (and compare's) read .npy files the same bounded way."""
    path = tmp_path / "big.npy"
    path.write_bytes(npy_header((1 << 40,)) + bytes(64))
    before = maxrss_bytes()
    for verb in (["run", named[0]], ["compare", named[0], named[0]]):
        code, _, err = run_main(capsys, *verb, "--input", path)
        assert code == 2 and "Traceback" not in err, err
        assert (f"--input {str(path)!r}: its .npy header declares shape (1099511627776,) of float32 "
                f"(4398046511104 bytes (4.0 TiB)), more than the limit of 4294967296 bytes (4.0 GiB)") in err, err
    assert maxrss_bytes() - before < 200 * MIB
