"""Board scripts for tests/python/shims/test_horizon.py, written the way RDK's own samples and users' applications
use Horizon's Python APIs (rdk_model_zoo's X5 demos for pyeasy_dnn, rdk_s_doc's quick start for hbm_runtime): each
is saved to a file and run unchanged under ``python -m accel.shims horizon -- python script.py ARGS``. They print one
JSON report on stdout and save their outputs with np.savez; a bad use prints the error's class names and message.
"""

# X5 detector style: load the .bin, read the input's size from its properties, feed an NV12 frame (flat, as the
# samples' bgr2nv12 returns it), read each output's buffer and scale_data. Also: the list form with scheduling
# arguments, model.outputs after the run, and threads sharing the model. argv: model.bin picture.npy out.npz
PYEASY_NV12 = '''
import json
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from hobot_dnn import pyeasy_dnn as dnn

import accel.image


def describe(t):
    p = t.properties
    return {"name": t.name, "tensor_type": p.tensor_type, "dtype": p.dtype, "layout": p.layout,
            "shape": list(p.shape), "validShape": list(p.validShape), "alignedShape": list(p.alignedShape),
            "scale_data": p.scale_data.tolist(), "quantiType": p.quantiType}


models = dnn.load(sys.argv[1])
model = models[0]
props = model.inputs[0].properties
if props.layout == "NCHW":
    h, w = props.shape[2], props.shape[3]
else:
    h, w = props.shape[1], props.shape[2]
bgr = np.load(sys.argv[2])
assert bgr.shape[:2] == (h, w), (bgr.shape, h, w)
nv12 = accel.image.bgr_to_nv12(bgr).reshape((h * w * 3 // 2,))
kept = nv12.copy()
outputs = model.forward(nv12)
buffers = [t.buffer for t in outputs]
again = model.forward([nv12], core_id=0, priority=5)
assert np.array_equal(nv12, kept), "the frame was written"
assert all(np.array_equal(a.buffer, b) for a, b in zip(again, buffers))
assert all(np.array_equal(a.buffer, b) for a, b in zip(model.outputs, buffers))
with ThreadPoolExecutor(4) as pool:   # one model shared by camera threads
    for outs in pool.map(lambda _: model.forward(nv12), range(8)):
        assert all(np.array_equal(a.buffer, b) for a, b in zip(outs, buffers))
np.savez(sys.argv[3], *buffers)
print(json.dumps({"name": model.name, "count": len(models), "inputs": [describe(t) for t in model.inputs],
                  "outputs": [describe(t) for t in outputs], "latency": model.estimate_latency}))
'''

# An RGB-input .bin fed an RGB picture: the board's X5 binding subtracts 128 from it in place; the caller's array
# must come back as it was. argv: model.bin picture.npy out.npz
PYEASY_RGB = '''
import json
import sys

import numpy as np
from hobot_dnn import pyeasy_dnn as dnn

model = dnn.load([sys.argv[1]])[0]
rgb = np.load(sys.argv[2])
kept = rgb.copy()
outputs = model.forward(rgb)
np.savez(sys.argv[3], *[t.buffer for t in outputs])
print(json.dumps({"unchanged": bool(np.array_equal(rgb, kept)), "tensor_type": model.inputs[0].properties.tensor_type,
                  "layout": model.inputs[0].properties.layout, "shape": list(model.inputs[0].properties.shape)}))
'''

# Each bad use of pyeasy_dnn, caught and reported. argv: featuremap.bin nv12.bin lonely.bin
PYEASY_BAD = '''
import json
import sys

import numpy as np
from hobot_dnn import pyeasy_dnn as dnn

report = {}


def attempt(case, fn):
    try:
        fn()
        report[case] = None
    except Exception as e:
        report[case] = [[c.__name__ for c in type(e).__mro__], str(e)]


fm = dnn.load(sys.argv[1])[0]
shape = tuple(fm.inputs[0].properties.shape)
x = np.random.default_rng(0).random(shape, dtype=np.float32)
nchw = fm.forward(x)[0].buffer
flat = fm.forward(x.reshape(-1))[0].buffer
report["flat_same"] = bool(np.array_equal(nchw, flat))
attempt("float64", lambda: fm.forward(x.astype(np.float64)))
attempt("short", lambda: fm.forward(x.reshape(-1)[:-1]))
attempt("count", lambda: fm.forward([x, x]))
attempt("none", lambda: fm.forward([]))
attempt("list_item", lambda: fm.forward([x.tolist()]))
attempt("not_container", lambda: fm.forward("x"))
attempt("priority", lambda: fm.forward(x, priority=300))
attempt("core_id", lambda: fm.forward(x, core_id=7))
nv = dnn.load(sys.argv[2])[0]
frame = np.zeros(nv.inputs[0].properties.shape[2] * nv.inputs[0].properties.shape[3] * 3 // 2, np.uint8)
attempt("frame_float", lambda: nv.forward(frame.astype(np.float32)))
attempt("frame_short", lambda: nv.forward(frame[:-2]))
attempt("no_source", lambda: dnn.load(sys.argv[3]))
attempt("missing", lambda: dnn.load(sys.argv[3] + ".nope"))
attempt("load_type", lambda: dnn.load(3))
print(json.dumps(report))
'''

# S100 quick-start style: several files, metadata by model name, the single-input, {name: array} and
# {model: {name: array}} forms, default and per-call scheduling, and one runtime shared by threads.
# argv: cnn.hbm two_io.onnx nv12.bin inputs.npz out.npz
HBM_RUN = '''
import json
import sys
import threading

import numpy as np
from hbm_runtime import HB_HBMRuntime

hb_dtype_map = {"U8": np.uint8, "S8": np.int8, "F32": np.float32, "F16": np.float16, "S16": np.int16,
                "U16": np.uint16, "S32": np.int32, "U32": np.uint32, "BOOL8": np.bool_}

rt = HB_HBMRuntime([sys.argv[1], sys.argv[2], sys.argv[3]])
data = np.load(sys.argv[4])
cnn, pair, bin_model = rt.model_names
name = rt.input_names[cnn][0]
x = data["x"].astype(hb_dtype_map[rt.input_dtypes[cnn][name].name])
assert list(x.shape) == rt.input_shapes[cnn][name]
out = rt.output_names[cnn][0]
single = rt.run(x, model_name=cnn)[cnn][out]
by_name = rt.run({name: x}, model_name=cnn)
rt.set_scheduling_params(priority={cnn: 5, pair: 7}, bpu_cores={cnn: [0], pair: [-1]})
frame_name = rt.input_names[bin_model][0]
multi = rt.run({cnn: {name: x}, pair: {"a": data["a"], "b": data["b"]},
                bin_model: {frame_name: data["frame"]}}, priority={cnn: 200})
results = {}


def worker(core):
    results[core] = rt.run(x, model_name=cnn, priority={cnn: 5}, bpu_cores={cnn: [core]},
                           custom_id={cnn: core})[cnn][out]


threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert all(np.array_equal(r, single) for r in results.values())
q = rt.output_quants[bin_model][rt.output_names[bin_model][0]]
np.savez(sys.argv[5], cnn=single, cnn_dict=by_name[cnn][out], multi_cnn=multi[cnn][out],
         y=multi[pair]["y"], z=multi[pair]["z"], frame_out=multi[bin_model][rt.output_names[bin_model][0]])
sched = rt.sched_params
print(json.dumps({
    "model_names": rt.model_names, "model_count": rt.model_count, "input_names": rt.input_names,
    "input_shapes": rt.input_shapes, "input_counts": rt.input_counts, "output_names": rt.output_names,
    "output_shapes": rt.output_shapes,
    "input_dtypes": {m: {n: str(d) for n, d in v.items()} for m, v in rt.input_dtypes.items()},
    "output_dtypes": {m: {n: d.name for n, d in v.items()} for m, v in rt.output_dtypes.items()},
    "quant": [q.quant_type.name, q.scale.tolist(), q.zero_point.tolist(), q.axis],
    "input_quant": rt.input_quants[cnn][name].quant_type.name,
    "keys": {m: list(v) for m, v in multi.items()}, "by_name_keys": list(by_name),
    "sched": {m: [p.priority, p.bpu_cores, p.customId, p.deviceId] for m, p in sched.items()},
    "version": HB_HBMRuntime.version}))
'''

# Each bad use of hbm_runtime, caught and reported. argv: cnn.onnx two_io.onnx lonely.hbm
HBM_BAD = '''
import json
import sys

import numpy as np
from hbm_runtime import HB_HBMRuntime

report = {}


def attempt(case, fn):
    try:
        fn()
        report[case] = None
    except Exception as e:
        report[case] = [[c.__name__ for c in type(e).__mro__], str(e)]


rt = HB_HBMRuntime([sys.argv[1], sys.argv[2]])
cnn, pair = rt.model_names
name = rt.input_names[cnn][0]
x = np.zeros(rt.input_shapes[cnn][name], np.float32)
attempt("dtype", lambda: rt.run(x.astype(np.float64), model_name=cnn))
attempt("shape", lambda: rt.run(x[..., :-1], model_name=cnn))
attempt("which_model", lambda: rt.run(x))
attempt("two_inputs", lambda: rt.run(np.zeros((1, 4), np.float32), model_name=pair))
attempt("unknown_input", lambda: rt.run({"nope": x}, model_name=cnn))
attempt("missing_input", lambda: rt.run({"a": np.zeros((1, 4), np.float32)}, model_name=pair))
attempt("unknown_model", lambda: rt.run({"nope": {name: x}}))
attempt("not_array", lambda: rt.run({name: x.tolist()}, model_name=cnn))
attempt("priority", lambda: rt.run(x, model_name=cnn, priority={cnn: 300}))
attempt("priority_model", lambda: rt.set_scheduling_params(priority={"nope": 1}))
attempt("cores_empty", lambda: rt.set_scheduling_params(bpu_cores={cnn: []}))
attempt("cores_type", lambda: rt.set_scheduling_params(bpu_cores={cnn: 0}))
attempt("no_source", lambda: HB_HBMRuntime(sys.argv[3]))
attempt("ctor_type", lambda: HB_HBMRuntime(3))
report["sched_unchanged"] = [rt.sched_params[cnn].priority, rt.sched_params[cnn].bpu_cores]
print(json.dumps(report))
'''

# The S100 single-model quick start: one file, one input. argv: model.hbm x.npy out.npz
HBM_ONE = '''
import json
import sys

import numpy as np
from hbm_runtime import HB_HBMRuntime

model = HB_HBMRuntime(sys.argv[1])
model_name = model.model_names[0]
input_name = model.input_names[model_name][0]
x = np.load(sys.argv[2])
assert list(x.shape) == model.input_shapes[model_name][input_name]
outputs = model.run(x)
np.savez(sys.argv[3], out=next(iter(outputs[model_name].values())))
print(json.dumps({"model_names": model.model_names}))
'''
