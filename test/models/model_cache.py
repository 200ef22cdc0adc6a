"""model_cache.py: the lock the model generators (torch_qat.py, torch_vit.py, torch_wonly.py,
bert_dynq.py, edge_cnns.py) hold while they fill their cache directory CACHE/<key>/.

The lit tests keep that cache outside the build tree (lit.cfg.py's %qdqc_model_cache, by default
/var/cache/qdqc/models next to the peer environment), so every clone and build on a machine
shares it: two runs may ask for the same models at once, and the second must wait for the first
rather than read a file being written. The key (each script's cache_key: a hash of the script,
its seed and the producers' versions) already says when a cached file is stale; prune removes
the keys nobody used for STALE_DAYS days.
"""
import contextlib
import fcntl
import os
import shutil
import time

# a cache entry (key directory) nobody used for this long is removed by the next fill
STALE_DAYS = 14


@contextlib.contextmanager
def lock(out):
    """Hold an exclusive lock on the cache directory OUT (None: no cache, no lock)."""
    if out is None:
        yield
        return
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def fill(tag, out, names, make, cached, failed=lambda name: False):
    """Make each model of NAMES in OUT by make(name) (False: the producer failed and recorded
    why; nothing to mark). With CACHED, under the lock, and a model already made (OUT/<name>/done)
    or recorded as failed (failed(name)) is not made again."""
    import sys
    import time
    if cached:
        use(out)
    with lock(out if cached else None):
        for n in names:
            if cached and (os.path.exists(os.path.join(out, n, "done")) or failed(n)):
                continue
            t0 = time.time()
            if make(n) is False:
                continue
            if cached:
                open(os.path.join(out, n, "done"), "w").close()
            print("%s: %s.onnx in %.1f s" % (tag, n, time.time() - t0), file=sys.stderr)


def use(out):
    """Create the cache directory OUT if needed, mark it used now, and prune its siblings."""
    os.makedirs(out, exist_ok=True)
    os.utime(out)
    prune(os.path.dirname(os.path.abspath(out)), out)


def prune(parent, keep):
    """Remove the directories in PARENT other than KEEP that nobody used for STALE_DAYS days (the
    keys of older generator scripts or producer versions, temporary directories a killed run left
    behind): the cache outlives every clone, so it would otherwise only grow. A directory whose
    lock another process holds stays."""
    now = time.time()
    for e in os.listdir(parent):
        p = os.path.join(parent, e)
        if e.startswith(".") or os.path.abspath(p) == os.path.abspath(keep) or not os.path.isdir(p):
            continue
        try:
            if now - os.path.getmtime(p) < STALE_DAYS * 86400:
                continue
            with open(os.path.join(p, ".lock"), "a") as f:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            continue
