#!/usr/bin/env node
'use strict';
// ort_cpu.js: ONNX Runtime timing for bench/run_bench.py, wall and process CPU time per run.
//
//   node bench/ort_cpu.js MODEL.onnx INPUT.npy ITERS THREADS
//
// Same session options as `ort_run.js --opt all --threads N` (sequential execution, one inter-op
// thread). Prints one line per run after 3 warm-up runs: "<wall ms> <cpu ms>", where cpu is the
// process's user+system time over the run (all threads: at 1 thread, the inference's own CPU
// time, robust to other load on a shared machine; at N threads, the total work).
const path = require('path');
const { readNpy } = require('./npy');
const ort = require('onnxruntime-node');

async function main() {
  const [model, input, itersS, threadsS] = process.argv.slice(2);
  const iters = Number(itersS), threads = Number(threadsS);
  const session = await ort.InferenceSession.create(path.resolve(model), {
    graphOptimizationLevel: 'all', executionMode: 'sequential', logSeverityLevel: 3,
    intraOpNumThreads: threads, interOpNumThreads: 1,
  });
  const t = readNpy(input);
  const feeds = { [session.inputNames[0]]: new ort.Tensor(t.type, t.data, t.dims) };
  for (let i = 0; i < 3; i++) await session.run(feeds);
  const lines = [];
  for (let i = 0; i < iters; i++) {
    const c0 = process.cpuUsage(), w0 = process.hrtime.bigint();
    await session.run(feeds);
    const w = Number(process.hrtime.bigint() - w0) / 1e6, c = process.cpuUsage(c0);
    lines.push(`${w.toFixed(4)} ${((c.user + c.system) / 1000).toFixed(4)}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((e) => { process.stderr.write(`ort_cpu: ${e.message}\n`); process.exit(1); });
