/*
 * stepk_abi.h - the layout of a stepk phase (PH_WORDS 32-bit words), shared by the program
 * builder (vk_stepk.c) and the shader (stepk.glsl): both include this file, so a word's index
 * is written once. C and GLSL alike: only #define of unsigned literals. Offsets are floats
 * into the buffer a *_BUF word names (PHB_*) or, for weights, into wbuf.
 */
#ifndef PTTS_STEPK_ABI_H
#define PTTS_STEPK_ABI_H

#define PH_WORDS 64u
#define PH_KIND 0u /* PHK_*: what the phase computes */
#define PHK_MATVEC 0u
#define PHK_ATTN 1u
#define PHK_NONE 2u /* copies only */

/* PHK_MATVEC: y[r][m] (=|+=) gate * alpha * act(stage(x[r]) . W[m] + b[m]), r < n, m < M */
#define MV_K 1u    /* inputs */
#define MV_M 2u    /* outputs */
#define MV_XBUF 3u /* x's buffer: PHB_ARENA or PHB_IO */
#define MV_XOFF 4u /* x rows: XOFF + r XLD */
#define MV_XLD 5u
#define MV_STAGE 6u     /* MVS_*: what is staged from the x rows */
#define MVS_RAW 0u      /* the rows */
#define MVS_LN 1u       /* LN(rows; EPS) [* LN_W + LN_B] [* (1 + scale) + shift from MOD] */
#define MVS_SILU_ADD 2u /* silu(rows + the vector at SILU_VEC) */
#define MV_LN_W 7u      /* weights offset, NONE: none */
#define MV_LN_B 8u
#define MV_LN_EPS 9u /* float bits */
#define MV_MOD 10u   /* arena rows of shift | scale (MOD + r MOD_LD), NONE: none */
#define MV_MOD_LD 11u
#define MV_SILU_VEC 12u /* arena offset of MVS_SILU_ADD's vector */
#define MV_W 13u        /* W [M][K] float32 (weights offset) */
#define MV_B 14u        /* bias [M], NONE: none */
#define MV_ACT 15u      /* activation code (funcs.glsl) */
#define MV_ALPHA 16u    /* float bits */
#define MV_GATE 17u     /* NONE: none */
#define MV_GATE_BUF 18u /* 1: a weights vector [M]; 0: arena rows GATE + r GATE_LD */
#define MV_GATE_LD 19u
#define MV_YOFF 20u /* y rows in the arena: YOFF + r YLD */
#define MV_YLD 21u
#define MV_ACCUM 22u /* 1: y += */
#define MV_WH 23u    /* W as packed bf16 pairs (weights offset), NONE: use MV_W */

/* PHK_ATTN: per (row, head) RoPE on q and k at the row's position + FRAME, k and v appended to
 * the slot's caches, causal (windowed) attention over them */
#define AT_D 1u
#define AT_DH 2u
#define AT_HEADS 3u
#define AT_QKV 4u    /* arena rows [n][3 D]: q | k | v */
#define AT_OUT 5u    /* arena rows [n][D] */
#define AT_KVBASE 6u /* cache words: KVBASE + slot KVSLOT + KVLAYER + pos (D or D / 2, KVH) */
#define AT_KVSLOT 7u
#define AT_KVLAYER 8u
#define AT_CAP 9u
#define AT_WINDOW 10u
#define AT_FREQ 11u  /* RoPE frequencies [DH / 2] (weights offset) */
#define AT_FRAME 12u /* the frame of the call (positions advance at the end) */
#define AT_SCALE 13u /* float bits */
#define AT_KVH 14u   /* 1: cache rows of float16 pairs (kv.glsl), 0: float32 */

/* Any kind: positions advance by this many at the end of the phase (0: none) */
#define PH_ADVANCE 31u
/* Any kind: up to PH_NCOPY element copies after the phase's work, PH_COPY_WORDS words each
 * from PH_COPY: n rows of WIDTH (0: no copy) from SBUF (SOFF + r SLD) to DBUF (DOFF + row DLD,
 * row the slot's when DSLOT != 0, else r) */
#define PH_COPY 32u
#define PH_COPY_WORDS 8u
#define PH_NCOPY 4u
#define CP_SBUF 0u
#define CP_SOFF 1u
#define CP_SLD 2u
#define CP_DBUF 3u
#define CP_DOFF 4u
#define CP_DLD 5u
#define CP_DSLOT 6u
#define CP_WIDTH 7u
#define PHB_ARENA 0u
#define PHB_IO 2u

#endif
