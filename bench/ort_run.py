#!/usr/bin/env python3
"""ONNX Runtime peer runner for qdqc (the peer environment's Python onnxruntime).

  PEER_PYTHON bench/ort_run.py MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR
       --opt disabled|basic|extended|all [--threads N] [--bench ITERS] [--warmup N]

PEER_PYTHON is the peer environment's interpreter (`tools/setup.sh --peer`; test/peer/peerenv.py
finds it). Reads inputs from .npy files, runs MODEL on the CPU execution provider with the given
graph optimization level and intra-op thread count (one inter-op thread, sequential execution),
writes every output as DIR/<name>.npy (characters outside [A-Za-z0-9_.-] replaced by '_'). With
--bench ITERS it also times ITERS runs after warm-up and prints "median <X> ms" plus min/p90.
--info prints the model's inputs and outputs and exits; --save-optimized OUT.onnx writes the graph
as ORT rewrote it (to see which QDQ groups it fused).
Any error exits non-zero with a message on stderr (usage errors: 2).
"""
import math
import os
import re
import sys
import time

USAGE = """usage: ort_run.py MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR --opt disabled|basic|extended|all [--threads N] [--bench ITERS] [--warmup N] [--save-optimized OUT.onnx] [--verbose]
       ort_run.py MODEL.onnx --info"""

OPT_LEVELS = ("disabled", "basic", "extended", "all")


def die(msg, code=1):
    sys.stderr.write("ort_run: %s\n" % msg)
    sys.stderr.flush()
    sys.exit(code)


def parse_count(flag, v, allow_zero=False):
    if v is None or not re.fullmatch(r"\d+", v):
        die("%s expects a non-negative integer, got '%s'" % (flag, v), 2)
    n = int(v)
    if not allow_zero and n == 0:
        die("%s must be > 0" % flag, 2)
    return n


def parse_args(argv):
    a = dict(model=None, inputs=[], out_dir=None, opt=None, threads=0, bench=0, warmup=None,
             info=False, verbose=False, save_optimized=None)
    i = 0
    while i < len(argv):
        t = argv[i]

        def nxt():
            nonlocal i
            if i + 1 >= len(argv):
                die("%s needs a value" % t, 2)
            i += 1
            return argv[i]

        if t in ("--input", "-i"):
            v = nxt()
            eq = v.find("=")
            if eq <= 0:
                die("--input expects NAME=FILE.npy, got '%s'" % v, 2)
            a["inputs"].append((v[:eq], v[eq + 1:]))
        elif t in ("--output-dir", "-o"):
            a["out_dir"] = nxt()
        elif t == "--opt":
            a["opt"] = nxt()
            if a["opt"] not in OPT_LEVELS:
                die("--opt must be disabled|basic|extended|all, got '%s'" % a["opt"], 2)
        elif t == "--threads":
            a["threads"] = parse_count(t, nxt(), True)
        elif t == "--bench":
            a["bench"] = parse_count(t, nxt())
        elif t == "--warmup":
            a["warmup"] = parse_count(t, nxt(), True)
        elif t == "--info":
            a["info"] = True
        elif t == "--save-optimized":
            a["save_optimized"] = nxt()
        elif t in ("--verbose", "-v"):
            a["verbose"] = True
        elif t in ("--help", "-h"):
            sys.stdout.write(USAGE + "\n")
            sys.exit(0)
        elif t.startswith("-"):
            die("unknown option '%s'\n%s" % (t, USAGE), 2)
        elif a["model"] is None:
            a["model"] = t
        else:
            die("unexpected argument '%s'\n%s" % (t, USAGE), 2)
        i += 1
    if not a["model"]:
        die("no model given\n" + USAGE, 2)
    if not a["info"]:
        if not a["opt"]:
            die("--opt disabled|all is required", 2)
        if not a["out_dir"] and not a["bench"]:
            die("--output-dir DIR is required (unless --bench is given)", 2)
    return a


def safe_name(name):
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return "_" + s if s in ("", ".", "..") else s


def percentile(sorted_times, p):
    # nearest-rank on a sorted list
    k = min(len(sorted_times) - 1, max(0, math.ceil(p / 100 * len(sorted_times)) - 1))
    return sorted_times[k]


def median(sorted_times):
    n = len(sorted_times)
    return sorted_times[(n - 1) // 2] if n % 2 else (sorted_times[n // 2 - 1] + sorted_times[n // 2]) / 2


# ONNX tensor element type names as ORT's Python API spells them -> numpy-style names
_TYPES = {"float": "float32", "double": "float64", "float16": "float16", "bfloat16": "bfloat16",
          "int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16", "int32": "int32",
          "uint32": "uint32", "int64": "int64", "uint64": "uint64", "bool": "bool", "string": "string"}


def describe(arg):
    m = re.fullmatch(r"tensor\((\w+)\)", arg.type or "")
    if not m:
        return arg.name
    dims = ", ".join("?" if d is None else str(d) for d in arg.shape)
    return "%s: %s [%s]" % (arg.name, _TYPES.get(m.group(1), m.group(1)), dims)


def session_options(ort, opt, threads, verbose=False, save_optimized=None):
    """The session options every qdqc peer run uses: CPU, sequential, one inter-op thread when
    the intra-op count is given. Shared with ort_cpu.py."""
    so = ort.SessionOptions()
    so.graph_optimization_level = {
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[opt or "all"]
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 1 if verbose else 3
    if save_optimized:
        so.optimized_model_filepath = os.path.abspath(save_optimized)
    if threads > 0:
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
    return so


def main():
    a = parse_args(sys.argv[1:])
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        die("cannot load onnxruntime (run this with the peer environment's python, "
            "tools/setup.sh --peer): %s" % e)
    if not os.path.exists(a["model"]):
        die("model not found: %s" % a["model"])
    so = session_options(ort, a["opt"], a["threads"], a["verbose"], a["save_optimized"])
    try:
        sess = ort.InferenceSession(os.path.abspath(a["model"]), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # ORT raises its own exception classes
        die("ONNX Runtime refused %s: %s" % (a["model"], e))
    in_names = [x.name for x in sess.get_inputs()]
    out_names = [x.name for x in sess.get_outputs()]

    if a["info"]:
        sys.stdout.write("inputs:\n  %s\n" % "\n  ".join(describe(x) for x in sess.get_inputs()))
        sys.stdout.write("outputs:\n  %s\n" % "\n  ".join(describe(x) for x in sess.get_outputs()))
        return

    feeds = {}
    for name, f in a["inputs"]:
        if name not in in_names:
            die("model has no input '%s' (inputs: %s)" % (name, ", ".join(in_names)))
        if name in feeds:
            die("input '%s' given twice" % name)
        try:
            feeds[name] = np.load(f, allow_pickle=False)
        except OSError as e:
            die("cannot read input '%s' from %s: %s" % (name, f, e))
        except ValueError as e:
            die("%s: %s" % (f, e))
    missing = [n for n in in_names if n not in feeds]
    if missing:
        die("missing --input for: %s" % ", ".join(missing))

    try:
        results = sess.run(None, feeds)
    except Exception as e:
        die("ONNX Runtime failed to run %s: %s" % (a["model"], e))

    if a["out_dir"]:
        os.makedirs(a["out_dir"], exist_ok=True)
        used = set()
        for name, t in zip(out_names, results):
            base = safe_name(name)
            if base in used:
                die("two outputs map to the same file name '%s.npy'" % base)
            used.add(base)
            try:
                np.save(os.path.join(a["out_dir"], base + ".npy"), np.asarray(t, order="C"), allow_pickle=False)
            except (OSError, ValueError) as e:
                die("cannot write output '%s': %s" % (name, e))

    if a["bench"]:
        n = a["bench"]
        warmup = a["warmup"] if a["warmup"] is not None else max(3, min(50, math.ceil(n / 10)))
        try:
            for _ in range(warmup):
                sess.run(None, feeds)
            times = []
            for _ in range(n):
                t0 = time.perf_counter_ns()
                sess.run(None, feeds)
                times.append((time.perf_counter_ns() - t0) / 1e6)
        except Exception as e:
            die("ONNX Runtime failed during --bench: %s" % e)
        times.sort()
        sys.stdout.write("median %.4f ms\n" % median(times))
        sys.stdout.write("min %.4f ms\n" % times[0])
        sys.stdout.write("p90 %.4f ms\n" % percentile(times, 90))
        sys.stdout.write("iters %d warmup %d threads %s opt %s\n" % (n, warmup, a["threads"] or "default", a["opt"]))


if __name__ == "__main__":
    try:
        main()
        sys.stdout.flush()
    except BrokenPipeError:  # a closed stdout (e.g. `| head -1`) is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
