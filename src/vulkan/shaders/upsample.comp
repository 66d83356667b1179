#version 450
#extension GL_GOOGLE_include_directive : require
// upsample.comp - the codec's depthwise ConvTranspose1d (k uk, stride us) over `frames` input
// steps per group: q [g][f][ch] -> x [g][f * us + j][ch] = q[g][f][ch] * w[ch, j] + prev[j][ch]
// where prev is the previous step's tail q[g][f - 1][ch] * w[ch, us + j] (j < uk - us <= us),
// from tail[slot] for f = 0. The invocation of (f = 0, j) also writes the new tail from the
// last step, so the state is read and written by one invocation.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint groups, frames, C, us, uk, list, qoff, xoff, toff, woff;
} p;
void main() {
    uint i = flat_id();
    if (i >= p.groups * p.frames * p.us * p.C) return;
    uint ch = i % p.C, j = (i / p.C) % p.us, gf = i / (p.C * p.us);
    uint f = gf % p.frames, g = gf / p.frames;
    uint tail = p.uk - p.us;
    float q = ar[p.qoff + gf * p.C + ch];
    float v = q * wt[p.woff + ch * p.uk + j];
    if (j < tail) {
        if (f == 0u) {
            uint ta = p.toff + iv[p.list + g] * tail * p.C + j * p.C + ch;
            v += ar[ta];
            float ql = ar[p.qoff + (g * p.frames + p.frames - 1u) * p.C + ch];
            ar[ta] = ql * wt[p.woff + ch * p.uk + p.us + j];
        } else {
            v += ar[p.qoff + (gf - 1u) * p.C + ch] * wt[p.woff + ch * p.uk + p.us + j];
        }
    }
    ar[p.xoff + (gf * p.us + j) * p.C + ch] = v;
}
