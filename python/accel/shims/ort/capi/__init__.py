"""``onnxruntime.capi``: where onnxruntime keeps its compiled module; scripts import its exceptions from here."""
