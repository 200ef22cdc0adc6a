"""dynamic_batch_sweep.py QDQC CC FIXTURE_DIR [--part K/P]: every fixture model made batch-dynamic
(test/models/batch_dynamic.py) is either refused by `qdqc --dim N=1..5` with an error naming a node or a
value, or compiles and runs at N = 1 and 5 (a chunk of 4 through the graph compiled at 4, then one
index through the graph at 1) bit for bit as `qdqc run` (static compile) and the reference
interpreter (dynamic_batch_check.py). Prints the accepted and refused counts, then
one line per failure; exit 1 on any failure (a crash, an error without a location, a
mismatch). --part K/P: only the fixtures whose sorted index is K modulo P (K = "day": the day
of the year modulo P, so P days cover them all)."""
import datetime
import glob
import os
import subprocess
import sys

qdqc, cc, fixtures = sys.argv[1:4]
part, parts = 0, 1
if len(sys.argv) > 5 and sys.argv[4] == "--part":
    k, p = sys.argv[5].split("/")
    parts = int(p)
    part = datetime.date.today().timetuple().tm_yday % parts if k == "day" else int(k)
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "models"))
from batch_dynamic import set_batch  # noqa: E402
accepted, refused, failures = [], [], []
paths = sorted(glob.glob(os.path.join(fixtures, "*.onnx")))
if parts > 1:
    print("part %d of %d: %d of %d fixtures" % (part, parts, len(paths[part::parts]), len(paths)))
for path in paths[part::parts]:
    name = os.path.basename(path)[:-5]
    os.makedirs(name, exist_ok=True)
    dyn = os.path.join(name, "m.onnx")
    set_batch(path, dyn)
    r = subprocess.run([qdqc, dyn, "--dim", "N=1..5", "--emit=header", "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode:
        if r.returncode == 1 and " error: " in r.stderr and "m.onnx" in r.stderr:
            refused.append(name)
        else:
            failures.append("%s: refused badly (exit %d): %s" % (name, r.returncode, r.stderr.strip()))
        continue
    c = subprocess.run([sys.executable, os.path.join(here, "dynamic_batch_check.py"), qdqc, cc,
                        "m.onnx", "1", "5", "1", "5"], capture_output=True, text=True, cwd=name)
    if c.returncode:
        failures.append("%s: %s%s" % (name, c.stdout.strip(), c.stderr.strip()[-400:]))
    else:
        accepted.append(name)
print("accepted %d, refused %d, failed %d" % (len(accepted), len(refused), len(failures)))
for f in failures:
    print("FAIL " + f)
sys.exit(1 if failures else 0)
