// stepk.glsl - the body of stepk.comp (256 invocations a workgroup) and stepk512.comp (512),
// which define WGS before including it.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
// stepk - the whole generation step (k frames of n <= 2 rows: backbone, EOS head, flow
// head) as ONE dispatch of a persistent grid. At one stream every stage is a few microseconds
// of work and the multi-dispatch path spends most of a frame in launch + barrier latency (some
// 75 dispatches a frame); here the stages are phases of a program (built by the host in
// vk_stepk.c, stored in the arena, PH_WORDS words a phase laid out as stepk_abi.h says)
// separated by grid-wide barriers: every workgroup must be resident
// at once, so the host launches at most as many workgroups as the GPU holds (1 on devices it
// cannot size, e.g. lavapipe in the tests).
//
// Phase kinds:
//  MATVEC  y[r, m] (=|+=) gate * alpha * act(x~[r, :K] . W[m, :K] + b[m]) for r < n, m < M,
//          x~ staged in shared memory as the raw rows, LN(rows) [* w + b] [* (1 + scale) +
//          shift] (the flow head's modulation) or silu(rows + vector); outputs spread over
//          every 32-lane group of the grid.
//  ATTN    per (row, head), spread over workgroups: RoPE on q and k at the row's position, k and
//          v appended to the slot's cache, causal (windowed) attention over the cache.
//  and in any phase up to PH_NCOPY element-wise copies (noise in, latents and EOS out) and, in
//  the last, the positions advanced by k (PH_ADVANCE).
// Arithmetic follows linear.comp / layernorm.comp / rope_kv.comp / attention.comp; sums run in
// another order (parity 1e-3 as the rest of the GPU path).
#include "funcs.glsl"
#include "stepk_abi.h"
layout(std430, set = 0, binding = 0) readonly buffer Weights { float wt[]; };
// 16-byte weight loads: 4 float32 values, or 8 bf16 (pairs, low half first)
layout(std430, set = 0, binding = 0) readonly buffer WeightsH { uvec4 wh4[]; };
// written and read across workgroups within the dispatch: coherent (no stale L1 lines)
layout(std430, set = 0, binding = 1) coherent buffer Arena { float ar[]; };
layout(std430, set = 0, binding = 1) coherent buffer ArenaU { uint au[]; };
// The caches are not coherent: item (row, head) of every ATTN phase runs on workgroup
// item % G, so a workgroup only reads keys and values written before the dispatch or by itself
// (coherent loads are not pipelined: they made a one-stream frame markedly slower).
layout(std430, set = 0, binding = 2) buffer KCache { float kc[]; };
layout(std430, set = 0, binding = 3) buffer VCache { float vc[]; };
layout(std430, set = 0, binding = 4) coherent buffer Ints { uint iv[]; };
layout(std430, set = 0, binding = 5) coherent buffer Io { float io[]; };
// WGS: invocations of a workgroup (stepk.comp 256, stepk512.comp 512: more lane groups a
// grid, fewer output rows each; the register budget a thread halves)
#ifndef WGS
#define WGS 256u
#endif
#define NLG (WGS / 32u) // 32-lane groups a workgroup
#define XV ((6144u + WGS - 1u) / WGS) // staged values an invocation holds (n K <= 6144)
layout(local_size_x = WGS) in;
layout(push_constant) uniform P {
    uint prog, nph, sync, n, list, len;
} p;

const uint XS4 = 1536u; // staged input: n * K <= 6144 floats (24 KiB: lavapipe allows 32 in all)
shared vec4 xs4[XS4];
shared float red[WGS];
shared float sc[WGS];
shared float part[2u * WGS]; // attention: [ng][dh] partial sums, ng dh <= 2 WGS
shared vec4 qs4[64];
#include "kv.glsl" // the cache rows: float32 or float16 pairs (AT_KVH)
shared uint phb[2][PH_WORDS]; // the phase's words (stepk_abi.h), double-buffered: the next's are
                         // loaded while this one runs and stored before its grid barrier
uint pb_ = 0u;
shared uint slot_[2], len_[2];

uint t_;

// sum / max over the workgroup: subgroup reductions, then one value per subgroup in shared
// memory (two barriers whatever the subgroup size)
float block_sum(float v) {
    v = subgroupAdd(v);
    if (subgroupElect()) red[gl_SubgroupID] = v;
    barrier();
    float r = 0.0;
    for (uint i = 0u; i < gl_NumSubgroups; i++) r += red[i];
    barrier();
    return r;
}
float block_max(float v) {
    v = subgroupMax(v);
    if (subgroupElect()) red[gl_SubgroupID] = v;
    barrier();
    float r = -1e30;
    for (uint i = 0u; i < gl_NumSubgroups; i++) r = max(r, red[i]);
    barrier();
    return r;
}

// sum over the 32 lanes of a lane group (every invocation calls it). Without 32-lane
// subgroups (lavapipe: 8) through shared memory, each lane summing its group's 32 values: two
// barriers. A tree of five steps (seven barriers) broke lavapipe's two-stream stepk replays
// (pcm error 0.6-0.9 from one frame on) once a dispatch ran enough of them: from the 8th frame
// of a call with more code in matvec(), from the 9th with KMAX 12 (bench/RESULTS.md, sixth GPU
// round); the same replays pass with this.
float lg_sum(float v) {
    if (gl_SubgroupSize == 32u) return subgroupAdd(v);
    red[t_] = v;
    barrier();
    float r = 0.0;
    for (uint i = 0u; i < 32u; i++) r += red[(t_ & ~31u) + i];
    barrier();
    return r;
}

// Grid barrier: arrivals counted in au[sync]; the last to arrive publishes the epoch in
// au[sync + 1], which the others poll (not the arrival counter itself). As CUDA's grid
// sync does it: a workgroup barrier that orders the phase's buffer writes too (wg_sync), then
// one invocation's device-scope fence before it arrives and after it leaves. A fence on every
// invocation (what this did before) made a one-stream step 3-4% slower on the H200.
void wg_sync() {
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                   gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                   gl_SemanticsAcquireRelease);
}
uint epoch_ = 0u;
void grid_sync() {
    wg_sync();
    epoch_++;
    if (t_ == 0u) {
        memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
        uint prev = atomicAdd(au[p.sync], 1u);
        if (prev + 1u == epoch_ * gl_NumWorkGroups.x) {
            memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
            atomicExchange(au[p.sync + 1u], epoch_);
        } else {
            // polled by an atomic: a loop of plain loads has no side effect and a compiler may
            // drop it (Mesa's lavapipe does; volatile loads gave wrong results on the H200)
            while (atomicOr(au[p.sync + 1u], 0u) < epoch_) {
            }
        }
        memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
    }
    wg_sync();
}

float ld_(uint buf, uint a) { return buf == PHB_IO ? io[a] : ar[a]; }

void copies() {
    uint gsz = gl_NumWorkGroups.x * WGS, me = gl_WorkGroupID.x * WGS + t_;
    for (uint j = 0u; j < PH_NCOPY; j++) {
        uint b = PH_COPY + PH_COPY_WORDS * j, w = phb[pb_][b + CP_WIDTH];
        if (w == 0u) continue;
        for (uint i = me; i < p.n * w; i += gsz) {
            uint r = i / w, c = i % w;
            float v = ld_(phb[pb_][b + CP_SBUF],
                          phb[pb_][b + CP_SOFF] + r * phb[pb_][b + CP_SLD] + c);
            uint drow = phb[pb_][b + CP_DSLOT] != 0u ? slot_[r] : r;
            uint da = phb[pb_][b + CP_DOFF] + drow * phb[pb_][b + CP_DLD] + c;
            if (phb[pb_][b + CP_DBUF] == PHB_IO) io[da] = v;
            else ar[da] = v;
        }
    }
}

// A lane's share of one "chunk" of the phase's W: output m, vectors kc 256 + lane + 32 i
// (i < 8) of its row (float32: vec4s, K / 4 a row; bf16: uvec4s of 8 values, K / 8 a row),
// zeros past the row or M: eight 16-byte loads issued together (a lane group covers 256
// vectors of a row a chunk, so K = 1024 float32 or 2048 bf16 is one round trip).
void wchunk(uint m, uint kc, out uvec4 u[8]) {
    const bool bf = phb[pb_][MV_WH] != NONE;
    const uint KV = phb[pb_][MV_K] >> (bf ? 3u : 2u), k = kc * 256u + (t_ & 31u);
    const uint wb = (bf ? phb[pb_][MV_WH] : phb[pb_][MV_W]) >> 2;
    const bool ok = m < phb[pb_][MV_M];
    [[unroll]] for (uint i = 0u; i < 8u; i++)
        u[i] = (ok && k + 32u * i < KV) ? wh4[wb + m * KV + k + 32u * i] : uvec4(0u);
}

// eight bf16 weights (a uvec4 of pairs, low half first) . staged x[8 k8 .. 8 k8 + 7] of the row
// starting at vec4 index row4
float dot8(uvec4 u, uint k8, uint row4) {
    vec4 lo = vec4(uintBitsToFloat(u.x << 16), uintBitsToFloat(u.x & 0xffff0000u),
                   uintBitsToFloat(u.y << 16), uintBitsToFloat(u.y & 0xffff0000u));
    vec4 hi = vec4(uintBitsToFloat(u.z << 16), uintBitsToFloat(u.z & 0xffff0000u),
                   uintBitsToFloat(u.w << 16), uintBitsToFloat(u.w & 0xffff0000u));
    return dot(lo, xs4[row4 + 2u * k8]) + dot(hi, xs4[row4 + 2u * k8 + 1u]);
}
// float32 W's vectors . the staged row starting at vec4 row4 (a vector past the row: 0)
float dotf(uvec4 u, uint k, uint KV, uint row4) {
    return k < KV ? dot(uintBitsToFloat(u), xs4[row4 + k]) : 0.0;
}
float dotb(uvec4 u, uint k, uint KV, uint row4) { return k < KV ? dot8(u, k, row4) : 0.0; }

// LN affine / modulation / SiLU vectors of the staged values, loaded with x (up to PV values
// of a row an invocation; past that at their use)
#define PV ((2048u + WGS - 1u) / WGS)

// Stage the phase's n input rows in shared memory (row r at float r K): each invocation loads
// its <= XV values of a row once (one round trip to L2) with the vectors that transform them,
// LayerNorm statistics from those registers.
void stage() {
    const uint K = phb[pb_][MV_K], xbuf = phb[pb_][MV_XBUF];
    const uint xoff = phb[pb_][MV_XOFF], xld = phb[pb_][MV_XLD];
    const uint st = phb[pb_][MV_STAGE], lnw = phb[pb_][MV_LN_W];
    const uint lnb = phb[pb_][MV_LN_B], mod = phb[pb_][MV_MOD];
    const uint sv = phb[pb_][MV_SILU_VEC];
    const uint cnt = (K + WGS - 1u) / WGS;
    for (uint r = 0u; r < p.n; r++) {
        const uint xb = xoff + r * xld, mb = mod + r * phb[pb_][MV_MOD_LD];
        float xv[XV], pw[PV], pa[PV], ps[PV], pt[PV];
        [[unroll]] for (uint i = 0u; i < XV; i++) {
            uint c = t_ + i * WGS;
            xv[i] = (i < cnt && c < K) ? ld_(xbuf, xb + c) : 0.0;
        }
        [[unroll]] for (uint i = 0u; i < PV; i++) {
            const uint c = t_ + i * WGS;
            const bool v = i < cnt && c < K;
            pw[i] = (v && st == MVS_LN && lnw != NONE) ? wt[lnw + c] : 1.0;
            pa[i] = (v && st == MVS_LN && lnb != NONE) ? wt[lnb + c] : 0.0;
            ps[i] = (v && st == MVS_LN && mod != NONE) ? ar[mb + K + c] : 0.0;
            pt[i] = (v && st == MVS_LN && mod != NONE) ? ar[mb + c]
                    : (v && st == MVS_SILU_ADD)        ? ar[sv + c]
                                                       : 0.0;
        }
        float mean = 0.0, inv = 1.0;
        if (st == MVS_LN) {
            float s = 0.0;
            for (uint i = 0u; i < XV; i++) s += xv[i];
            mean = block_sum(s) / float(K);
            float v = 0.0;
            for (uint i = 0u; i < XV; i++) {
                uint c = t_ + i * WGS;
                float q = (i < cnt && c < K) ? xv[i] - mean : 0.0;
                v += q * q;
            }
            inv = 1.0 / sqrt(block_sum(v) / float(K) + uintBitsToFloat(phb[pb_][MV_LN_EPS]));
        }
        [[unroll]] for (uint i = 0u; i < XV; i++) {
            const uint c = t_ + i * WGS;
            if (i >= cnt || c >= K) break;
            float y = xv[i];
            if (st == MVS_LN) {
                y = (y - mean) * inv;
                if (lnw != NONE) y = y * (i < PV ? pw[i] : wt[lnw + c]);
                if (lnb != NONE) y = y + (i < PV ? pa[i] : wt[lnb + c]);
                if (mod != NONE)
                    y = y * (1.0 + (i < PV ? ps[i] : ar[mb + K + c])) +
                        (i < PV ? pt[i] : ar[mb + c]);
            } else if (st == MVS_SILU_ADD) {
                y = silu_(y + (i < PV ? pt[i] : ar[sv + c]));
            }
            uint j = r * K + c;
            xs4[j >> 2][j & 3u] = y;
        }
    }
}
// output m's bias, gate and old y (lane r < n: row r; 0 / 1 / 0 where absent), loaded at the
// start of m's round so that they arrive with its weights
void epre(uint m, out float eb, out float eg, out float ey) {
    const uint lane = t_ & 31u;
    eb = 0.0;
    eg = 1.0;
    ey = 0.0;
    if (m >= phb[pb_][MV_M] || lane >= p.n) return;
    const uint bo = phb[pb_][MV_B], go = phb[pb_][MV_GATE];
    if (bo != NONE) eb = wt[bo + m];
    if (go != NONE)
        eg = phb[pb_][MV_GATE_BUF] == 1u ? wt[go + m] : ar[go + lane * phb[pb_][MV_GATE_LD] + m];
    if (phb[pb_][MV_ACCUM] != 0u) ey = ar[phb[pb_][MV_YOFF] + lane * phb[pb_][MV_YLD] + m];
}

// A phase's latencies overlap: the first round's bias, gate and old y and its first weight
// chunk are loaded before the input is staged, the LN vectors with the input. (Loading the
// first chunk during the grid barrier before, the next chunk while one is summed, or two
// products a phase to save grid barriers were all slower: bench/RESULTS.md.)
void matvec() {
    const uint lane = t_ & 31u, nlg = gl_NumWorkGroups.x * NLG;
    const uint lg = gl_WorkGroupID.x * NLG + (t_ >> 5);
    const uint K = phb[pb_][MV_K], M = phb[pb_][MV_M], K4 = K >> 2;
    const bool bf = phb[pb_][MV_WH] != NONE;
    const uint KV = bf ? K >> 3 : K4, nkc = (KV + 255u) >> 8; // vectors a row, chunks a round
    const uint nr = (M + nlg - 1u) / nlg;                      // rounds: uniform
    float eb, eg, ey;
    epre(lg, eb, eg, ey);
    uvec4 u0[8];
    wchunk(lg, 0u, u0);
    stage();
    barrier();
    // Outputs over every 32-lane group of the grid; the lanes of a group split K (chunks as
    // wchunk says). The grid is one workgroup per SM, so bandwidth comes from loads in flight.
    const float alpha = uintBitsToFloat(phb[pb_][MV_ALPHA]);
    const uint act = phb[pb_][MV_ACT], yo = phb[pb_][MV_YOFF], yld = phb[pb_][MV_YLD];
    const bool accum = phb[pb_][MV_ACCUM] != 0u;
    for (uint rd = 0u; rd < nr; rd++) { // uniform over the workgroup
        const uint m = rd * nlg + lg;
        float a0 = 0.0, b0 = 0.0, a1 = 0.0, b1 = 0.0;
        for (uint kc = 0u; kc < nkc; kc++) {
            const uint k = kc * 256u + lane;
            uvec4 u[8];
            if (rd == 0u && kc == 0u) u = u0;
            else wchunk(m, kc, u);
            if (bf) {
                [[unroll]] for (uint i = 0u; i < 8u; i++) {
                    const uint kk = k + 32u * i;
                    if ((i & 1u) == 0u) a0 += dotb(u[i], kk, KV, 0u);
                    else b0 += dotb(u[i], kk, KV, 0u);
                    if (p.n > 1u) a1 += dotb(u[i], kk, KV, K4);
                }
            } else {
                a0 += dotf(u[0], k, KV, 0u) + dotf(u[2], k + 64u, KV, 0u) +
                      dotf(u[4], k + 128u, KV, 0u) + dotf(u[6], k + 192u, KV, 0u);
                b0 += dotf(u[1], k + 32u, KV, 0u) + dotf(u[3], k + 96u, KV, 0u) +
                      dotf(u[5], k + 160u, KV, 0u) + dotf(u[7], k + 224u, KV, 0u);
                if (p.n > 1u) {
                    a1 += dotf(u[0], k, KV, K4) + dotf(u[2], k + 64u, KV, K4) +
                          dotf(u[4], k + 128u, KV, K4) + dotf(u[6], k + 192u, KV, K4);
                    b1 += dotf(u[1], k + 32u, KV, K4) + dotf(u[3], k + 96u, KV, K4) +
                          dotf(u[5], k + 160u, KV, K4) + dotf(u[7], k + 224u, KV, K4);
                }
            }
        }
        float s0 = lg_sum(a0 + b0);
        float s1 = p.n > 1u ? lg_sum(a1 + b1) : 0.0;
        if (m < M && lane < p.n) {
            float v = act_(act, (lane == 0u ? s0 : s1) + eb) * alpha * eg;
            ar[yo + lane * yld + m] = accum ? ey + v : v;
        }
        if (rd + 1u < nr) epre(m + nlg, eb, eg, ey); // the next round's
    }
}

const float P1 = 6.28125; // 2 pi = P1 + P2 + P3, P1 exact in 8 bits (as rope_kv.comp)
const float P2 = 0.0019353071795864769;
const float P3 = 2.5303012e-12;

void attn() {
    uint d = phb[pb_][AT_D], dh = phb[pb_][AT_DH], heads = phb[pb_][AT_HEADS];
    uint qoff = phb[pb_][AT_QKV], ooff = phb[pb_][AT_OUT];
    uint cap = phb[pb_][AT_CAP], window = phb[pb_][AT_WINDOW];
    bool hf = phb[pb_][AT_KVH] != 0u;
    uint rs = kv_words(d, hf); // words a cache row
    bool v4 = (rs & 3u) == 0u && (kv_words(dh, hf) & 3u) == 0u &&
              (phb[pb_][AT_KVBASE] & 3u) == 0u && (phb[pb_][AT_KVSLOT] & 3u) == 0u &&
              (phb[pb_][AT_KVLAYER] & 3u) == 0u;
    float scale = uintBitsToFloat(phb[pb_][AT_SCALE]);
    for (uint item = gl_WorkGroupID.x; item < p.n * heads; item += gl_NumWorkGroups.x) {
        uint r = item / heads, h = item % heads;
        uint slot = slot_[r], pos = len_[r] + phb[pb_][AT_FRAME];
        uint base =
            phb[pb_][AT_KVBASE] + slot * phb[pb_][AT_KVSLOT] + phb[pb_][AT_KVLAYER] +
            h * kv_words(dh, hf);
        uint qb = qoff + r * 3u * d + h * dh;
        if (t_ < 64u) qs4[t_] = vec4(0.0);
        barrier();
        if (t_ < dh / 2u) { // RoPE pair t_ of this head, k and v into the cache
            float a = float(pos) * wt[phb[pb_][AT_FREQ] + t_];
            float kk = floor(a / 6.2831853071795864769 + 0.5);
            float rd = ((a - kk * P1) - kk * P2) - kk * P3;
            float cs = cos(rd), sn = sin(rd);
            float q0 = ar[qb + 2u * t_], q1 = ar[qb + 2u * t_ + 1u];
            qs4[(2u * t_) >> 2][(2u * t_) & 3u] = q0 * cs - q1 * sn;
            qs4[(2u * t_ + 1u) >> 2][(2u * t_ + 1u) & 3u] = q0 * sn + q1 * cs;
            float k0 = ar[qb + d + 2u * t_], k1 = ar[qb + d + 2u * t_ + 1u];
            kv_put(base + (pos % cap) * rs, t_, vec2(k0 * cs - k1 * sn, k0 * sn + k1 * cs),
                   vec2(ar[qb + 2u * d + 2u * t_], ar[qb + 2u * d + 2u * t_ + 1u]), hf);
        }
        wg_sync(); // the row written above, read by every invocation below
        uint first = (window > 0u && pos + 1u > window) ? pos + 1u - window : 0u;
        uint nk = pos - first + 1u;
        uint lw = hf ? dh >> 1 : dh; // a group's lanes (attention.comp)
        uint ng = WGS / lw, grp = t_ / lw, c = t_ % lw;
        bool cw = grp < ng;
        float o = 0.0, lpart = 0.0, mx = -1e30;
        vec2 oh = vec2(0.0);
        for (uint k0 = 0u; k0 < nk; k0 += WGS) {
            uint kk = k0 + t_;
            float s = -1e30;
            if (kk < nk) {
                s = kv_dot(base + ((first + kk) % cap) * rs, dh, v4, hf);
                s *= scale;
            }
            float tm = max(mx, block_max(s));
            float corr = exp(mx - tm);
            float e = kk < nk ? exp(s - tm) : 0.0;
            sc[t_] = e;
            lpart = lpart * corr + e;
            o *= corr;
            oh *= corr;
            mx = tm;
            barrier();
            uint cnt = min(WGS, nk - k0);
            if (cw && hf) {
                oh += kv_vsum_h(base, rs, first + k0, cap, grp, ng, c, cnt);
            } else if (cw) { // four value loads in flight
                o = kv_vsum_f(o, base, rs, first + k0, cap, grp, ng, c, cnt);
            }
            barrier();
        }
        if (hf) {
            part[2u * t_] = oh.x;
            part[2u * t_ + 1u] = oh.y;
        } else {
            part[t_] = o;
        }
        float l = block_sum(lpart); // ends with a barrier: part[] is complete
        if (t_ < dh) {
            float s = 0.0;
            for (uint g = 0u; g < ng; g++) s += part[g * dh + t_];
            ar[ooff + r * d + h * dh + t_] = s / l;
        }
        barrier();
    }
}

void main() {
    t_ = gl_LocalInvocationID.x;
    if (t_ < p.n) {
        slot_[t_] = iv[p.list + t_];
        len_[t_] = iv[p.len + slot_[t_]];
    }
    if (t_ < PH_WORDS) phb[0][t_] = au[p.prog + t_];
    barrier();
    for (uint q = 0u; q < p.nph; q++) {
        pb_ = q & 1u;
        uint nw = (t_ < PH_WORDS && q + 1u < p.nph) ? au[p.prog + (q + 1u) * PH_WORDS + t_] : 0u;
        if (phb[pb_][PH_KIND] == PHK_MATVEC) {
            matvec();
        } else if (phb[pb_][PH_KIND] == PHK_ATTN) {
            attn();
        }
        copies();
        if (phb[pb_][PH_ADVANCE] != 0u && gl_WorkGroupID.x == 0u && t_ < p.n)
            iv[p.len + slot_[t_]] += phb[pb_][PH_ADVANCE];
        if (q + 1u < p.nph) {
            if (t_ < PH_WORDS) phb[pb_ ^ 1u][t_] = nw;
            grid_sync();
        }
    }
}
