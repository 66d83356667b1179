#version 450
#extension GL_GOOGLE_include_directive : require
// rope_kv.comp - RoPE on q and k of qkv rows [n, 3d] (interleaved pairs, frequencies from the
// host: weights[freq + i]) at positions iv[len + slot] + (r % rps), and k, v appended to the
// slot's cache rows (position % cap; float32 or float16 pairs as p.kvh says, kv.glsl). One
// invocation per (row, pair) for q/k, plus v.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint rows, rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, freq, qoff, kvh;
} p;
#define KV_NO_DOT // no kv_dot: no query in shared memory
#include "kv.glsl"
const float P1 = 6.28125;                 // 2 pi = P1 + P2 + P3, P1 exact in 8 bits
const float P2 = 0.0019353071795864769;
const float P3 = 2.5303012e-12;
void main() {
    uint i = flat_id();
    uint half_d = p.d / 2u;
    if (i >= p.rows * half_d) return;
    uint r = i / half_d, j = i % half_d; // pair j of row r
    uint slot = iv[p.list + r / p.rps];
    uint pos = iv[p.len + slot] + r % p.rps;
    uint f = j % (p.dh / 2u);            // frequency index within the head
    float a = float(pos) * wt[p.freq + f];
    float k = floor(a / 6.2831853071795864769 + 0.5);
    float red = ((a - k * P1) - k * P2) - k * P3;
    float cs = cos(red), sn = sin(red);
    uint qb = p.qoff + r * 3u * p.d + 2u * j;
    bool hf = p.kvh != 0u;
    uint row = p.kvbase + slot * p.kvslot + p.kvlayer + (pos % p.cap) * kv_words(p.d, hf);
    float q0 = ar[qb], q1 = ar[qb + 1u];
    ar[qb] = q0 * cs - q1 * sn;
    ar[qb + 1u] = q0 * sn + q1 * cs;
    float k0 = ar[qb + p.d], k1 = ar[qb + p.d + 1u];
    float rk0 = k0 * cs - k1 * sn, rk1 = k0 * sn + k1 * cs;
    ar[qb + p.d] = rk0;
    ar[qb + p.d + 1u] = rk1;
    kv_put(row, j, vec2(rk0, rk1), vec2(ar[qb + 2u * p.d], ar[qb + 2u * p.d + 1u]), hf);
}
