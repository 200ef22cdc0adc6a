#!/usr/bin/python3
"""nomem_sweep.py QDQC OUT_DIR: a valid model that needs more memory than it gets must fail
with exit 1 and "out of memory", never abort the process and never be called "not a valid ONNX
model" (docs/api.md "Out of memory").

Writes a QDQ model with 16.8 M float weights (a 64 MiB file: MatMul [1,4096] x Q->DQ(W
[4096,4096] f32), as PyTorch exports store weights) to OUT_DIR, finds the address-space limit
(RLIMIT_AS, `ulimit -v`) at which `qdqc --version` starts, then runs `qdqc MODEL --emit=ir`
with that base plus 0, 16, 32, ... MiB until it succeeds. Prints one line per run and a summary;
exit status 1 if any run aborted (a signal, "internal error"), said "not a valid", or exited
with another status."""
import os, resource, subprocess, sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

qdqc, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
model = os.path.join(out, "big_weight.onnx")
K = 4096
rng = np.random.default_rng(17)
w = (rng.standard_normal((K, K)) * 0.05).astype(np.float32)
nodes = [
    helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
    helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
    helper.make_node("QuantizeLinear", ["w", "ws", "wz"], ["wq"]),
    helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"]),
    helper.make_node("MatMul", ["xd", "wd"], ["y"]),
    helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]),
]
inits = [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
         numpy_helper.from_array(np.array(128, np.uint8), "xz"),
         numpy_helper.from_array(np.array(0.001, np.float32), "ws"),
         numpy_helper.from_array(np.array(0, np.int8), "wz"),
         numpy_helper.from_array(np.array(0.1, np.float32), "ys"),
         numpy_helper.from_array(np.array(128, np.uint8), "yz")]
g = helper.make_graph(nodes, "big_weight",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, K])],
                      [helper.make_tensor_value_info("yq", TensorProto.UINT8, [1, K])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, model)


def run(kb, args):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (kb * 1024, kb * 1024))
    r = subprocess.run([qdqc] + args, capture_output=True, text=True, preexec_fn=limit)
    return r.returncode, r.stderr.strip()


base = next(kb for kb in range(16384, 4 << 20, 8192) if run(kb, ["--version"])[0] == 0)
nomem = bad = 0
for step in range(64):
    kb = base + step * 16384
    rc, err = run(kb, [model, "--emit=ir", "-o", os.devnull])
    first = err.splitlines()[0] if err else ""
    if rc == 0:
        print("+%d MiB: ok" % (step * 16))
        break
    ok = rc == 1 and "error: out of memory" in err and "not a valid" not in err
    nomem += ok
    bad += not ok
    print("+%d MiB: exit %d: %s%s" % (step * 16, rc, first, "" if ok else "   <-- BAD"))
else:
    print("never succeeded")
    bad += 1
print("nomem-sweep: %d runs out of memory (exit 1, 'out of memory'), %d bad" % (nomem, bad))
sys.exit(1 if bad else 0)
