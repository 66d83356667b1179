/*
 * weights.h - the model's tensors bound to structures, the architecture derived from shapes
 * (MODEL.md section 2), and the layouts the kernels want.
 *
 * Binding is one code path (bind_model in weights.c) that asks a "tensor source" for each
 * named tensor with its expected shape. Sources: a safetensors file (strict: every missing or
 * mis-shaped tensor is reported by name), the pocket-fill-v1 generator (synthetic weights of any
 * architecture, no file), and a listing mode that only records names and shapes (used to write
 * a synthetic checkpoint). So the table of names and shapes exists exactly once.
 *
 * Layouts (all float32 unless the precision mode says otherwise; activations row-major,
 * [time, channels] in the codec):
 *  - Linear [out, in] as in the checkpoint (ptts_lin).
 *  - Conv1d [cout, cin, k] is repacked to [cout, k*cin] (k major, cin minor) so that a causal
 *    convolution over time-major input [T, cin] is a gemm whose X rows are contiguous windows
 *    of the input buffer (row t starts at t*stride*cin, length k*cin): no im2col copy.
 *  - ConvTranspose1d [cin, cout, k] is repacked to [k*cout, cin]: one gemm gives, for each input
 *    step, the k output rows it contributes to (overlap-added by the caller).
 *  - The depthwise upsample ConvTranspose1d [C, 1, k] is kept as [C, k].
 */
#ifndef PTTS_WEIGHTS_H
#define PTTS_WEIGHTS_H

#include <stdint.h>

#include "common.h"
#include "config.h" /* PTTS_FLOW_*, ptts_config */
#include "cpu/kernels.h"

/* Architecture, derived from tensor shapes (heads from the config, else width / 64). */
typedef struct ptts_arch {
    /* backbone */
    int d, heads, layers, ffn;
    int ld;        /* latent width */
    int inner_dim; /* speaker projection input (codec latent width fed to the backbone) */
    int nb;        /* vocabulary size (embedding rows - 1) */
    int has_bos_before_voice;
    /* flow head */
    int fd, flow_depth, nfreq;
    int n_time_embed; /* K: 2 (lsd), 1 (flow_matching), 0 (drifting), MODEL.md section 5 */
    int flow_type;    /* PTTS_FLOW_* (from K; a config must agree: ptts_arch_check_flow_type) */
    /* codec */
    int C;  /* codec width (transformer d_model) */
    int nf; /* SEANet filters */
    int codec_heads, codec_layers, codec_ffn;
    int codec_window;  /* 250 */
    int ratios[3];     /* decoder upsampling ratios (6, 5, 4); the encoder uses them reversed */
    int frame_samples; /* prod(ratios) * 16 = 1920 */
    int has_encoder;   /* mimi.encoder*, mimi.downsample*, mimi.encoder_transformer* present */
} ptts_arch;

/* One transformer layer (backbone or codec). */
typedef struct ptts_tlayer {
    ptts_lin in_proj;                                   /* [3d, d]: q | k | v */
    ptts_lin out_proj;                                  /* [d, d] */
    ptts_lin linear1;                                   /* [ffn, d] */
    ptts_lin linear2;                                   /* [d, ffn] */
    const float *norm1_w, *norm1_b, *norm2_w, *norm2_b; /* [d] */
    const float *ls1, *ls2;                             /* LayerScale [d]; NULL in the backbone */
} ptts_tlayer;

typedef struct ptts_transformer {
    int d, heads, layers, ffn;
    int window; /* attend to keys with 0 <= pos_q - pos_k < window; 0: unbounded */
    ptts_tlayer *layer;
} ptts_transformer;

typedef struct ptts_time_embed {
    const float *freqs; /* [nfreq] */
    ptts_lin mlp0;      /* [fd, 2*nfreq] */
    ptts_lin mlp2;      /* [fd, fd] */
    const float *alpha; /* [fd] RMSNorm */
} ptts_time_embed;

typedef struct ptts_res_block {
    const float *ln_w, *ln_b; /* [fd] in_ln */
    ptts_lin mlp0, mlp2;      /* [fd, fd] */
    ptts_lin ada;             /* adaLN_modulation.1 [3 fd, fd]: shift | scale | gate */
} ptts_res_block;

typedef struct ptts_flow_weights {
    ptts_lin input_proj;     /* [fd, ld] */
    ptts_lin cond_embed;     /* [fd, d] */
    ptts_time_embed time[2]; /* the first arch.n_time_embed are bound */
    ptts_res_block *block;   /* [flow_depth] */
    ptts_lin final_ada;      /* [2 fd, fd]: shift | scale */
    ptts_lin final_linear;   /* [ld, fd] */
} ptts_flow_weights;

/* Causal Conv1d, time-major (see layouts above). */
typedef struct ptts_conv {
    int cin, cout, k, stride;
    ptts_lin w; /* [cout, k*cin] + bias (may be NULL) */
} ptts_conv;

/* ConvTranspose1d, time-major. */
typedef struct ptts_convtr {
    int cin, cout, k, stride;
    ptts_lin w;        /* [k*cout, cin], no bias inside (bias added after overlap-add) */
    const float *bias; /* [cout] or NULL */
} ptts_convtr;

/* SEANet residual block: x + conv1x1(ELU(conv_k3(ELU(x)))). */
typedef struct ptts_resnet {
    ptts_conv c1; /* m -> m/2, k 3 */
    ptts_conv c2; /* m/2 -> m, k 1 */
} ptts_resnet;

typedef struct ptts_codec_weights {
    const float *emb_std, *emb_mean; /* [ld] (flow_lm.emb_std / emb_mean) */
    ptts_lin quant_out;              /* quantizer.output_proj [C, ld] */
    const float *upsample_w;         /* [C, 32] depthwise ConvTranspose1d k 32 s 16 */
    int upsample_k, upsample_stride;
    ptts_transformer dec_tr;
    ptts_conv dec_in;       /* model.0: C -> 8 nf, k 7 */
    ptts_convtr dec_up[3];  /* model.2, 5, 8 */
    ptts_resnet dec_res[3]; /* model.3, 6, 9 */
    ptts_conv dec_out;      /* model.11: nf -> 1, k 3 */
    /* encoder (has_encoder) */
    ptts_conv enc_in;       /* model.0: 1 -> nf, k 7 */
    ptts_resnet enc_res[3]; /* model.1, 4, 7 */
    ptts_conv enc_down[3];  /* model.3, 6, 9: m -> 2m, k 2r, s r */
    ptts_conv enc_out;      /* model.11: 8 nf -> C, k 3 */
    ptts_transformer enc_tr;
    ptts_conv downsample; /* C -> inner_dim, k 32, s 16, no bias, replicate pad */
} ptts_codec_weights;

typedef struct ptts_weights {
    ptts_arch arch;
    int mode; /* ptts_wmode the arrays were built for (below) */
    /* backbone */
    const float *bos_emb;          /* [ld] */
    const float *bos_before_voice; /* [d] or NULL */
    ptts_lin speaker_proj;         /* [d, inner_dim] */
    const float *embed;            /* [nb + 1, d] */
    ptts_lin input_linear;         /* [d, ld] */
    ptts_transformer backbone;
    const float *out_norm_w, *out_norm_b; /* [d] */
    ptts_lin out_eos;                     /* [1, d] */
    ptts_flow_weights flow;
    ptts_codec_weights codec;
    /* storage: every array above lives in one of these blocks */
    void **blocks;
    int n_blocks, cap_blocks;
    size_t bytes; /* total weight bytes held */
    /* a converted file's read-only mapping that the arrays point into (packed_file.c), or NULL */
    void *map;
    size_t map_size;
} ptts_weights;

/* How the backbone's matrices (attention and feed-forward) are stored. The codec and the flow
 * head stay float32 in every mode except bf16, where the codec's big convolutions become bf16.
 * In bf16 and int8 the codec's transformer and SEANet matrices also run from bf16 panels with X
 * rounded to bf16 (ptts_lin.wp16, gemm_bf16_panel), the same arithmetic on every CPU. Wherever a
 * mode asks for float32, a matrix whose values are all bf16 (a BF16 file's, as the released
 * checkpoints are) is stored as bf16 instead: the same values, computed in float32 (weights.c). */
typedef enum { PTTS_WMODE_F32 = 0, PTTS_WMODE_BF16 = 1, PTTS_WMODE_INT8 = 2 } ptts_wmode;

typedef struct ptts_weights_options {
    ptts_wmode mode;
    int heads;       /* backbone heads; 0: from d (d / 64) */
    int codec_heads; /* codec heads; 0: from C (C / 64) */
    /* ptts_weights_fill: every value rounded to bf16 (nearest even), as a BF16 checkpoint (the
     * released files) holds them; 0: the float32 values */
    int fill_bf16;
} ptts_weights_options;

/* Load and bind a checkpoint (F32/BF16/F16 tensors). Errors name the file and tensor. */
int ptts_weights_load(ptts_weights **out, const char *path, const ptts_weights_options *o,
                      ptts_error *e);
/* Synthetic pocket-fill-v1 weights of the architecture `a` (fields used: d, heads, layers, ld,
 * inner_dim, nb, has_bos_before_voice, fd, flow_depth, flow_type, C, nf, codec_heads,
 * codec_layers, codec_ffn, has_encoder; others derived, n_time_embed from flow_type). */
int ptts_weights_fill(ptts_weights **out, const ptts_arch *a, const ptts_weights_options *o,
                      ptts_error *e);
void ptts_weights_free(ptts_weights *w);
/* The structures of architecture `a` as binding builds them (sizes, kernel sizes, strides, the
 * layer arrays) with every array NULL and every matrix float32: what a converted file's arrays
 * are bound into (packed_file.c). `a` is taken as it is (its derived fields included). */
int ptts_weights_skeleton(ptts_weights **out, const ptts_arch *a, ptts_error *e);

/* Sampler types and their time-embedder counts K (MODEL.md 2 and 5): lsd 2, flow_matching 1,
 * drifting 0; both return -1 for anything else. Loading derives
 * K from the tensors time_embed.{k}.* and the type from K; a synthetic architecture
 * (ptts_weights_fill, ptts_arch_tensors) states flow_type and gets K from it. */
int ptts_flow_k(int flow_type);
int ptts_flow_type_of_k(int k);
/* "lsd", "flow_matching", "drifting" -> PTTS_FLOW_*; -1 for any other name (an error). */
int ptts_flow_type_from_name(const char *name);
const char *ptts_flow_type_name(int flow_type);
/* Where a config states flow.type: the weights' K must match it (the reference loads strictly);
 * PTTS_E_MODEL naming `source` (the config's path), both types and both counts otherwise. */
int ptts_arch_check_flow_type(const ptts_arch *a, int flow_type, const char *source, ptts_error *e);

/* The two architectures of the fixtures: "tiny" and "full" (= english_2026-04). */
int ptts_arch_preset(ptts_arch *a, const char *name);
/* The architecture a parsed config describes (its transformer, flow, lookup-table and mimi
 * sizes, sampler type and BOS rule), for synthetic weights of that config. PTTS_E_MODEL naming
 * the key when a size is missing or out of range. */
int ptts_arch_from_config(ptts_arch *a, const struct ptts_config *c, ptts_error *e);
/* arch.c: the architecture of checkpoint f from its tensor shapes (o: the heads, which shapes
 * do not give), derived numbers filled; PTTS_E_MODEL naming what is missing or inconsistent. */
struct st_file;
int ptts_arch_derive(const struct st_file *f, const ptts_weights_options *o, ptts_arch *a,
                     ptts_error *e);
/* The sizes a left at 0 get their defaults (ffn, heads, windows, ratios), K follows the flow
 * type and the frame size the ratios. */
void ptts_arch_fill_derived(ptts_arch *a);
/* Call fn for each tensor of architecture `a`, in checkpoint order (name, ndim, shape). */
typedef int (*ptts_tensor_fn)(void *user, const char *name, int ndim, const int64_t *shape);
int ptts_arch_tensors(const ptts_arch *a, ptts_tensor_fn fn, void *user, ptts_error *e);

#endif
