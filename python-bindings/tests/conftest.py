"""Shared fixtures of the qdqc Python tests (the example model and its input are required: a
missing file fails the tests rather than skipping them). The library comes from QDQC_LIBRARY (the lit
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
    import numpy as np
    return np.load(os.path.join(REPO, "examples", "input.npy"))


@pytest.fixture(scope="session")
def fixtures_dir():
    return os.path.join(REPO, "test", "models", "fixtures")


@pytest.fixture(scope="session")
def jit_model(example_model):
    """The example model compiled once for the host (JIT engine), shared by the tests."""
    import qdqc
    return qdqc.compile(example_model, engine="jit")
