"""Shared fixtures of the qdqc Python tests (the models and inputs are required: a missing file
fails the tests rather than skipping them). Most tests use small_model, the 32x32
MobileNetV2-style fixture (quick to compile and run); test_example.py runs the bundled
224x224 MobileNetV2 (examples/mobilenetv2_qdq.onnx). The library comes from QDQC_LIBRARY (the lit
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
    """The bundled example: MobileNetV2 1.0, input f32[1,3,224,224], logits f32[1,1000]."""
    return os.path.join(REPO, "examples", "mobilenetv2_qdq.onnx")


@pytest.fixture(scope="session")
def example_input():
    import numpy as np
    return np.load(os.path.join(REPO, "examples", "input.npy"))


@pytest.fixture(scope="session")
def small_model():
    """A MobileNetV2-style QDQ net: input f32[1,3,32,32], logits f32[1,10] (test/models)."""
    return os.path.join(REPO, "test", "models", "fixtures", "mobilenetv2_ort_u8.onnx")


@pytest.fixture(scope="session")
def small_input():
    import numpy as np
    return np.random.default_rng(61).standard_normal((1, 3, 32, 32)).astype(np.float32)


@pytest.fixture(scope="session")
def fixtures_dir():
    return os.path.join(REPO, "test", "models", "fixtures")


@pytest.fixture(scope="session")
def jit_model(small_model):
    """small_model compiled once for the host (JIT engine), shared by the tests."""
    import qdqc
    return qdqc.compile(small_model, engine="jit")
