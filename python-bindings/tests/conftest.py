"""Shared fixtures of the qdqc Python tests. The library comes from QDQC_LIBRARY (the lit
wrapper test/lit/python/ sets it to the build tree's libqdqc.so)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
if os.path.join(REPO, "python-bindings") not in sys.path and not os.environ.get("QDQC_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(REPO, "python-bindings"))


@pytest.fixture(scope="session")
def example_model():
    return os.path.join(REPO, "examples", "mobilenetv2_qdq.onnx")


@pytest.fixture(scope="session")
def example_input():
    path = os.path.join(REPO, "examples", "mobilenetv2_input.npy")
    if not os.path.exists(path):
        pytest.skip("examples/mobilenetv2_input.npy missing")
    import numpy as np
    return np.load(path)
