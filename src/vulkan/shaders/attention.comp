#version 450
#extension GL_GOOGLE_include_directive : require
// attention.comp - one workgroup (256 invocations) per (row, head): causal attention of the
// row's rotated q over its slot's cache, keys first..pos (first = pos - window + 1 when
// windowed), ring rows (position % cap). Keys go in tiles of 256: every invocation scores one
// key (vec4 loads when p.v4), the tile maximum is a shared-memory tree, then the invocations
// split into 256 / dh groups that each sum a share of the tile's keys for every channel (online
// softmax across tiles); the groups' partial sums are added at the end. Cache rows of float32
// or float16 pairs (p.kvh, kv.glsl).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint v4, kvh;
} p;
shared float sc[256];
shared float red[256];
shared vec4 qs4[64];
shared float part[512]; // [ng][dh] partial sums: ng dh <= 512 (float16 pairs: ng = 512 / dh)
#include "kv.glsl"
void main() {
    uint r = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    uint slot = iv[p.list + r / p.rps];
    uint pos = iv[p.len + slot] + r % p.rps;
    uint first = (p.window > 0u && pos + 1u > p.window) ? pos + 1u - p.window : 0u;
    uint nk = pos - first + 1u;
    uint qb = p.qoff + r * 3u * p.d + h * p.dh;
    if (t < 64u) {
        vec4 q = vec4(0.0);
        for (uint i = 0u; i < 4u; i++)
            if (t * 4u + i < p.dh) q[i] = ar[qb + t * 4u + i];
        qs4[t] = q;
    }
    bool hf = p.kvh != 0u;
    uint rs = kv_words(p.d, hf); // words a cache row
    uint base = p.kvbase + slot * p.kvslot + p.kvlayer + h * kv_words(p.dh, hf);
    // channel work: ng groups of lw invocations; float32: lw = dh, channel c each (dh <= 256);
    // float16 pairs: lw = dh / 2, channels 2c and 2c + 1 each (a word: half the loads)
    uint lw = hf ? p.dh >> 1 : p.dh;
    uint ng = 256u / lw, grp = t / lw, c = t % lw;
    bool cw = grp < ng;
    float o = 0.0, lpart = 0.0, mx = -1e30;
    vec2 oh = vec2(0.0); // float16 pairs: channels 2c, 2c + 1
    barrier();
    for (uint k0 = 0u; k0 < nk; k0 += 256u) {
        uint kk = k0 + t;
        float s = -1e30;
        if (kk < nk) {
            s = kv_dot(base + ((first + kk) % p.cap) * rs, p.dh, p.v4 != 0u, hf);
            s *= p.scale;
        }
        red[t] = s;
        barrier();
        for (uint w = 128u; w > 0u; w >>= 1) {
            if (t < w) red[t] = max(red[t], red[t + w]);
            barrier();
        }
        float tm = max(mx, red[0]);
        float corr = exp(mx - tm);
        float e = kk < nk ? exp(s - tm) : 0.0;
        sc[t] = e;
        lpart = lpart * corr + e;
        o *= corr;
        oh *= corr;
        mx = tm;
        barrier();
        uint cnt = min(256u, nk - k0);
        if (cw && hf) {
            oh += kv_vsum_h(base, rs, first + k0, p.cap, grp, ng, c, cnt);
        } else if (cw) { // four value loads in flight
            o = kv_vsum_f(o, base, rs, first + k0, p.cap, grp, ng, c, cnt);
        }
        barrier();
    }
    red[t] = lpart;
    if (hf) {
        part[2u * t] = oh.x; // = part[grp dh + 2c]
        part[2u * t + 1u] = oh.y;
    } else {
        part[t] = o;
    }
    barrier();
    for (uint w = 128u; w > 0u; w >>= 1) {
        if (t < w) red[t] += red[t + w];
        barrier();
    }
    if (t < p.dh) {
        float s = 0.0;
        for (uint g = 0u; g < ng; g++) s += part[g * p.dh + t];
        ar[p.ooff + r * p.d + h * p.dh + t] = s / red[0];
    }
}
