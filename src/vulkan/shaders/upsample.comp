#version 450
#extension GL_GOOGLE_include_directive : require
// upsample.comp - the codec's depthwise ConvTranspose1d (k uk, stride us) for one input step
// per group: x[g][j][ch] = q[g][ch] * w[ch, j] + tail[slot][j][ch] (j < us), then the new tail
// tail[slot][j][ch] = q[g][ch] * w[ch, us + j] (j < uk - us <= us: same invocation).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform P {
    uint groups, C, us, uk, list, qoff, xoff, toff, woff;
} p;
void main() {
    uint i = flat_id();
    if (i >= p.groups * p.us * p.C) return;
    uint ch = i % p.C, j = (i / p.C) % p.us, g = i / (p.C * p.us);
    uint slot = iv[p.list + g];
    uint tail = p.uk - p.us;
    float q = ar[p.qoff + g * p.C + ch];
    uint ta = p.toff + slot * tail * p.C + j * p.C + ch;
    float v = q * wt[p.woff + ch * p.uk + j];
    if (j < tail) {
        v += ar[ta];
        ar[ta] = q * wt[p.woff + ch * p.uk + p.us + j];
    }
    ar[p.xoff + (g * p.us + j) * p.C + ch] = v;
}
