"""The compiler's exception."""


class CompileError(ValueError):
    """An ONNX model the compiler cannot turn into an .accm file: an unsupported op, attribute or dtype,
    an invalid graph, or an input shape that is not static. The message names the op, node or tensor."""


class ExtraOutputError(CompileError):
    """An extra output (compile_model's extra_outputs) that cannot be given: no such tensor, a model input or
    output, a name given twice, or a float tensor a quantized model never computes. The caller's to fix."""


class FrameInputError(CompileError):
    """An image input (compile_model's image_inputs) that cannot be: a bad request (format, to, range, mean, scale,
    an unknown key) or one the model cannot take (no such input, not a static float image, a channel count the
    format does not give, odd NV12 sizes, a frame input's name already taken). The caller's to fix."""


class InputShapeError(CompileError):
    """A graph input whose shape the model leaves open (a symbolic or unknown dim, or no shape): `input` is its
    name, `dims` its dims as the model gives them (ints, and the symbols' names or None where unknown), None if
    it has no shape; `problem` says which dim, `need` what needs it. The message tells the Python API's fix; a
    command line says its own (accel.commands.common)."""

    def __init__(self, input: str, dims, problem: str, need: str = "the compiler needs static shapes"):
        self.input, self.dims, self.problem, self.need = input, dims, problem, need
        super().__init__(f"{problem}; {need}: pass input_shapes={{'{input}': (...)}} to fix it")

    def command_line(self) -> str:
        """The message with the fix in the command lines' syntax (`--input-shape NAME=D0,D1,...`)."""
        if self.dims is None:
            example = "D0,D1,..."
        else:
            example = ",".join(str(d) if isinstance(d, int) else f"<{d or f'D{i}'}>" for i, d in enumerate(self.dims))
        return (f"{self.problem}; {self.need}: give them with --input-shape {self.input}={example} (numbers for "
                f"the <...>)")


class RunTimeConditionError(CompileError):
    """An If whose condition, or a Loop whose trip count or condition, is computed at run time where the compiler
    cannot take it (the runtime runs a fixed graph): `condition` is the tensor, as the model names it where the node
    is in its main graph; `inputs` the graph inputs it comes from where they are a few small integer or bool ones
    alone (flags, modes, rates), which a caller can compile the model once per value of
    (accel.runtime.dynamic_model), else empty."""

    def __init__(self, message: str, condition: str, inputs=()):
        self.condition = condition
        self.inputs = tuple(inputs)
        super().__init__(message)


class NoFloatCounterpartError(CompileError):
    """A quantized model asked for in float (compile_model's dequantized) that has no float counterpart: ops in the
    operator form (QLinearConv, MatMulInteger, ...), or integers computed past a QuantizeLinear. The message names
    the nodes."""
