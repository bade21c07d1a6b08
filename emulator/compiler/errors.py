"""The compiler's exception."""


class CompileError(ValueError):
    """An ONNX model the compiler cannot turn into an .accm file: an unsupported op, attribute or dtype,
    an invalid graph, or an input shape that is not static. The message names the op, node or tensor."""
