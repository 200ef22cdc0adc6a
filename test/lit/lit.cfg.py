# lit configuration for qdqc. Tests: *.qir (text IR), *.test (RUN lines over other inputs).
import os
import lit.formats
import lit.Test

config.name = "qdqc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".qir", ".test", ".c", ".py", ".mlir"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "qdqc_lit.py", "__pycache__"]
config.test_source_root = os.path.dirname(__file__)
# Under QDQC_HOST_CPU (the ctests lit.host-CPU, which rerun codegen/ and regress/ while the
# plain `lit` ctest may be running) each CPU gets its own Output tree: two runs of one test in
# one %t directory delete each other's files.
_host_cpu = os.environ.get("QDQC_HOST_CPU", "")
config.test_exec_root = os.path.join(config.qdqc_obj_root, "test",
                                     "lit-host-" + _host_cpu if _host_cpu else "lit")

path = os.pathsep.join([config.qdqc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(("%qdqc_src", config.qdqc_src_root))
config.substitutions.append(("%qdqc_obj", config.qdqc_obj_root))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%onnx_node_tests", "/usr/share/libonnx-testdata/data/node"))

# Models that producers write (torch exports, ONNX Runtime's and the other quantizers' files) take
# minutes to make and depend only on the generator script, its seed and the producers' versions,
# which their cache keys hash (test/models/model_cache.py). %qdqc_model_cache keeps them outside
# the build tree, next to the peer environment, so every clone and build on the machine (CI's
# clean clones, the sanitizer build) shares them: $QDQC_MODEL_CACHE, else
# ${QDQC_PEER_CACHE:-/var/cache/qdqc}/models, else (not writable) the build directory.
def _model_cache():
    d = os.environ.get("QDQC_MODEL_CACHE") or \
        os.path.join(os.environ.get("QDQC_PEER_CACHE") or "/var/cache/qdqc", "models")
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    return os.path.join(config.qdqc_obj_root, "test")
config.substitutions.append(("%qdqc_model_cache", _model_cache()))

# The peer environment (tools/setup.sh --peer; docs/testing.md): ONNX Runtime and the other peers
# in a venv linked from the source tree as .peer-venv. %peer_python is its interpreter; the test
# scripts find the same one through $QDQC_PEER_PYTHON (test/peer/peerenv.py). A test that needs a
# peer fails when it is missing: no feature gates it.
peer_python = os.environ.get("QDQC_PEER_PYTHON") or os.path.join(config.qdqc_src_root, ".peer-venv", "bin", "python")
config.substitutions.append(("%peer_python", peer_python))
config.environment["QDQC_PEER_PYTHON"] = peer_python
config.environment["HF_HUB_OFFLINE"] = "1"
config.environment["TRANSFORMERS_OFFLINE"] = "1"
if not os.path.exists(peer_python):
    lit_config.note("peer environment missing (%s): the ONNX Runtime tests will fail; "
                    "run tools/setup.sh --peer" % peer_python)

# PyTorch for Debian's python (test/models/torch_qat.py): tests that export real models say
# REQUIRES: torch and are reported UNSUPPORTED without it
import subprocess
if subprocess.run(["/usr/bin/python3", "-c", "import importlib.util as u, sys; "
                   "sys.exit(not (u.find_spec('torch') and u.find_spec('torchvision')))"]).returncode == 0:
    config.available_features.add("torch")
else:
    lit_config.note("PyTorch not found for /usr/bin/python3: the torch-qat e2e tests are unsupported "
                    "(apt-get install python3-torch python3-torchvision, or tools/setup.sh)")

if config.qdqc_sanitize:
    config.available_features.add("asan")

# AArch64 under qemu-user (tools/setup.sh installs qemu-user and gcc-aarch64-linux-gnu): tests
# that say REQUIRES: qemu-aarch64 are unsupported without them, an error under
# QDQC_REQUIRE_CROSS=1 (.ci/run)
import shutil
if shutil.which("qemu-aarch64") and shutil.which("aarch64-linux-gnu-gcc"):
    config.available_features.add("qemu-aarch64")
elif os.environ.get("QDQC_REQUIRE_CROSS") == "1":
    lit_config.error("QDQC_REQUIRE_CROSS=1 but qemu-aarch64 or aarch64-linux-gnu-gcc is missing")
else:
    lit_config.note("qemu-aarch64 / aarch64-linux-gnu-gcc not found: the AArch64 lit tests are "
                    "unsupported (tools/setup.sh installs them)")

# --- Tiers, host-variant runs and per-test time limits (docs/testing.md, "Tiers") ---------
# Every test is in the quick tier (README's test command, tools/run-tests.sh) unless a line of
# it says `TIER: long` (tools/run-tests.sh --full). `--param tier=quick|long|all` (default
# quick) picks what lit discovers, so each tier's counts are its own tests only. Under
# QDQC_HOST_CPU (ctest lit.host-CPU, full tier) only the tests that can depend on the tuning CPU
# run: those that emit LLVM IR or assembly and FileCheck it, of both tiers. Each test runs under
# its own time limit from its measured cost in test/lit/.lit_test_times.txt (lit's
# own format: it also starts the slowest tests first from it) (test/lit/qdqc_lit.py).
import sys

sys.path.insert(0, config.test_source_root)
from qdqc_lit import QdqcTest, read_costs  # noqa: E402

_tier = lit_config.params.get("tier", "quick")
if _tier not in ("quick", "long", "all"):
    lit_config.fatal("--param tier=%s: expected quick, long or all" % _tier)
_rotate = lit_config.params.get("sanitize_rotate", "day")
if _rotate not in ("day", "all", "0", "1"):
    lit_config.fatal("--param sanitize_rotate=%s: expected day, all, 0 or 1" % _rotate)
config.test_format = QdqcTest(tier=_tier, host_cpu=_host_cpu,
                              costs=read_costs(os.path.join(config.test_source_root, ".lit_test_times.txt")),
                              sanitize=config.qdqc_sanitize,
                              floor=int(lit_config.params.get("time_floor", "120")),
                              rotate=_rotate,
                              root=config.test_source_root)
