"""Devices describe themselves: URIs split by libaccel's one parser (accel.runtime.device_uri), what a device loads
and how it computes as its driver says (accel.describe, Device.capabilities), and the registry of model front ends
that Device.load chooses from by what the device loads and the file's format (accel.front_ends)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import accel
from accel import front_ends
from accel.runtime.capabilities import UNKNOWN, describe_or_unknown
from accel.commands.info import default_uri
from accel.runtime.device_uri import DeviceUri, parse_uri
from accel.front_ends import FrontEnd
from accel.front_ends.onnx import ACCM_MAGIC, ONNX
from accel.selftest.checks_compare import default_rules
from conftest import BACKEND, DEVICE_URI

ALL_FRAMES = frozenset({"nv12", "nv12_y", "nv12_uv", "y", "yuv444", "rgb", "bgr"})

# What each driver of the tree says of its devices (libaccel's C test checks the same through the ABI).
KNOWN = {
    "emu": accel.DeviceCapabilities(model_format="accm", file_suffixes=(".accm",), int8_rules="ort",
                                    int8_option=True, node_times=True, host_cpus=True, image_formats=ALL_FRAMES,
                                    first_device=""),
    "bpu": accel.DeviceCapabilities(model_format="hbm", file_suffixes=(".bin", ".hbm"), int8_rules="bpu",
                                    int8_option=False, node_times=False, host_cpus=False,
                                    image_formats=frozenset({"nv12", "y", "yuv444", "rgb", "bgr"}),
                                    first_device="0"),
    "vart": accel.DeviceCapabilities(model_format="xmodel", file_suffixes=(".xmodel",), int8_rules="dpu",
                                     int8_option=False, node_times=False, host_cpus=False,
                                     image_formats=frozenset(), first_device="0", loads_subgraph=True),
}


# ---- the one URI parser ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("uri, scheme, options", [
    ("emu", "emu", ()),
    ("emu:", "emu", ()),
    ("emu:cores=2,int8=dpu", "emu", (("cores", "2"), ("int8", "dpu"))),
    ("bpu:0", "bpu", (("0", None),)),
    ("emu:a,,b=", "emu", (("a", None), ("", None), ("b", ""))),
    ("x:k=v=w", "x", (("k", "v=w"),)),
    ("vart:path=a:b", "vart", (("path", "a:b"),)),
    ("émû:clé=vä", "émû", (("clé", "vä"),)),
])
def test_parse_uri(uri, scheme, options):
    u = parse_uri(uri)
    assert (u.scheme, u.options) == (scheme, options)
    assert parse_uri(str(u)) == u  # str() gives a URI that parses back the same


def test_uri_options_are_read_and_set_by_key():
    u = parse_uri("emu:cores=2,int8=ort,int8=dpu")
    assert u.option("int8") == "dpu" and u.option("cores") == "2" and u.option("pool") is None
    assert u.keys == {"cores", "int8"}
    assert str(u.without("int8").with_option("int8", "bpu")) == "emu:cores=2,int8=bpu"
    assert str(DeviceUri("bpu", (("0", None),))) == "bpu:0"


@pytest.mark.parametrize("uri", ["", ":", ":cores=2"])
def test_a_uri_without_a_scheme_is_refused_by_the_parser(uri):
    with pytest.raises(accel.InvalidArgumentError, match=f"URI '{uri}' has no scheme"):
        parse_uri(uri)


def test_the_parser_refuses_what_c_would_misread():
    with pytest.raises(accel.InvalidArgumentError, match="holds a NUL character"):
        parse_uri("emu\0:cores=2")
    with pytest.raises(accel.InvalidArgumentError, match="holds a NUL character"):
        accel.open("emu\0bogus")
    with pytest.raises(TypeError, match="uri must be a str"):
        parse_uri(b"emu")  # type: ignore[arg-type]


# ---- the device query ------------------------------------------------------------------------------------------------

@pytest.mark.emulator
def test_the_emulator_describes_itself():
    assert accel.describe("emu") == KNOWN["emu"]
    assert accel.describe("emu:cores=2,int8=dpu").int8_rules == "dpu"
    assert accel.describe("emu:int8=bpu").int8_rules == "bpu"
    with accel.open("emu:int8=dpu") as d:
        assert d.capabilities == dataclasses.replace(KNOWN["emu"], int8_rules="dpu")


def test_the_device_under_test_describes_itself(dev):
    assert dev.capabilities == dataclasses.replace(KNOWN[BACKEND], int8_rules=accel.describe(DEVICE_URI).int8_rules)
    assert dev.capabilities.int8_rules in ("ort", "dpu", "bpu")


@pytest.mark.emulator
def test_describe_checks_the_uri_as_open_does():
    with pytest.raises(accel.InvalidArgumentError, match="int8='fp16' is not a known rule set"):
        accel.describe("emu:int8=fp16")
    with pytest.raises(accel.NotFoundError, match="no driver for scheme 'nosuch'"):
        accel.describe("nosuch:0")
    with pytest.raises(accel.InvalidArgumentError, match="has no scheme"):
        accel.describe(":0")
    # A scheme with no driver on this host is taken for hardware of its own that says nothing.
    assert describe_or_unknown("nosuch:0") is UNKNOWN and not UNKNOWN.host_cpus and not UNKNOWN.int8_option


@pytest.mark.emulator
def test_what_generic_modules_ask_the_device():
    assert default_uri("emu") == "emu" and default_uri("nosuch") == "nosuch"
    assert KNOWN["bpu"].first_uri("bpu") == "bpu:0"
    assert default_rules("emu:cores=2,int8=bpu") == "bpu" and default_rules("emu") == "ort"
    assert default_rules("nosuch:0") == "ort"


# ---- the front-end registry ------------------------------------------------------------------------------------------

@pytest.fixture
def registry(monkeypatch):
    """The registry, restored after the test."""
    monkeypatch.setattr(front_ends, "_FRONT_ENDS", list(front_ends._FRONT_ENDS))
    return front_ends


def test_onnx_is_registered_for_the_devices_that_load_accm():
    assert ONNX in front_ends.registered()
    assert front_ends.choose("accm", b"\x08\x07", "") is ONNX       # bytes that start as a ModelProto does
    assert front_ends.choose("accm", b"\x00\x01", ".onnx") is ONNX  # named so
    assert front_ends.choose("accm", ACCM_MAGIC + b"\x01", ".onnx") is None  # an .accm file whatever its name
    assert front_ends.choose("hbm", b"\x08\x07", ".onnx") is None   # a board loads its own files as they are
    assert front_ends.foreign(".onnx") is ONNX and front_ends.foreign(".hbm") is None
    # A Horizon .bin is a board's own file, and the emulator's through its front end (docs/horizon-bin.md).
    assert front_ends.foreign(".bin").name == "Horizon .bin"
    assert front_ends.choose("accm", b"\x0a\x01", ".bin").name == "Horizon .bin"
    assert front_ends.choose("hbm", b"\x0a\x01", ".bin") is None


@pytest.mark.emulator
def test_a_registered_front_end_is_chosen_by_the_file_and_the_device(registry, tiny_accm, tmp_path):
    calls = []

    def load(request, load_native):
        calls.append((request.what, request.path, request.int8_rules))
        # The "format": an .accm file behind a header of four bytes.
        return load_native(bytes(memoryview(request.data).cast("B"))[4:]), 0

    registry.register(FrontEnd(name="Wrapped", suffixes=(".wrapped",), produces="accm",
                               claims=lambda head, suffix: suffix == ".wrapped", load=load, options=()))
    path = tmp_path / "tiny.wrapped"
    path.write_bytes(b"WRAP" + tiny_accm.read_bytes())
    with accel.open("emu:int8=dpu") as d:
        model = d.load(path)
        assert [i.name for i in model.inputs] == [i.name for i in d.load(tiny_accm).inputs]
        assert calls == [(repr(str(path)), str(path), "dpu")]
        with pytest.raises(accel.InvalidArgumentError, match="input_shapes applies to ONNX models only"):
            d.load(path, input_shapes={"x": (1, 4)})
    # Registering a format again replaces it; anything but a FrontEnd is refused.
    registry.register(dataclasses.replace(registry.registered()[-1], suffixes=(".w2",)))
    assert [f.name for f in registry.registered()].count("Wrapped") == 1
    with pytest.raises(TypeError, match=r"register\(\) takes an accel\.front_ends\.FrontEnd"):
        registry.register("onnx")  # type: ignore[arg-type]


@pytest.mark.emulator
def test_a_device_that_loads_another_format_refuses_onnx(dev, tiny_path, monkeypatch):
    # The stand-in SDKs' devices are tested in the vendor CI job; a device that says it loads .hbm stands in here.
    monkeypatch.setattr(dev, "_capabilities", KNOWN["bpu"])
    with pytest.raises(accel.UnsupportedError, match=r"cannot load ONNX models \('.*tiny.onnx'\): it loads hbm "
                                                     r"models \(.bin, .hbm\); .* loads accm models \('emu'\)"):
        dev.load(tiny_path)
    with pytest.raises(accel.UnsupportedError, match="device ops and fusion scopes compile models on the fly"):
        dev.ops.relu(dev.tensor(np.array([1.0, -1.0], np.float32)))
