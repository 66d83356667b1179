#version 450
#extension GL_GOOGLE_include_directive : require
// attention.comp - one workgroup (256 invocations) per (row, head): causal attention of the
// row's rotated q over its slot's cache, keys first..pos (first = pos - window + 1 when
// windowed), ring rows (position % cap). Keys go in tiles of 256: every invocation scores one
// key (vec4 loads when p.v4), the tile maximum is a shared-memory tree, then the invocations
// split into 256 / dh groups that each sum a share of the tile's keys for every channel (online
// softmax across tiles); the groups' partial sums are added at the end.
#include "common.glsl"
layout(std430, set = 0, binding = 2) readonly buffer KCache4 { vec4 kc4[]; };
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint rps, d, dh, list, len, kvbase, kvslot, kvlayer, cap, window, qoff, ooff;
    float scale;
    uint v4;
} p;
shared float sc[256];
shared float red[256];
shared vec4 qs4[64];
shared float part[256];
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
    uint base = p.kvbase + slot * p.kvslot + p.kvlayer + h * p.dh;
    // channel work: dh <= 128: ng groups of dh invocations, one channel each; else one group,
    // channels t and t + 256 never needed (dh <= 256): channel t
    uint ng = 256u / p.dh, grp = t / p.dh, c = t % p.dh;
    bool cw = grp < ng;
    float o = 0.0, lpart = 0.0, mx = -1e30;
    uint dh4 = (p.dh + 3u) / 4u;
    barrier();
    for (uint k0 = 0u; k0 < nk; k0 += 256u) {
        uint kk = k0 + t;
        float s = -1e30;
        if (kk < nk) {
            uint row = base + ((first + kk) % p.cap) * p.d;
            s = 0.0;
            if (p.v4 != 0u) { // four loads in flight
                uint row4 = row / 4u, i = 0u;
                float s1 = 0.0, s2 = 0.0, s3 = 0.0;
                for (; i + 3u < dh4; i += 4u) {
                    vec4 k0 = kc4[row4 + i], k1 = kc4[row4 + i + 1u], k2 = kc4[row4 + i + 2u],
                         k3 = kc4[row4 + i + 3u];
                    s += dot(qs4[i], k0);
                    s1 += dot(qs4[i + 1u], k1);
                    s2 += dot(qs4[i + 2u], k2);
                    s3 += dot(qs4[i + 3u], k3);
                }
                for (; i < dh4; i++) s += dot(qs4[i], kc4[row4 + i]);
                s += (s1 + s2) + s3;
            } else {
                for (uint i = 0u; i < p.dh; i++) s += qs4[i / 4u][i % 4u] * kc[row + i];
            }
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
        mx = tm;
        barrier();
        uint cnt = min(256u, nk - k0);
        if (cw) { // four keys (four loads in flight) per step
            uint i = grp;
            float o1 = 0.0, o2 = 0.0, o3 = 0.0;
            for (; i + 3u * ng < cnt; i += 4u * ng) {
                uint q0 = first + k0 + i;
                float v0 = vc[base + (q0 % p.cap) * p.d + c];
                float v1 = vc[base + ((q0 + ng) % p.cap) * p.d + c];
                float v2 = vc[base + ((q0 + 2u * ng) % p.cap) * p.d + c];
                float v3 = vc[base + ((q0 + 3u * ng) % p.cap) * p.d + c];
                o += sc[i] * v0;
                o1 += sc[i + ng] * v1;
                o2 += sc[i + 2u * ng] * v2;
                o3 += sc[i + 3u * ng] * v3;
            }
            for (; i < cnt; i += ng) o += sc[i] * vc[base + ((first + k0 + i) % p.cap) * p.d + c];
            o += (o1 + o2) + o3;
        }
        barrier();
    }
    red[t] = lpart;
    part[t] = cw ? o : 0.0;
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
