#!/usr/bin/env python3
"""ort_cpu.py: ONNX Runtime timing for bench/run_bench.py, wall and process CPU time per run.

  PEER_PYTHON bench/ort_cpu.py MODEL.onnx INPUT ITERS THREADS

INPUT is the first graph input's .npy, or an .npz holding every graph input by name.

Same session options as `ort_run.py --opt all --threads N` (sequential execution, one inter-op
thread). Prints one line per run after 3 warm-up runs: "<wall ms> <cpu ms>", where cpu is the
process's user+system time over the run (all threads: at 1 thread, the inference's own CPU time,
robust to other load on a shared machine; at N threads, the total work).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_run  # noqa: E402


def main():
    try:
        model, inp, iters, threads = sys.argv[1:5]
        iters, threads = int(iters), int(threads)
        import numpy as np
        import onnxruntime as ort
        sess = ort.InferenceSession(os.path.abspath(model), ort_run.session_options(ort, "all", threads),
                                    providers=["CPUExecutionProvider"])
        if inp.endswith(".npz"):
            with np.load(inp, allow_pickle=False) as z:
                feeds = {i.name: z[i.name] for i in sess.get_inputs()}
        else:
            feeds = {sess.get_inputs()[0].name: np.load(inp, allow_pickle=False)}
        for _ in range(3):
            sess.run(None, feeds)
        lines = []
        for _ in range(iters):
            c0, w0 = time.process_time_ns(), time.perf_counter_ns()
            sess.run(None, feeds)
            w, c = time.perf_counter_ns() - w0, time.process_time_ns() - c0
            lines.append("%.4f %.4f" % (w / 1e6, c / 1e6))
    except Exception as e:  # ORT's own exception classes included
        sys.stderr.write("ort_cpu: %s\n" % e)
        sys.exit(1)
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
