"""The bundled example model (examples/mobilenetv2_qdq.onnx: MobileNetV2 1.0 at 224x224 with
random weights) through the Python package: the JIT computes the reference interpreter's
logits bit for bit on examples/input.npy."""
import numpy as np

import qdqc


def test_example_model_jit_equals_reference(example_model, example_input):
    m = qdqc.compile(example_model, engine="jit", threads=2)
    assert m.inputs[0].shape == (1, 3, 224, 224) and m.outputs[0].shape == (1, 1000)
    got = m.run(example_input)["logits"]
    want = m.run_reference(input=example_input)["logits"]
    assert np.abs(want).max() > 0
    np.testing.assert_array_equal(got, want)
