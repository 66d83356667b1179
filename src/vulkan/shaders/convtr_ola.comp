#version 450
#extension GL_GOOGLE_include_directive : require
// convtr_ola.comp - overlap-add of a ConvTranspose1d: y [g][T][k * cout] (one gemm) ->
// out [g][T * s][cout] (+ bias) and the next tail [g][k - s][cout] (compact; copied back to the
// slot's state afterwards), the previous tail from tail[slot] added in front.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint groups, T, s, k, cout, list, yoff, ooff, ntoff, toff, boff;
} p;
void main() {
    uint i = flat_id();
    uint tail = p.k - p.s, rows = p.T * p.s + tail;
    if (i >= p.groups * rows * p.cout) return;
    uint c = i % p.cout, o = (i / p.cout) % rows, g = i / (p.cout * rows);
    float v = 0.0;
    if (o < tail) v = ar[p.toff + iv[p.list + g] * tail * p.cout + o * p.cout + c];
    uint tmax = min(o / p.s, p.T - 1u);
    for (int t = int(tmax); t >= 0; t--) {
        uint off = o - uint(t) * p.s;
        if (off >= p.k) break;
        v += ar[p.yoff + (g * p.T + uint(t)) * p.k * p.cout + off * p.cout + c];
    }
    if (o < p.T * p.s) {
        if (p.boff != NONE) v += wt[p.boff + c];
        ar[p.ooff + (g * p.T * p.s + o) * p.cout + c] = v;
    } else {
        ar[p.ntoff + (g * tail + (o - p.T * p.s)) * p.cout + c] = v;
    }
}
