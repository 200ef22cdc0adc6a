"""model_cache.py: the lock the model generators (torch_qat.py, torch_vit.py, torch_wonly.py,
bert_dynq.py, edge_cnns.py) hold while they fill their cache directory CACHE/<key>/.

The lit tests keep that cache outside the build tree (lit.cfg.py's %qdqc_model_cache, by default
/var/cache/qdqc/models next to the peer environment), so every clone and build on a machine
shares it: two runs may ask for the same models at once, and the second must wait for the first
rather than read a file being written. The key (each script's cache_key: a hash of the script,
its seed and the producers' versions) already says when a cached file is stale.
"""
import contextlib
import fcntl
import os


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
