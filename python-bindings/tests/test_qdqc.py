"""Tests of the qdqc Python package: loading, metadata, running, errors."""
import os
import platform
import shutil
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

TWO_INPUTS = b"""// saturating add of two u8 inputs with the same parameters
graph @add2(%a: u8[1,4]{scale=1, zp=0}, %b: u8[1,4]{scale=1, zp=0}) -> u8[1,4]{scale=1, zp=0} {
  %da = dequantize %a, scale=1, zp=0 : f32[1,4]
  %db = dequantize %b, scale=1, zp=0 : f32[1,4]
  %s0 = add %da, %db : f32[1,4]
  %s = quantize %s0, scale=1, zp=0 : u8[1,4]{scale=1, zp=0}
  return %s
}
"""

RELU_F32 = b"""graph @relu_f32(%x: f32[1,2]) -> f32[1,2] {
  %y = relu %x : f32[1,2]
  return %y
}
"""


def test_version_matches_header():
    assert qdqc.version() == qdqc.VERSION_HEX
    assert qdqc.version_string() == qdqc.__version__


def test_metadata(jit_model):
    m = jit_model
    assert [t.name for t in m.inputs] == ["input"]
    assert m.inputs[0].shape == (1, 3, 32, 32)
    assert m.inputs[0].dtype == np.float32
    assert [t.name for t in m.outputs] == ["logits"]
    assert m.outputs[0].shape == (1, 10)
    assert m.engine == "jit" and m.jit_error is None
    assert m.workspace_size > 0
    assert "graph @" in m.ir()
    assert "engine: jit" in m.report() and "qconv 3x3" in m.report()


def test_text_ir_bytes_exact():
    m = qdqc.compile(RELU_QDQ)
    assert m.inputs[0].elem_type == "u8" and m.outputs[0].elem_type == "u8"
    x = np.array([[0, 127, 128, 255]], np.uint8)
    for out in (m.run(x=x), m.run_reference(x=x)):
        np.testing.assert_array_equal(out["q"] if "q" in out else next(iter(out.values())),
                                      np.array([[128, 128, 128, 255]], np.uint8))


def test_bytes_equal_path(small_model):
    with open(small_model, "rb") as f:
        data = f.read()
    a = qdqc.compile(small_model, engine="reference")
    b = qdqc.compile(data, engine="reference")
    assert a.ir().split("\n", 1)[1] == b.ir().split("\n", 1)[1]


def _rand_input(m, seed=0):
    t = m.inputs[0]
    return {t.name: np.random.default_rng(seed).standard_normal(t.shape).astype(t.dtype)}


def _assert_same(got, want):
    assert got.keys() == want.keys()
    for k in want:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape
        np.testing.assert_array_equal(got[k], want[k])


def test_run_matches_reference_engine(jit_model, small_input):
    """Model.run (the JIT) against the reference interpreter on the same compiled graph: the
    outputs are identical, on small_input and on random inputs."""
    m = jit_model
    assert m.engine == "jit"
    got, want = m.run(input=small_input), m.run_reference(input=small_input)
    assert np.abs(want["logits"]).max() > 0
    _assert_same(got, want)
    for seed in range(2):
        x = _rand_input(m, seed)
        _assert_same(m.run(**x), m.run_reference(**x))


@pytest.mark.parametrize("fixture", ["conv3x3_pc_u8", "convdw_pc_i8", "add_bcast_i8",
                                     "concat_u8", "maxpool3s2_i8", "matmul_pc_u8"])
def test_jit_matches_reference_fixtures(fixtures_dir, fixture):
    m = qdqc.compile(os.path.join(fixtures_dir, fixture + ".onnx"), engine="jit")
    rng = np.random.default_rng(3)
    x = {t.name: (rng.standard_normal(t.shape) * 2).astype(t.dtype) for t in m.inputs}
    _assert_same(m.run(**x), m.run_reference(**x))


def test_jit_threads_and_fixed_requant(small_model, small_input):
    m = qdqc.compile(small_model, requant="fixed", threads=2)
    assert m.engine == "jit"
    _assert_same(m.run(input=small_input), m.run_reference(input=small_input))


def test_pipeline_preserves_results(jit_model, small_model):
    """The default pipeline against the imported graph (only dead-code removal), both in the
    reference engine: the compiled network computes what the QDQ model means."""
    opt = jit_model
    raw = qdqc.compile(small_model, passes="dce", engine="reference")
    x = _rand_input(opt, 7)
    got, want = opt.run(**x)["logits"], raw.run_reference(**x)["logits"]
    assert np.abs(want).max() > 0
    np.testing.assert_allclose(got, want, rtol=0, atol=0.05 * float(np.abs(want).max()))


def test_const_inputs():
    """const_inputs freezes a graph input (here Reshape's shape) to a compile-time constant."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    with pytest.raises(qdqc.Error, match="freeze it with --const-input shape=FILE.npy"):
        qdqc.compile(data, engine="reference")
    m = qdqc.compile(data, const_inputs={"shape": np.array([3, 4])}, engine="reference")
    assert [t.name for t in m.inputs] == ["x"] and m.outputs[0].shape == (3, 4)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(m.run(x=x)["y"], x.reshape(3, 4))
    with pytest.raises(qdqc.Error, match="has element type f32, the input is declared i64"):
        qdqc.compile(data, const_inputs={"shape": np.array([3, 4], np.float32)})
    with pytest.raises(qdqc.Error, match="names 'nope', which is not a graph input"):
        qdqc.compile(data, const_inputs={"shape": np.array([3, 4]), "nope": np.zeros(1)})


def test_requant_fixed(small_model):
    m = qdqc.compile(small_model, requant="fixed", engine="reference")
    assert m.run(**_rand_input(m))["logits"].shape == (1, 10)


def test_input_shapes():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    m = qdqc.compile(data, input_shapes={"x": (3, 4)}, engine="reference")
    assert m.inputs[0].shape == (3, 4)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(m.run(x=x)["y"], np.maximum(x, 0))
    # The fallback reason is what qdqc_jit_create said, not the pipeline's earlier remarks
    # (which report() still shows).
    triple = _foreign_triple()[1]
    with pytest.warns(qdqc.EngineWarning, match="cannot JIT for target"):
        f = qdqc.compile(data, input_shapes={"x": (3, 4)}, target=triple)
    assert f.engine == "reference"
    assert f.jit_error.startswith("error: codegen: cannot JIT for target")
    assert "remark" not in f.jit_error and "float island" in f.report()


def test_dims():
    """Symbolic dimensions bound by name; an unbound one is an error naming it."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4])])
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    m = qdqc.compile(data, dims={"batch": 2, "seq": 3})
    assert m.inputs[0].shape == (2, 3, 4)
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(m.run(x=x)["y"], np.maximum(x, 0))
    with pytest.raises(qdqc.Error, match=r"symbolic dimension \?seq \(axis 1\)"):
        qdqc.compile(data, dims={"batch": 2})
    with pytest.raises(qdqc.Error, match="must be a positive integer"):
        qdqc.compile(data, dims={"batch": 0, "seq": 3})


def test_dims_range(small_model):
    """A run-time batch dimension: one JIT session runs every size in the range, each bit for
    bit as the model compiled at that size; shapes outside it are errors."""
    pytest.importorskip("onnx")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "test", "models"))
    from batch_dynamic import set_batch
    data = set_batch(small_model, None)
    dyn = qdqc.compile(data, dims={"N": (1, 4)}, engine="jit")
    x_info = dyn.inputs[0]
    assert x_info.shape[0] is None
    rng = np.random.default_rng(3)
    for n in (1, 3):
        x = rng.standard_normal((n,) + x_info.shape[1:]).astype(np.float32)
        got = dyn.run(x)
        want = qdqc.compile(data, dims={"N": n}, engine="jit").run(x)
        for k in want:
            assert got[k].shape == want[k].shape
            np.testing.assert_array_equal(got[k], want[k])
    x5 = np.zeros((5,) + x_info.shape[1:], np.float32)
    with pytest.raises(qdqc.Error, match="do not conform"):
        dyn.run(x5)
    with pytest.raises(qdqc.Error, match="needs it bound"):
        dyn.run_reference(x5[:1])


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


def test_bad_options(small_model):
    with pytest.raises(qdqc.Error, match="requant"):
        qdqc.compile(small_model, requant="double")
    with pytest.raises(qdqc.Error) as e:
        qdqc.compile(small_model, passes="no-such-pass")
    assert "no-such-pass" in e.value.diagnostics
    with pytest.raises(qdqc.Error, match="unknown engine"):
        qdqc.compile(RELU_QDQ, engine="gpu")


def test_run_checks_inputs():
    m = qdqc.compile(RELU_QDQ)
    with pytest.raises(qdqc.Error, match="missing"):
        m.run()
    with pytest.raises(qdqc.Error, match="shape"):
        m.run(x=np.zeros((2, 4), np.uint8))
    with pytest.raises(TypeError, match=r"input 'x': dtype float32, expected uint8 \(u8\)"):
        m.run(x=np.zeros((1, 4), np.float32))
    with pytest.raises(qdqc.Error, match="unknown"):
        m.run(x=np.zeros((1, 4), np.uint8), y=1)
    m.close()
    with pytest.raises(qdqc.Error, match="closed"):
        m.ir()


def test_positional_inputs():
    """m.run(x) / m.run(x, y): inputs by position in the order of Model.inputs, also mixed
    with names; the same results as by name."""
    m = qdqc.compile(TWO_INPUTS)
    assert [t.name for t in m.inputs] == ["a", "b"]
    a = np.array([[0, 10, 200, 255]], np.uint8)
    b = np.array([[5, 5, 5, 5]], np.uint8)
    want = m.run(a=a, b=b)["s"]
    np.testing.assert_array_equal(want, np.array([[5, 15, 205, 255]], np.uint8))
    for got in (m.run(a, b), m.run(a, b=b), m.run_reference(a, b)):
        np.testing.assert_array_equal(got["s"], want)
    with pytest.raises(qdqc.Error, match="missing"):
        m.run(a)
    with pytest.raises(qdqc.Error, match="input 'a' given both by position and by name"):
        m.run(a, a=a, b=b)
    with pytest.raises(qdqc.Error, match=r"3 positional inputs given, the model has 2 \(a, b\)"):
        m.run(a, b, b)


def test_no_silent_dtype_casts():
    """An array of another dtype is a TypeError (also a qdqc.Error) naming the input and the
    dtype it needs, for every engine; a Python list is converted only when its values fit."""
    m = qdqc.compile(RELU_QDQ)
    x = np.array([[0.0, 127.0, 128.0, 255.0]])  # float64
    for run in (m.run, m.run_reference):
        with pytest.raises(TypeError) as e:
            run(x)
        assert isinstance(e.value, qdqc.Error) and isinstance(e.value, qdqc.InputTypeError)
        assert ("input 'x': dtype float64, expected uint8 (u8); qdqc does not cast arrays, "
                "convert it with .astype(np.uint8)") in str(e.value)
    for bad in (np.zeros((1, 4), np.int64), np.zeros((1, 4), np.int8), np.float64(1)):
        with pytest.raises(qdqc.InputTypeError, match="expected uint8"):
            m.run(x=bad)
    np.testing.assert_array_equal(m.run([[0, 127, 128, 255]])["q"],
                                  m.run(x.astype(np.uint8))["q"])
    with pytest.raises(qdqc.InputTypeError, match="list of int64 values does not fit uint8"):
        m.run([[0, 1, 2, 256]])
    with pytest.raises(qdqc.InputTypeError, match="list of float64 values does not fit uint8"):
        m.run([[0.5, 1, 2, 3]])
    f = qdqc.compile(RELU_F32)
    np.testing.assert_array_equal(f.run([[-1.0, 2.5]])["y"], np.array([[0, 2.5]], np.float32))
    with pytest.raises(qdqc.InputTypeError, match="dtype float64, expected float32 \\(f32\\)"):
        f.run(np.array([[-1.0, 2.5]]))


def test_repr(jit_model):
    """repr names the engine, target, requantization and every input and output with its
    shape, qdqc element type and numpy dtype."""
    assert repr(jit_model) == (
        "<qdqc.Model engine=jit target=host requant=float\n"
        "  input  'input'  f32[1,3,32,32]  numpy float32\n"
        "  output 'logits' f32[1,10]  numpy float32>")
    m = qdqc.compile(TWO_INPUTS, engine="reference")
    assert repr(m) == (
        "<qdqc.Model engine=reference target=host requant=float\n"
        "  input  'a' u8[1,4]  numpy uint8\n"
        "  input  'b' u8[1,4]  numpy uint8\n"
        "  output 's' u8[1,4]  numpy uint8>")
    m.close()
    assert repr(m) == "<qdqc.Model (closed)>"


def test_models_are_independent():
    a, b = qdqc.compile(RELU_QDQ), qdqc.compile(RELU_QDQ)
    with pytest.raises(qdqc.Error):
        qdqc.compile(b"graph @broken(")
    del a
    assert b.run(x=np.full((1, 4), 200, np.uint8))["q"][0, 0] == 200


ELF_MACHINE = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183}


def _elf_machine(data):
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1  # 64-bit little-endian
    assert int.from_bytes(data[16:18], "little") == 1  # ET_REL
    return int.from_bytes(data[18:20], "little")


def test_save_object_and_header_host(tmp_path, jit_model):
    m = jit_model
    assert m.can_save_object
    m.save_object(tmp_path / "m.o")
    m.save_header(str(tmp_path / "m.h"))
    assert _elf_machine((tmp_path / "m.o").read_bytes()) == ELF_MACHINE[platform.machine().lower()]
    h = (tmp_path / "m.h").read_text()
    assert "#define MODEL_NUM_INPUTS 1" in h and "int model_run(" in h
    assert '#define MODEL_INPUT0_DIMS {1, 3, 32, 32}' in h


def test_saved_object_links_and_matches(tmp_path, jit_model, small_input):
    """The saved object and header, linked into a C program, compute what Model.run does."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "no C compiler on PATH"
    jit_model.save_object(tmp_path / "m.o")
    jit_model.save_header(tmp_path / "m.h")
    (tmp_path / "main.c").write_text(r"""
#include "m.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    static float in[1 * 3 * 32 * 32], out[10];
    FILE *f = fopen(argv[1], "rb");
    if (!f || fread(in, sizeof in, 1, f) != 1) return 2;
    fclose(f);
    void *ws = aligned_alloc(64, MODEL_WORKSPACE_SIZE ? MODEL_WORKSPACE_SIZE : 64);
    const void *ins[] = {in};
    void *outs[] = {out};
    if (model_run(ins, outs, ws) != 0) return 5;
    f = fopen(argv[2], "wb");
    if (!f || fwrite(out, sizeof out, 1, f) != 1) return 3;
    fclose(f);
    free(ws);
    return argc == 3 ? 0 : 4;
}
""")
    exe = tmp_path / "main"
    subprocess.run([cc, "-std=c11", "-o", str(exe), str(tmp_path / "main.c"),
                    str(tmp_path / "m.o"), "-lm"], check=True, cwd=tmp_path)
    small_input.astype(np.float32).tofile(tmp_path / "in.bin")
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
    got = np.fromfile(tmp_path / "out.bin", np.float32).reshape(1, 10)
    np.testing.assert_array_equal(got, jit_model.run(input=small_input)["logits"])


def _foreign_triple():
    """(architecture, triple) of the supported target that is not the host."""
    host = platform.machine().lower()
    return (("aarch64", "aarch64-linux-gnu") if ELF_MACHINE.get(host) == 62
            else ("x86_64", "x86_64-linux-gnu"))


def test_foreign_target_object(tmp_path, small_model, small_input):
    """target= reaches code generation; the JIT cannot run a foreign target, so Model.run
    falls back to the reference engine and says why."""
    foreign, triple = _foreign_triple()
    with pytest.warns(qdqc.EngineWarning, match="cannot JIT for target"):
        m = qdqc.compile(small_model, target=triple, name="net")
    assert m.engine == "reference"
    assert f"cannot JIT for target '{foreign}-unknown-linux-gnu' on this host" in m.jit_error
    assert "jit unavailable: " in m.report()
    m.save_object(str(tmp_path / "net.o"))
    assert _elf_machine((tmp_path / "net.o").read_bytes()) == ELF_MACHINE[foreign]
    assert _elf_machine(m.emit("obj")) == ELF_MACHINE[foreign]
    assert "int net_run(" in m.emit("header").decode()
    assert m.run(input=small_input)["logits"].shape == (1, 10)
    with pytest.raises(qdqc.Error) as e:
        qdqc.compile(small_model, target=triple, engine="jit")
    assert e.value.status == "QDQC_ERR_CODEGEN"
    assert "cannot JIT for target" in e.value.diagnostics


def test_mlir_in_and_out(jit_model):
    """An MLIR model (quant + tosa, as bytes) compiles to a qconv and runs in the JIT exactly as
    in the reference interpreter; small_model's integer graph exports as tosa."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "test", "lit", "mlir", "import-conv.mlir")
    with open(path, "rb") as f:
        m = qdqc.compile(f.read())
    assert m.engine == "jit" and "qconv" in m.ir()
    x = {"arg0": np.random.default_rng(5).standard_normal((1, 8, 8, 3)).astype(np.float32)}
    _assert_same(m.run(**x), m.run_reference(**x))
    text = jit_model.mlir()
    assert "func.func @mobilenetv2_ort_u8" in text and "tosa.conv2d" in text


def test_emit_kinds(jit_model):
    asm = jit_model.emit("asm").decode()
    assert "model_run" in asm and ".text" in asm
    assert "i32 @model_run(" in jit_model.emit("llvm").decode()
    assert jit_model.emit("bc")[:4] == b"BC\xc0\xde"
    with pytest.raises(qdqc.Error, match="unknown kind"):
        jit_model.emit("exe")


def test_codegen_errors_carry_diagnostics(tmp_path, small_model):
    with pytest.warns(qdqc.EngineWarning):
        m = qdqc.compile(RELU_QDQ, target="sparc-linux-gnu")
    assert m.jit_error == ("error: codegen: unsupported target 'sparc-linux-gnu': qdqc targets "
                           "x86_64 and aarch64 (a triple such as x86_64-linux-gnu, or just "
                           "x86_64, aarch64, arm64)")
    assert m.engine == "reference"
    with pytest.raises(qdqc.Error) as e:
        m.save_object(tmp_path / "m.o")
    assert e.value.status == "QDQC_ERR_CODEGEN"
    assert "error: codegen: unsupported target 'sparc-linux-gnu'" in e.value.diagnostics
    assert "unsupported target" in str(e.value)
    with pytest.raises(qdqc.Error) as e:
        qdqc.compile(RELU_QDQ, name="1bad", engine="jit")
    assert "C identifier" in e.value.diagnostics
    m = qdqc.compile(RELU_QDQ)
    assert m.engine == "jit"
    with pytest.raises(qdqc.Error) as e:
        m.save_object(tmp_path / "no" / "such" / "dir" / "m.o")
    assert e.value.status == "QDQC_ERR_IO" and "cannot write" in e.value.diagnostics
    np.testing.assert_array_equal(m.run(x=np.array([[0, 1, 200, 255]], np.uint8))["q"],
                                  np.array([[128, 128, 200, 255]], np.uint8))


def test_library_env_var_wrong_path(tmp_path):
    env = dict(os.environ, QDQC_LIBRARY=str(tmp_path / "libnothere.so"))
    code = "import qdqc\ntry:\n    qdqc.lib()\nexcept OSError as e:\n    print('OSError', e)\n"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(qdqc.__file__)))
    assert "OSError QDQC_LIBRARY=" in r.stdout, r.stdout + r.stderr


def test_steps_and_profile(small_model, small_input):
    """Model.steps lists the compiled steps (qdqc_jit_step_*); Model.profile() times each one
    through the step hook of a model compiled with profile=True, whose results stay the same."""
    import qdqc
    with qdqc.compile(small_model, profile=True, engine="jit") as m:
        steps = m.steps
        assert steps and [s.index for s in steps] == list(range(len(steps)))
        assert all(isinstance(s.name, str) and s.name and s.op for s in steps)
        convs = [s for s in steps if s.op.startswith("qconv")]
        assert convs and all(s.macs > 0 for s in convs)
        assert all(s.macs == 0 for s in steps if s.op in ("quantize", "dequantize"))
        times = m.profile(small_input, iters=3, warmup=1)
        assert [t[:4] for t in times] == [tuple(s) for s in steps]
        assert all(t.seconds > 0 for t in times)
        assert sum(t.seconds for t in times) < 1.0
        # the hook is removed afterwards and the outputs are those of a model without it
        with qdqc.compile(small_model, engine="jit") as plain:
            a = m.run(small_input)
            b = plain.run(small_input)
            assert all(np.array_equal(a[k], b[k]) for k in a)
            assert [tuple(s) for s in plain.steps] == [tuple(s) for s in steps]
            with pytest.raises(qdqc.Error, match="profile=True"):
                plain.profile(small_input)
    with qdqc.compile(small_model, engine="reference") as r:
        assert r.steps == []
        with pytest.raises(qdqc.Error, match="JIT engine"):
            r.profile(small_input)


def test_profile_object_has_run_profile(tmp_path, small_model):
    """profile=True reaches the AOT object: the header declares, the object defines
    PREFIX_run_profile (docs/abi.md); without it neither does."""
    import qdqc
    with qdqc.compile(small_model, profile=True, name="net") as m:
        m.save_header(tmp_path / "p.h")
        assert "int net_run_profile(" in (tmp_path / "p.h").read_text()
        assert b"net_run_profile" in m.emit("obj")
    with qdqc.compile(small_model, name="net") as m:
        assert "run_profile" not in m.emit("header").decode()
        assert b"net_run_profile" not in m.emit("obj")


def test_error_stats_exact():
    # 3,4 against 3,3: signal 25, noise 1; cosine 21 / (5 sqrt 18); step 0.25
    s = qdqc.error_stats(np.array([3, 4], np.float32), np.array([3, 3], np.float32), 0.25)
    assert s["sqnr_db"] == pytest.approx(10 * np.log10(25.0), abs=1e-12)
    assert s["cosine"] == pytest.approx(21 / (5 * np.sqrt(18.0)), abs=1e-12)
    assert (s["max_abs"], s["mean_abs"], s["max_steps"], s["mean_steps"]) == (1, 0.5, 4, 2)
    assert qdqc.error_stats([1, 2], [1, 2])["sqnr_db"] == float("inf")
    with pytest.raises(ValueError):
        qdqc.error_stats([1, 2], [1])


def test_compare_layers(tmp_path):
    # the model of test/lit/driver/compare.test: errors exact, layer r mis-scaled 10x
    gen = os.path.join(os.path.dirname(__file__), "..", "..", "test", "lit", "driver", "Inputs",
                       "gen_compare.py")
    subprocess.run([sys.executable, gen, str(tmp_path)], check=True)
    x = np.load(tmp_path / "x.npy")
    rows = qdqc.compare(tmp_path / "float.onnx", tmp_path / "qdq.onnx", [x])
    assert [r["float_tensor"] for r in rows] == ["x", "h", "r", "y"]
    assert rows[0]["float_to_qdq"]["sqnr_db"] == float("inf")
    assert rows[1]["float_to_qdq"]["sqnr_db"] == pytest.approx(10 * np.log10(15), abs=1e-9)
    assert rows[2]["clipped_above"] == 3 and rows[2]["float_to_qdq"]["max_steps"] == pytest.approx(873)
    assert all(r["qdq_to_compiled"]["max_steps"] == 0 for r in rows)
    kf = qdqc.compare(tmp_path / "float.onnx", tmp_path / "qdq.onnx", [{"x": x}], keep_float=["mm1"])
    assert [r["float_in_compiled"] for r in kf] == [False, True, False, False]
    with pytest.raises(qdqc.Error):
        qdqc.compare(tmp_path / "float.onnx", tmp_path / "missing.onnx", [x])
