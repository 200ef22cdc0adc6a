"""Tests of the qdqc Python package: loading, metadata, running, errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import qdqc

RELU_QDQ = b"""// relu between dequantize and quantize: u8 (scale 0.5, zp 128)
graph @relu_qdq(%x: u8[1,4]{scale=0.5, zp=128}) -> u8[1,4]{scale=0.5, zp=128} {
  %d = dequantize %x, scale=0.5, zp=128 : f32[1,4]
  %r = relu %d : f32[1,4]
  %q = quantize %r, scale=0.5, zp=128 : u8[1,4]{scale=0.5, zp=128}
  return %q
}
"""


def test_version_matches_header():
    assert qdqc.version() == qdqc.VERSION_HEX
    assert qdqc.version_string() == qdqc.__version__


def test_metadata(example_model):
    m = qdqc.compile(example_model)
    assert [t.name for t in m.inputs] == ["input"]
    assert m.inputs[0].shape == (1, 3, 32, 32)
    assert m.inputs[0].dtype == np.float32
    assert [t.name for t in m.outputs] == ["logits"]
    assert m.outputs[0].shape == (1, 10)
    assert m.engine in ("jit", "reference")
    assert "graph @" in m.ir()
    assert f"engine: {m.engine}" in m.report()


def test_text_ir_bytes_exact():
    m = qdqc.compile(RELU_QDQ)
    assert m.inputs[0].elem_type == "u8" and m.outputs[0].elem_type == "u8"
    x = np.array([[0, 127, 128, 255]], np.uint8)
    for out in (m.run(x=x), m.run_reference(x=x)):
        np.testing.assert_array_equal(out["q"] if "q" in out else next(iter(out.values())),
                                      np.array([[128, 128, 128, 255]], np.uint8))


def test_bytes_equal_path(example_model):
    with open(example_model, "rb") as f:
        data = f.read()
    a, b = qdqc.compile(example_model), qdqc.compile(data)
    assert a.ir().split("\n", 1)[1] == b.ir().split("\n", 1)[1]


def _rand_input(m, seed=0):
    t = m.inputs[0]
    return {t.name: np.random.default_rng(seed).standard_normal(t.shape).astype(t.dtype)}


def test_run_matches_reference_engine(example_model):
    """Model.run (the JIT when the library has one) against the reference interpreter on the
    same compiled graph: integer outputs exactly, float outputs to 1e-5 of their range."""
    m = qdqc.compile(example_model)
    for seed in range(3):
        x = _rand_input(m, seed)
        got, want = m.run(**x), m.run_reference(**x)
        assert got.keys() == want.keys()
        for k in want:
            assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape
            if np.issubdtype(want[k].dtype, np.integer):
                np.testing.assert_array_equal(got[k], want[k])
            else:
                tol = 1e-5 * max(1.0, float(np.abs(want[k]).max()))
                np.testing.assert_allclose(got[k], want[k], rtol=0, atol=tol)


def test_pipeline_preserves_results(example_model):
    """The default pipeline against the imported graph (only dead-code removal), both in the
    reference engine: the compiled network computes what the QDQ model means."""
    opt = qdqc.compile(example_model)
    raw = qdqc.compile(example_model, passes="dce")
    x = _rand_input(opt, 7)
    got, want = opt.run(**x)["logits"], raw.run_reference(**x)["logits"]
    assert np.abs(want).max() > 0
    np.testing.assert_allclose(got, want, rtol=0, atol=0.05 * float(np.abs(want).max()))


def test_requant_fixed(example_model):
    m = qdqc.compile(example_model, requant="fixed")
    assert m.run(**_rand_input(m))["logits"].shape == (1, 10)


def test_input_shapes():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    m = qdqc.compile(data, input_shapes={"x": (3, 4)})
    assert m.inputs[0].shape == (3, 4)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(m.run(x=x)["y"], np.maximum(x, 0))


def test_parse_error_carries_diagnostics():
    with pytest.raises(qdqc.Error) as e:
        qdqc.compile(b"graph @g(%x: f32[2]) -> f32[2] {\n  %y = nosuchop %x : f32[2]\n  return %y\n}\n")
    assert e.value.status == "QDQC_ERR_PARSE"
    assert "<bytes>:2:" in e.value.diagnostics and "error:" in e.value.diagnostics
    assert "nosuchop" in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(qdqc.Error) as e:
        qdqc.compile(str(tmp_path / "absent.onnx"))
    assert e.value.status == "QDQC_ERR_IO"
    assert "absent.onnx" in e.value.diagnostics


def test_bad_options(example_model):
    with pytest.raises(qdqc.Error, match="requant"):
        qdqc.compile(example_model, requant="double")
    with pytest.raises(qdqc.Error) as e:
        qdqc.compile(example_model, passes="no-such-pass")
    assert "no-such-pass" in e.value.diagnostics


def test_run_checks_inputs():
    m = qdqc.compile(RELU_QDQ)
    with pytest.raises(qdqc.Error, match="missing"):
        m.run()
    with pytest.raises(qdqc.Error, match="shape"):
        m.run(x=np.zeros((2, 4), np.uint8))
    with pytest.raises(qdqc.Error, match="dtype"):
        m.run(x=np.zeros((1, 4), np.float32))
    with pytest.raises(qdqc.Error, match="unknown"):
        m.run(x=np.zeros((1, 4), np.uint8), y=1)
    m.close()
    with pytest.raises(qdqc.Error, match="closed"):
        m.ir()


def test_models_are_independent():
    a, b = qdqc.compile(RELU_QDQ), qdqc.compile(RELU_QDQ)
    with pytest.raises(qdqc.Error):
        qdqc.compile(b"graph @broken(")
    del a
    assert b.run(x=np.full((1, 4), 200, np.uint8))["q"][0, 0] == 200


def test_save_object_and_header(tmp_path, example_model):
    m = qdqc.compile(example_model)
    if not m.can_save_object:
        with pytest.raises(qdqc.Error) as e:
            m.save_object(str(tmp_path / "m.o"))
        assert e.value.status == "QDQC_ERR_UNSUPPORTED"
        pytest.skip("libqdqc has no object emission yet")
    m.save_object(str(tmp_path / "m.o"))
    m.save_header(str(tmp_path / "m.h"))
    assert (tmp_path / "m.o").read_bytes()[:4] == b"\x7fELF"
    assert "#include" in (tmp_path / "m.h").read_text() or "extern" in (tmp_path / "m.h").read_text()


def test_library_env_var_wrong_path(tmp_path):
    env = dict(os.environ, QDQC_LIBRARY=str(tmp_path / "libnothere.so"))
    code = "import qdqc\ntry:\n    qdqc.lib()\nexcept OSError as e:\n    print('OSError', e)\n"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(qdqc.__file__)))
    assert "OSError QDQC_LIBRARY=" in r.stdout, r.stdout + r.stderr
