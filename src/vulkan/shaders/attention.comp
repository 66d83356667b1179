#version 450
#extension GL_GOOGLE_include_directive : require
// attention.comp - one workgroup (64 invocations) per (row, head): causal attention of the
// row's rotated q over its slot's cache, keys first..pos (first = pos - window + 1 when
// windowed), ring rows (position % cap); online softmax over tiles of 64 keys.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(push_constant) uniform P {
    uint rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
} p;
shared float sc[64];
shared float qs[256];
void main() {
    uint r = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    uint slot = iv[p.list + r / p.rps];
    uint pos = iv[p.len + slot] + r % p.rps;
    uint first = (p.window > 0u && pos + 1u > p.window) ? pos + 1u - p.window : 0u;
    uint nk = pos - first + 1u;
    uint qb = p.qoff + r * 3u * p.d + h * p.dh;
    for (uint c = t; c < p.dh; c += 64u) qs[c] = ar[qb + c];
    uint base = p.kvbase + slot * p.kvslot + p.kvlayer + h * p.dh;
    float o[4] = float[4](0.0, 0.0, 0.0, 0.0);
    float mx = -1e30, l = 0.0;
    barrier();
    for (uint k0 = 0u; k0 < nk; k0 += 64u) {
        uint kk = k0 + t;
        float s = -1e30;
        if (kk < nk) {
            uint row = base + ((first + kk) % p.cap) * p.d;
            s = 0.0;
            for (uint c = 0u; c < p.dh; c++) s += qs[c] * kc[row + c];
            s *= p.scale;
        }
        sc[t] = s;
        barrier();
        uint cnt = min(64u, nk - k0);
        float tm = mx;
        for (uint i = 0u; i < cnt; i++) tm = max(tm, sc[i]);
        float corr = exp(mx - tm);
        l *= corr;
        for (uint q = 0u; q < 4u; q++) o[q] *= corr;
        for (uint i = 0u; i < cnt; i++) {
            float e = exp(sc[i] - tm);
            l += e;
            uint row = base + ((first + k0 + i) % p.cap) * p.d;
            for (uint q = 0u; q < 4u; q++) {
                uint c = t + 64u * q;
                if (c < p.dh) o[q] += e * vc[row + c];
            }
        }
        mx = tm;
        barrier();
    }
    uint ob = p.ooff + r * p.d + h * p.dh;
    for (uint q = 0u; q < 4u; q++) {
        uint c = t + 64u * q;
        if (c < p.dh) ar[ob + c] = o[q] / l;
    }
}
