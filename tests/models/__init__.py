"""Real models for the tests and the benchmarks: ResNet-18 and MobileNetV2 built here with seeded
random weights, and the PP-OCR detector, classifier and recognizer fetched from PyPI (catalog.py lists
them). Import with the tests/ folder on sys.path: `from models import catalog`."""
