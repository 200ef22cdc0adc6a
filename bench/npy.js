'use strict';
// Minimal .npy (NumPy format v1.0/2.0/3.0) reader and writer.
// Supports little-endian (or byte-order-free) float32, float64, int8, uint8,
// int16, uint16, int32, int64, uint64, bool, in C order (fortran_order False).
const fs = require('fs');

const DTYPES = {
  f4: { ort: 'float32', size: 4, Arr: Float32Array },
  f8: { ort: 'float64', size: 8, Arr: Float64Array },
  i1: { ort: 'int8', size: 1, Arr: Int8Array },
  u1: { ort: 'uint8', size: 1, Arr: Uint8Array },
  i2: { ort: 'int16', size: 2, Arr: Int16Array },
  u2: { ort: 'uint16', size: 2, Arr: Uint16Array },
  i4: { ort: 'int32', size: 4, Arr: Int32Array },
  u4: { ort: 'uint32', size: 4, Arr: Uint32Array },
  i8: { ort: 'int64', size: 8, Arr: BigInt64Array },
  u8: { ort: 'uint64', size: 8, Arr: BigUint64Array },
  b1: { ort: 'bool', size: 1, Arr: Uint8Array },
};
const ORT_TO_DESCR = {};
for (const [k, v] of Object.entries(DTYPES)) ORT_TO_DESCR[v.ort] = k;

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

class NpyError extends Error {}

function parseHeader(text, file) {
  // The header is a Python dict literal, e.g.
  // {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 32, 32), }
  const descr = /['"]descr['"]\s*:\s*['"]([^'"]+)['"]/.exec(text);
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(text);
  const shape = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(text);
  if (!descr || !fortran || !shape) throw new NpyError(`${file}: malformed .npy header: ${text.trim()}`);
  if (fortran[1] === 'True') throw new NpyError(`${file}: fortran_order=True arrays are not supported`);
  let d = descr[1];
  const order = d[0];
  if (order === '>' && d.slice(1) !== 'i1' && d.slice(1) !== 'u1' && d.slice(1) !== 'b1')
    throw new NpyError(`${file}: big-endian dtype ${d} is not supported`);
  if ('<>|='.includes(order)) d = d.slice(1);
  if (!(d in DTYPES)) throw new NpyError(`${file}: unsupported dtype '${descr[1]}'`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map((s) => {
    if (!/^\d+$/.test(s)) throw new NpyError(`${file}: bad shape entry '${s}'`);
    return Number(s);
  });
  return { descr: d, dims };
}

// Returns { type: ort type string, dims: number[], data: TypedArray }.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || !buf.subarray(0, 6).equals(MAGIC)) throw new NpyError(`${file}: not a .npy file (bad magic)`);
  const major = buf[6];
  let hlen, hstart;
  if (major === 1) { hlen = buf.readUInt16LE(8); hstart = 10; }
  else if (major === 2 || major === 3) {
    if (buf.length < 12) throw new NpyError(`${file}: truncated .npy header`);
    hlen = buf.readUInt32LE(8); hstart = 12;
  } else throw new NpyError(`${file}: unsupported .npy version ${major}`);
  if (hstart + hlen > buf.length) throw new NpyError(`${file}: truncated .npy header`);
  const header = buf.subarray(hstart, hstart + hlen).toString(major === 3 ? 'utf8' : 'latin1');
  const { descr, dims } = parseHeader(header, file);
  const dt = DTYPES[descr];
  const count = dims.reduce((a, b) => a * b, 1);
  const off = hstart + hlen;
  const need = count * dt.size;
  if (buf.length - off < need)
    throw new NpyError(`${file}: data too short: need ${need} bytes for shape (${dims.join(', ')}), have ${buf.length - off}`);
  // Copy into an aligned buffer of exactly the right size.
  const ab = new ArrayBuffer(need);
  new Uint8Array(ab).set(buf.subarray(off, off + need));
  let data = new dt.Arr(ab);
  if (descr === 'b1') data = Array.from(data, (v) => v !== 0); // ORT wants booleans for bool tensors
  return { type: dt.ort, dims, data };
}

// Writes a tensor-like { type, dims, data } as .npy v1.0 (v2.0 when the header needs it).
function writeNpy(file, type, dims, data) {
  const descr = ORT_TO_DESCR[type];
  if (!descr) throw new NpyError(`cannot write tensor of type '${type}' as .npy`);
  const dt = DTYPES[descr];
  const prefix = (descr === 'i1' || descr === 'u1' || descr === 'b1') ? '|' : '<';
  const shapeStr = dims.length === 0 ? '()' : dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let dict = `{'descr': '${prefix}${descr}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  let version = 1;
  let pre = 10;
  let total = pre + dict.length + 1;
  if (total % 64 !== 0) total += 64 - (total % 64);
  if (total - pre > 0xffff) {
    version = 2; pre = 12; total = pre + dict.length + 1;
    if (total % 64 !== 0) total += 64 - (total % 64);
  }
  const hlen = total - pre;
  const header = Buffer.alloc(total, 0x20);
  MAGIC.copy(header, 0);
  header[6] = version; header[7] = 0;
  if (version === 1) header.writeUInt16LE(hlen, 8); else header.writeUInt32LE(hlen, 8);
  header.write(dict, pre, 'latin1');
  header[total - 1] = 0x0a;
  let body;
  if (descr === 'b1') body = Buffer.from(Array.from(data, (v) => (v ? 1 : 0)));
  else {
    const arr = data instanceof dt.Arr ? data : dt.Arr.from(data);
    body = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
  }
  const count = dims.reduce((a, b) => a * b, 1);
  if (body.length !== count * dt.size) throw new NpyError(`${file}: data size ${body.length} does not match shape (${dims.join(', ')})`);
  fs.writeFileSync(file, Buffer.concat([header, body]));
}

module.exports = { readNpy, writeNpy, NpyError, DTYPES };
