"""The ops the compiler refuses by decision, each with why: what a fixed graph of tensors on an inference
accelerator cannot be (training, strings, sequences and optionals, outputs whose shape is the data's, random
numbers, decoding files, classical ML). Their refusal names the reason (coverage.UnsupportedOpsError), and
docs/conformance.md lists them as decided, apart from the ops not supported yet."""
from __future__ import annotations

from . import folding

_TRAINING = "a training op (accel runs inference)"
_STRINGS = "strings (accel's tensors are numbers)"
_SEQUENCES = "sequences and optionals (accel's values are tensors)"
_DATA_SHAPE = ("its output's shape is the input data's (a compiled graph has static shapes: it compiles only where "
               "its inputs are constants and it folds)")
_RANDOM = "random numbers (a run must be reproducible; it compiles only where it folds away)"
_CLASSICAL = "a classical-ML op (ai.onnx.ml), not a neural network's"

DECLINED: dict = {
    **dict.fromkeys(("Adagrad", "Adam", "Momentum", "Gradient"), _TRAINING),
    **dict.fromkeys(("RegexFullMatch", "StringConcat", "StringNormalizer", "StringSplit", "TfIdfVectorizer"),
                    _STRINGS),
    **dict.fromkeys(("SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
                     "SequenceLength", "SequenceMap", "SplitToSequence", "ConcatFromSequence", "Optional",
                     "OptionalGetElement", "OptionalHasElement"), _SEQUENCES),
    **dict.fromkeys(("NonZero", "Unique", "NonMaxSuppression"), _DATA_SHAPE),
    **dict.fromkeys(sorted(folding.NONDETERMINISTIC_OPS), _RANDOM),
    **dict.fromkeys(("ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer",
                     "FeatureVectorizer", "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor",
                     "Normalizer", "OneHotEncoder", "SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsemble",
                     "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap"), _CLASSICAL),
    "ImageDecoder": "it decodes encoded image files (accel takes decoded frames: accel.image)",
}


def why(op: str) -> str | None:
    """The reason `op` is refused by decision, or None."""
    return DECLINED.get(op)
