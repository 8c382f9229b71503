/**
 * SHA-256 (FIPS 180-4), synchronous, for the small inputs the verifier hashes many times per
 * check: Merkle nodes (65 bytes), log entries (about 150 bytes) and a record's canonical JSON
 * (a few KB). WebCrypto's `digest` is asynchronous; Node runs each call as a job on its thread
 * pool, which cost a log check about 20 round trips of tens of microseconds each, most of the
 * check's time (scripts/bench/README.md, Verifier). Written here so the package keeps no runtime
 * dependencies; test/verifier/sha256.test.ts compares it with WebCrypto over arbitrary inputs.
 */

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** The message schedule, state and last block, reused between calls (the function never yields). */
const W = new Uint32Array(64);
const STATE = new Uint32Array(8);
const BLOCK = new Uint8Array(64);

function compress(state: Uint32Array, block: Uint8Array, at: number): void {
  for (let t = 0; t < 16; t++) {
    const i = at + t * 4;
    W[t] =
      ((block[i] as number) << 24) |
      ((block[i + 1] as number) << 16) |
      ((block[i + 2] as number) << 8) |
      (block[i + 3] as number);
  }
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15] as number;
    const w2 = W[t - 2] as number;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = ((W[t - 16] as number) + s0 + (W[t - 7] as number) + s1) | 0;
  }
  let a = state[0] as number;
  let b = state[1] as number;
  let c = state[2] as number;
  let d = state[3] as number;
  let e = state[4] as number;
  let f = state[5] as number;
  let g = state[6] as number;
  let h = state[7] as number;
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + (K[t] as number) + (W[t] as number)) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = ((state[0] as number) + a) | 0;
  state[1] = ((state[1] as number) + b) | 0;
  state[2] = ((state[2] as number) + c) | 0;
  state[3] = ((state[3] as number) + d) | 0;
  state[4] = ((state[4] as number) + e) | 0;
  state[5] = ((state[5] as number) + f) | 0;
  state[6] = ((state[6] as number) + g) | 0;
  state[7] = ((state[7] as number) + h) | 0;
}

/** SHA-256 of the concatenation of `parts` (no copy of them is made for the full blocks). */
export function sha256(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const state = STATE;
  state.set(INITIAL);
  const block = BLOCK;
  let filled = 0;
  let length = 0;
  for (const part of parts) {
    length += part.length;
    let i = 0;
    if (filled > 0) {
      const take = Math.min(64 - filled, part.length);
      block.set(part.subarray(0, take), filled);
      filled += take;
      i = take;
      if (filled < 64) continue;
      compress(state, block, 0);
      filled = 0;
    }
    for (; i + 64 <= part.length; i += 64) compress(state, part, i);
    if (i < part.length) {
      block.set(part.subarray(i), 0);
      filled = part.length - i;
    }
  }
  // Padding: 0x80, zeros, then the length in bits as a 64-bit big-endian number.
  block[filled++] = 0x80;
  if (filled > 56) {
    block.fill(0, filled);
    compress(state, block, 0);
    filled = 0;
  }
  block.fill(0, filled, 56);
  const bits = length * 8;
  const high = Math.floor(bits / 0x100000000);
  block[56] = high >>> 24;
  block[57] = high >>> 16;
  block[58] = high >>> 8;
  block[59] = high;
  block[60] = bits >>> 24;
  block[61] = bits >>> 16;
  block[62] = bits >>> 8;
  block[63] = bits;
  compress(state, block, 0);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const word = state[i] as number;
    out[i * 4] = word >>> 24;
    out[i * 4 + 1] = word >>> 16;
    out[i * 4 + 2] = word >>> 8;
    out[i * 4 + 3] = word;
  }
  return out;
}
