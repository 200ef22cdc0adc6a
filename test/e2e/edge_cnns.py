#!/usr/bin/env python3
"""edge_cnns.py QDQC --cache DIR [--only a,b] [--json OUT.json]

The edge CNNs of test/models/edge_cnns.py (MobileNetV3-small/-large, EfficientNet-B0, MnasNet
1.0, timm ConvNeXt-atto; each as ONNX Runtime's quantize_static writes it, `_ort`, and as a
PyTorch 2 export QAT model, `_qat`), end to end. Runs in the peer environment
(.peer-venv/bin/python), offline. test/models/edge_cnns.py writes the models into, or finds
them in, its cache under DIR (one process, the same interpreter). Every file then goes through
test/models/producers/run_corpus.py's check_file: compile (`qdqc FILE -o x.o`), `qdqc run`
--engine=jit and --engine=ref on run_corpus's seeded input (bit for bit), ONNX Runtime (CPU,
1 thread) with graph optimisations disabled (the literal QDQ graph) and at ORT_ENABLE_ALL; the
largest difference from ORT's literal graph in units of the output DequantizeLinear's scale.
A PT2E QAT file ends in float logits (the classifier dequantizes its accumulator): it is checked
through a copy that also outputs the classifier's quantized input (tap_copy), in whose units the
comparison counts; the logits themselves get max abs / rel differences. The file itself must
compile too, and its JIT equal its reference bit for bit. A model the producer could not make
is a row `producer-error` with its exact exception.
One row per model (status as run_corpus.py: ok | ok-as-ort-all | outside-1-unit | jit-ne-ref |
refused | jit-error | ort-error | producer-error | crash) and a count. Exit 1 on a crash,
JIT != ref or a file outside one unit of ORT's literal graph and farther than ORT --opt all.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(ROOT, "test", "models", "edge_cnns.py")
sys.path.insert(0, os.path.join(ROOT, "test", "models", "producers"))
import run_corpus  # noqa: E402


def tap_copy(path, out):
    """For a file whose output no single-scale DequantizeLinear produces (the PT2E QAT files: the
    classifier's Gemm dequantizes into float logits), a copy with one more graph output (a tap):
    the output of the last single-scale DequantizeLinear on the path back from the output
    through each node's first input (the classifier's quantized input), so that the comparison
    has a quantization unit to count in; when that value is only a coarser one requantized onto
    a finer grid through a layout op, the coarser DequantizeLinear (whose unit the rounding was
    in). The computation is unchanged. False when there is none or no need."""
    import onnx
    m = onnx.load(path)
    g = m.graph
    scales = run_corpus.output_scales(path)
    if all(scales.values()):
        return False
    prod = {o: n for n in g.node for o in n.output}
    init = {t.name: t for t in g.initializer}
    for c in g.node:
        if c.op_type == "Constant" and c.attribute and c.attribute[0].name == "value":
            init[c.output[0]] = c.attribute[0].t
    n = prod.get(g.output[0].name)
    while n is not None:
        if n.op_type == "DequantizeLinear" and n.input[1] in init and \
                onnx.numpy_helper.to_array(init[n.input[1]]).size == 1:
            break
        n = prod.get(n.input[0]) if n.input else None
    if n is None:
        return False

    def scale_of(dq):
        return float(onnx.numpy_helper.to_array(init[dq.input[1]]).reshape(-1)[0])

    # A DequantizeLinear fed by a QuantizeLinear of a layout-only view (Reshape, Flatten...) of
    # an earlier, coarser per-tensor DequantizeLinear only re-expresses that value on a finer
    # grid, exactly: one unit of rounding there is S_up / S_down units here. Count in the
    # coarser unit: tap the earlier DequantizeLinear.
    layout = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity"}
    while True:
        q = prod.get(n.input[0])
        x = prod.get(q.input[0]) if q is not None and q.op_type == "QuantizeLinear" else None
        while x is not None and x.op_type in layout:
            x = prod.get(x.input[0])
        if x is None or x.op_type != "DequantizeLinear" or x.input[1] not in init or \
                onnx.numpy_helper.to_array(init[x.input[1]]).size != 1 or scale_of(x) <= scale_of(n):
            break
        n = x
    g.output.append(onnx.helper.make_tensor_value_info(n.output[0], onnx.TensorProto.FLOAT, None))
    onnx.save(m, out)
    return True


def file_jit_eq_ref(qdqc, path, tmp):
    """`qdqc run` --engine=jit and --engine=ref on the file itself, bit for bit."""
    import numpy as np
    feeds = run_corpus.inputs_for(path)
    rj, _, j = run_corpus.qdqc_run(qdqc, path, feeds, "jit", tmp)
    rr, _, r = run_corpus.qdqc_run(qdqc, path, feeds, "ref", tmp)
    if rj != 0 or rr != 0 or j.keys() != r.keys():
        return False
    return all(j[k].dtype == r[k].dtype and np.array_equal(j[k].view(np.uint8), r[k].view(np.uint8))
               for k in j)


def main(argv):
    pos, opts = [], {}
    i = 0
    while i < len(argv):
        if argv[i] in ("--cache", "--only", "--json"):
            if i + 1 >= len(argv):
                sys.stderr.write("edge_cnns.py: %s needs a value\n" % argv[i])
                return 2
            opts[argv[i]] = argv[i + 1]
            i += 2
            continue
        pos.append(argv[i])
        i += 1
    if len(pos) != 1 or "--cache" not in opts:
        sys.stderr.write(__doc__.split("\n\n")[0] + "\n")
        return 2
    qdqc = os.path.abspath(pos[0])
    cmd = [sys.executable, GEN, "--cache", opts["--cache"]]
    if "--only" in opts:
        cmd += ["--only", opts["--only"]]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        print("FAIL: test/models/edge_cnns.py exited %d" % r.returncode)
        return 1
    mdir = r.stdout.strip().splitlines()[-1]
    sys.path.insert(0, os.path.dirname(GEN))
    import edge_cnns
    names = [n for n in (opts["--only"].split(",") if "--only" in opts else edge_cnns.MODELS) if n]
    tmp = tempfile.mkdtemp(prefix="edge_cnns-")
    results = []
    for n in names:
        path = os.path.join(mdir, n + ".onnx")
        tpath = os.path.join(tmp, n + ".tap.onnx")
        if os.path.exists(path) and tap_copy(path, tpath):
            # the file itself must compile too; the checks run on the copy with the tap
            rc, out, err = run_corpus.run([qdqc, path, "-o", os.path.join(tmp, n + ".o")])
            if rc != 0:
                rec = {"status": "crash" if rc < 0 else "refused",
                       "refusal": run_corpus.first_error(err + out).replace(path, os.path.basename(path))}
            else:
                rec = run_corpus.check_file(qdqc, n.rsplit("_", 1)[1], tpath, tmp, False)
                rec["tap"] = True
                if rec.get("jit_eq_ref"):  # and the file itself: JIT == reference on its logits
                    rec["jit_eq_ref"] = file_jit_eq_ref(qdqc, path, tmp)
                    if not rec["jit_eq_ref"]:
                        rec["status"] = "jit-ne-ref"
        elif os.path.exists(path):
            rec = run_corpus.check_file(qdqc, n.rsplit("_", 1)[1], path, tmp, False)
        else:
            err = os.path.join(mdir, n + ".error.txt")
            rec = {"status": "producer-error",
                   "refusal": run_corpus.last_line(err) if os.path.exists(err) else "no file"}
        rec["model"], rec["file"] = n, n + ".onnx"
        results.append(rec)
        f = run_corpus.fmt
        print("%-24s %-15s jit==ref %-5s units %-4s (ORT-all %-4s) %-5s float abs %-9s rel %-9s %s" % (
            n, rec["status"], f(rec.get("jit_eq_ref"), "%s"), f(rec.get("max_units_vs_ort_literal"), "%g"),
            f(rec.get("ort_all_units_vs_ort_literal"), "%g"), "(tap)" if rec.get("tap") else "",
            f(rec.get("max_abs_vs_ort_literal"), "%.3g"), f(rec.get("max_rel_vs_ort_literal"), "%.3g"),
            rec.get("refusal") or ""), flush=True)
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)
    counts = {s: sum(1 for r in results if r["status"] == s) for s in sorted({r["status"] for r in results})}
    if "--json" in opts:
        with open(opts["--json"], "w") as fh:
            json.dump({"models": mdir, "files": results, "counts": counts}, fh, indent=1)
    print("%d models: %s" % (len(results), ", ".join("%s %d" % kv for kv in counts.items())))
    return 1 if any(r["status"] in ("crash", "jit-ne-ref", "outside-1-unit") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
