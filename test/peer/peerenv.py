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
