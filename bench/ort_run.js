#!/usr/bin/env node
'use strict';
// ONNX Runtime peer runner for qdqc.
//
//   node bench/ort_run.js MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR
//        --opt disabled|basic|extended|all [--threads N] [--bench ITERS] [--warmup N]
//
// Reads inputs from .npy files, runs MODEL with the given graph optimization
// level and intra-op thread count, writes every output as DIR/<name>.npy
// (characters outside [A-Za-z0-9_.-] replaced by '_'). With --bench ITERS it
// also times ITERS runs after warm-up and prints "median <X> ms" plus min/p90.
// --info prints the model's inputs and outputs and exits; --save-optimized OUT.onnx writes the graph
// as ORT rewrote it (to see which QDQ groups it fused).
// Any error exits non-zero with a message on stderr.
const fs = require('fs');
const path = require('path');
const { readNpy, writeNpy } = require('./npy');

const USAGE = `usage: node ort_run.js MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR --opt disabled|basic|extended|all [--threads N] [--bench ITERS] [--warmup N] [--save-optimized OUT.onnx] [--verbose]
       node ort_run.js MODEL.onnx --info`;

// A closed stdout (e.g. `| head -1`) is not an error.
process.stdout.on('error', (e) => { if (e.code === 'EPIPE') process.exit(0); throw e; });

function die(msg, code = 1) {
  process.stderr.write(`ort_run: ${msg}\n`);
  process.exit(code);
}

function parsePositiveInt(flag, v, allowZero = false) {
  if (v === undefined || !/^\d+$/.test(v)) die(`${flag} expects a non-negative integer, got '${v}'`, 2);
  const n = Number(v);
  if (!allowZero && n === 0) die(`${flag} must be > 0`, 2);
  return n;
}

function parseArgs(argv) {
  const a = { model: null, inputs: [], outDir: null, opt: null, threads: 0, bench: 0, warmup: null, info: false, verbose: false, saveOptimized: null };
  for (let i = 0; i < argv.length; i++) {
    const t = argv[i];
    const next = () => { if (i + 1 >= argv.length) die(`${t} needs a value`, 2); return argv[++i]; };
    if (t === '--input' || t === '-i') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq <= 0) die(`--input expects NAME=FILE.npy, got '${v}'`, 2);
      a.inputs.push({ name: v.slice(0, eq), file: v.slice(eq + 1) });
    } else if (t === '--output-dir' || t === '-o') a.outDir = next();
    else if (t === '--opt') {
      a.opt = next();
      if (!['disabled', 'basic', 'extended', 'all'].includes(a.opt)) die(`--opt must be disabled|basic|extended|all, got '${a.opt}'`, 2);
    } else if (t === '--threads') a.threads = parsePositiveInt(t, next(), true);
    else if (t === '--bench') a.bench = parsePositiveInt(t, next());
    else if (t === '--warmup') a.warmup = parsePositiveInt(t, next(), true);
    else if (t === '--info') a.info = true;
    else if (t === '--save-optimized') a.saveOptimized = next();
    else if (t === '--verbose' || t === '-v') a.verbose = true;
    else if (t === '--help' || t === '-h') { process.stdout.write(USAGE + '\n'); process.exit(0); }
    else if (t.startsWith('-')) die(`unknown option '${t}'\n${USAGE}`, 2);
    else if (a.model === null) a.model = t;
    else die(`unexpected argument '${t}'\n${USAGE}`, 2);
  }
  if (!a.model) die(`no model given\n${USAGE}`, 2);
  if (!a.info) {
    if (!a.opt) die('--opt disabled|all is required', 2);
    if (!a.outDir && !a.bench) die('--output-dir DIR is required (unless --bench is given)', 2);
  }
  return a;
}

function safeName(name) {
  const s = name.replace(/[^A-Za-z0-9_.-]/g, '_');
  return s === '' || s === '.' || s === '..' ? `_${s}` : s;
}

function percentile(sorted, p) {
  // nearest-rank on a sorted array
  const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[k];
}

function median(sorted) {
  const n = sorted.length;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    die(`cannot load onnxruntime-node (run 'cd bench && ONNXRUNTIME_NODE_INSTALL=skip npm ci'): ${e.message}`);
  }
  if (!fs.existsSync(args.model)) die(`model not found: ${args.model}`);

  const opts = {
    graphOptimizationLevel: args.opt || 'all',
    executionMode: 'sequential',
    logSeverityLevel: args.verbose ? 1 : 3,
  };
  if (args.saveOptimized) opts.optimizedModelFilePath = path.resolve(args.saveOptimized);
  if (args.threads > 0) {
    opts.intraOpNumThreads = args.threads;
    opts.interOpNumThreads = 1;
  }

  let session;
  try {
    session = await ort.InferenceSession.create(path.resolve(args.model), opts);
  } catch (e) {
    die(`ONNX Runtime refused ${args.model}: ${e.message}`);
  }

  if (args.info) {
    const meta = (list, names) => names.map((n, i) => {
      const m = list && list[i];
      if (m && m.isTensor) return `${n}: ${m.type} [${m.shape.join(', ')}]`;
      return n;
    });
    process.stdout.write(`inputs:\n  ${meta(session.inputMetadata, session.inputNames).join('\n  ')}\n`);
    process.stdout.write(`outputs:\n  ${meta(session.outputMetadata, session.outputNames).join('\n  ')}\n`);
    return;
  }

  const feeds = {};
  for (const { name, file } of args.inputs) {
    if (!session.inputNames.includes(name))
      die(`model has no input '${name}' (inputs: ${session.inputNames.join(', ')})`);
    if (name in feeds) die(`input '${name}' given twice`);
    let t;
    try {
      t = readNpy(file);
    } catch (e) {
      die(e.code ? `cannot read input '${name}' from ${file}: ${e.message}` : e.message);
    }
    try {
      feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    } catch (e) {
      die(`cannot make tensor for input '${name}' from ${file}: ${e.message}`);
    }
  }
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) die(`missing --input for: ${missing.join(', ')}`);

  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    die(`ONNX Runtime failed to run ${args.model}: ${e.message}`);
  }

  if (args.outDir) {
    fs.mkdirSync(args.outDir, { recursive: true });
    const used = new Set();
    for (const name of session.outputNames) {
      const t = results[name];
      let base = safeName(name);
      if (used.has(base)) die(`two outputs map to the same file name '${base}.npy'`);
      used.add(base);
      const file = path.join(args.outDir, `${base}.npy`);
      try {
        writeNpy(file, t.type, t.dims, t.data);
      } catch (e) {
        die(`cannot write output '${name}': ${e.message}`);
      }
    }
  }

  if (args.bench) {
    const warmup = args.warmup !== null ? args.warmup : Math.max(3, Math.min(50, Math.ceil(args.bench / 10)));
    try {
      for (let i = 0; i < warmup; i++) await session.run(feeds);
      const times = [];
      for (let i = 0; i < args.bench; i++) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        const t1 = process.hrtime.bigint();
        times.push(Number(t1 - t0) / 1e6);
      }
      times.sort((x, y) => x - y);
      const f = (x) => x.toFixed(4);
      process.stdout.write(`median ${f(median(times))} ms\n`);
      process.stdout.write(`min ${f(times[0])} ms\n`);
      process.stdout.write(`p90 ${f(percentile(times, 90))} ms\n`);
      process.stdout.write(`iters ${args.bench} warmup ${warmup} threads ${args.threads || 'default'} opt ${args.opt}\n`);
    } catch (e) {
      die(`ONNX Runtime failed during --bench: ${e.message}`);
    }
  }
  if (typeof session.release === 'function') await session.release();
}

main().catch((e) => die(e && e.stack ? e.stack : String(e)));
