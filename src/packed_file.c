/*
 * packed_file.c - the converted weights file (format in packed_file.h).
 *
 * One walk over ptts_weights visits every array field in a fixed order with the size the
 * structure's integers give it. Writing collects (pointer, bytes) and checks that the arrays
 * add up to every byte the load holds (w->bytes), so a field the walk misses cannot go unseen.
 * Loading first binds a skeleton from the stored architecture (ptts_weights_skeleton: the
 * integers, no arrays), then walks it, taking each array from the table once its offset,
 * alignment and size are checked; a matrix's storage type follows from which arrays it has
 * (exactly one of f32, bf16, int8 + scales, as weights.c builds them).
 */
#define _GNU_SOURCE
#include "packed_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"

enum { HDR_BYTES = 96, ENTRY_BYTES = 16, ALIGN = 64, BYTE_ORDER_TAG = 0x01020304 };
#define N_ARCH ((uint32_t)(sizeof(ptts_arch) / sizeof(int)))

typedef struct walker {
    int load; /* 0: collect the arrays of a loaded model; 1: bind them from a file */
    /* collect */
    const void **ptr;
    uint64_t *len;
    int n, cap;
    /* load */
    const uint8_t *base;
    uint64_t size, payload;
    const uint8_t *table;
    uint32_t n_entries, next;
    /* both */
    uint64_t total;
    int bad;
    char why[200];
} walker;

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const uint8_t *p) { return get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }
static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

static void fail_walk(walker *k, const char *what, const char *problem) {
    if (k->bad) return;
    k->bad = 1;
    snprintf(k->why, sizeof k->why, "array %u (%s): %s", k->load ? k->next : (unsigned)k->n, what,
             problem);
}

/* One array field: *p and its size in bytes (what the structure's integers imply). */
static void field(walker *k, const void **p, uint64_t bytes, int required, const char *what) {
    if (k->bad) return;
    if (!k->load) {
        if (k->n == k->cap) {
            int cap = k->cap ? 2 * k->cap : 512;
            const void **np = realloc(k->ptr, (size_t)cap * sizeof *np);
            if (np) k->ptr = np;
            uint64_t *nl = realloc(k->len, (size_t)cap * sizeof *nl);
            if (nl) k->len = nl;
            if (!np || !nl) {
                fail_walk(k, what, "out of memory");
                return;
            }
            k->cap = cap;
        }
        k->ptr[k->n] = *p;
        k->len[k->n] = *p ? bytes : 0;
        k->total += *p ? bytes : 0;
        k->n++;
        return;
    }
    if (k->next >= k->n_entries) {
        fail_walk(k, what, "the table ends early");
        return;
    }
    const uint8_t *ent = k->table + (size_t)k->next * ENTRY_BYTES;
    uint64_t off = get_u64(ent), len = get_u64(ent + 8);
    if (len == 0) {
        if (required) fail_walk(k, what, "missing");
        *p = NULL;
    } else if (len != bytes) {
        fail_walk(k, what, "its size does not match the architecture");
    } else if (off % ALIGN || off < k->payload || off > k->size || len > k->size - off) {
        fail_walk(k, what, "its offset is outside the file or unaligned");
    } else {
        *p = k->base + off;
        k->total += len;
    }
    k->next++;
}

#define FIELD(k, lvalue, bytes, req, what)                                                         \
    do {                                                                                           \
        const void *p_ = (lvalue);                                                                 \
        field((k), &p_, (bytes), (req), (what));                                                   \
        (lvalue) = p_;                                                                             \
    } while (0)

static void vec(walker *k, const float **v, uint64_t n, const char *what) {
    FIELD(k, *v, n * sizeof(float), 1, what);
}

static void lin(walker *k, ptts_lin *L, const char *what) {
    const uint64_t out = (uint64_t)L->out, in = (uint64_t)L->in, n = out * in;
    const uint64_t panels = (out + PTTS_PANEL - 1) / PTTS_PANEL;
    FIELD(k, L->w, n * sizeof(float), 0, what);
    FIELD(k, L->wh, n * sizeof(uint16_t), 0, what);
    FIELD(k, L->wq, n, 0, what);
    FIELD(k, L->scale, out * sizeof(float), 0, what);
    FIELD(k, L->bias, out * sizeof(float), 0, what);
    FIELD(k, L->wp, panels * in * PTTS_PANEL * sizeof(float), 0, what);
    FIELD(k, L->wp16, ptts_bf16_panel_elems(L->out, L->in) * sizeof(uint16_t), 0, what);
    if (!k->load || k->bad) return;
    if (!!L->w + !!L->wh + !!L->wq != 1 || !L->wq != !L->scale)
        fail_walk(k, what, "not exactly one of float32, bf16, int8 + scales");
    else if (L->wp16 && L->in > PTTS_BF16_PANEL_KMAX)
        fail_walk(k, what, "bf16 panels of a matrix too wide for them");
    L->type = L->wq ? PTTS_W_Q8 : L->wh ? PTTS_W_BF16 : PTTS_W_F32;
}

static void transformer(walker *k, ptts_transformer *t, int layer_scale, const char *what) {
    const uint64_t d = (uint64_t)t->d;
    for (int i = 0; i < t->layers && !k->bad; i++) {
        ptts_tlayer *L = &t->layer[i];
        lin(k, &L->in_proj, what);
        lin(k, &L->out_proj, what);
        lin(k, &L->linear1, what);
        lin(k, &L->linear2, what);
        vec(k, &L->norm1_w, d, what);
        vec(k, &L->norm1_b, d, what);
        vec(k, &L->norm2_w, d, what);
        vec(k, &L->norm2_b, d, what);
        if (layer_scale) {
            vec(k, &L->ls1, d, what);
            vec(k, &L->ls2, d, what);
        }
    }
}

static void resnet(walker *k, ptts_resnet *r, const char *what) {
    lin(k, &r->c1.w, what);
    lin(k, &r->c2.w, what);
}

static void walk(walker *k, ptts_weights *w) {
    const ptts_arch *a = &w->arch;
    const uint64_t d = (uint64_t)a->d, ld = (uint64_t)a->ld, fd = (uint64_t)a->fd;
    vec(k, &w->bos_emb, ld, "flow_lm.bos_emb");
    if (a->has_bos_before_voice) vec(k, &w->bos_before_voice, d, "flow_lm.bos_before_voice");
    lin(k, &w->speaker_proj, "flow_lm.speaker_proj_weight");
    vec(k, &w->embed, ((uint64_t)a->nb + 1) * d, "flow_lm.conditioner.embed");
    lin(k, &w->input_linear, "flow_lm.input_linear");
    transformer(k, &w->backbone, 0, "flow_lm.transformer");
    vec(k, &w->out_norm_w, d, "flow_lm.out_norm");
    vec(k, &w->out_norm_b, d, "flow_lm.out_norm");
    lin(k, &w->out_eos, "flow_lm.out_eos");

    ptts_flow_weights *f = &w->flow;
    for (int i = 0; i < a->n_time_embed; i++) {
        vec(k, &f->time[i].freqs, (uint64_t)a->nfreq, "flow_lm.flow_net.time_embed");
        lin(k, &f->time[i].mlp0, "flow_lm.flow_net.time_embed");
        lin(k, &f->time[i].mlp2, "flow_lm.flow_net.time_embed");
        vec(k, &f->time[i].alpha, fd, "flow_lm.flow_net.time_embed");
    }
    lin(k, &f->cond_embed, "flow_lm.flow_net.cond_embed");
    lin(k, &f->input_proj, "flow_lm.flow_net.input_proj");
    for (int i = 0; i < a->flow_depth && !k->bad; i++) {
        ptts_res_block *r = &f->block[i];
        vec(k, &r->ln_w, fd, "flow_lm.flow_net.res_blocks");
        vec(k, &r->ln_b, fd, "flow_lm.flow_net.res_blocks");
        lin(k, &r->mlp0, "flow_lm.flow_net.res_blocks");
        lin(k, &r->mlp2, "flow_lm.flow_net.res_blocks");
        lin(k, &r->ada, "flow_lm.flow_net.res_blocks");
    }
    lin(k, &f->final_linear, "flow_lm.flow_net.final_layer");
    lin(k, &f->final_ada, "flow_lm.flow_net.final_layer");

    ptts_codec_weights *c = &w->codec;
    vec(k, &c->emb_std, ld, "flow_lm.emb_std");
    vec(k, &c->emb_mean, ld, "flow_lm.emb_mean");
    lin(k, &c->quant_out, "mimi.quantizer.output_proj");
    vec(k, &c->upsample_w, (uint64_t)a->C * (uint64_t)c->upsample_k, "mimi.upsample");
    transformer(k, &c->dec_tr, 1, "mimi.decoder_transformer");
    lin(k, &c->dec_in.w, "mimi.decoder.model.0");
    for (int s = 0; s < 3; s++) {
        lin(k, &c->dec_up[s].w, "mimi.decoder convtr");
        vec(k, &c->dec_up[s].bias, (uint64_t)c->dec_up[s].cout, "mimi.decoder convtr");
        resnet(k, &c->dec_res[s], "mimi.decoder resnet");
    }
    lin(k, &c->dec_out.w, "mimi.decoder.model.11");
    if (!a->has_encoder) return;
    lin(k, &c->enc_in.w, "mimi.encoder.model.0");
    for (int s = 0; s < 3; s++) {
        resnet(k, &c->enc_res[s], "mimi.encoder resnet");
        lin(k, &c->enc_down[s].w, "mimi.encoder conv");
    }
    lin(k, &c->enc_out.w, "mimi.encoder.model.11");
    transformer(k, &c->enc_tr, 1, "mimi.encoder_transformer");
    lin(k, &c->downsample.w, "mimi.downsample");
}

static int hash_file(const char *path, uint64_t *size, uint8_t sha[32], ptts_error *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return ptts_fail(e, PTTS_E_IO, "%s: %s", path, strerror(errno));
    ptts_sha256 s;
    ptts_sha256_init(&s);
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf) {
        fclose(f);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    size_t got;
    *size = 0;
    while ((got = fread(buf, 1, CHUNK, f)) > 0) {
        ptts_sha256_update(&s, buf, got);
        *size += got;
    }
    int err = ferror(f);
    free(buf);
    fclose(f);
    if (err) return ptts_fail(e, PTTS_E_IO, "%s: read error", path);
    ptts_sha256_final(&s, sha);
    return 0;
}

static int write_all(FILE *f, const void *p, size_t n) {
    return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1; /* an empty array may have no pointer */
}

int ptts_packed_write(const ptts_weights *w, ptts_wmode mode, const char *src_path,
                      const char *out_path, ptts_error *e) {
    walker k = {0};
    walk(&k, (ptts_weights *)w); /* collecting only reads the fields */
    int rc = 0;
    if (k.bad) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "%s: %s", out_path, k.why);
        goto done;
    }
    if (k.total != w->bytes) {
        rc = ptts_fail(e, PTTS_E_INTERNAL,
                       "%s: the walk covers %llu of the model's %llu weight bytes", out_path,
                       (unsigned long long)k.total, (unsigned long long)w->bytes);
        goto done;
    }
    uint8_t hdr[HDR_BYTES] = {0};
    uint64_t src_size = 0;
    if ((rc = hash_file(src_path, &src_size, hdr + 32, e))) goto done;
    const uint64_t table = HDR_BYTES + (uint64_t)N_ARCH * 4;
    const uint64_t payload = (table + (uint64_t)k.n * ENTRY_BYTES + ALIGN - 1) / ALIGN * ALIGN;
    uint64_t end = payload;
    for (int i = 0; i < k.n; i++)
        end = (end + k.len[i] + ALIGN - 1) / ALIGN * ALIGN;
    memcpy(hdr, PTTS_PACKED_MAGIC, 8);
    put_u32(hdr + 8, PTTS_PACKED_VERSION);
    put_u32(hdr + 12, (uint32_t)mode);
    put_u64(hdr + 16, end);
    put_u64(hdr + 24, src_size);
    put_u32(hdr + 64, N_ARCH);
    put_u32(hdr + 68, (uint32_t)k.n);
    put_u64(hdr + 72, payload);
    put_u32(hdr + 80, BYTE_ORDER_TAG);
    size_t tmp_len = strlen(out_path) + 8;
    char *tmp = malloc(tmp_len);
    if (!tmp) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        goto done;
    }
    snprintf(tmp, tmp_len, "%s.part", out_path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        rc = ptts_fail(e, PTTS_E_IO, "%s: %s", tmp, strerror(errno));
        free(tmp);
        goto done;
    }
    int bad = write_all(f, hdr, sizeof hdr);
    int arch[sizeof(ptts_arch) / sizeof(int)];
    memcpy(arch, &w->arch, sizeof arch);
    for (uint32_t i = 0; i < N_ARCH && !bad; i++) {
        uint8_t b[4];
        put_u32(b, (uint32_t)arch[i]);
        bad = write_all(f, b, 4);
    }
    uint64_t at = payload;
    for (int i = 0; i < k.n && !bad; i++) {
        uint8_t b[ENTRY_BYTES];
        put_u64(b, k.len[i] ? at : 0);
        put_u64(b + 8, k.len[i]);
        bad = write_all(f, b, sizeof b);
        at = (at + k.len[i] + ALIGN - 1) / ALIGN * ALIGN;
    }
    static const uint8_t zeros[ALIGN];
    uint64_t pos = table + (uint64_t)k.n * ENTRY_BYTES;
    if (!bad) bad = write_all(f, zeros, (size_t)(payload - pos));
    for (int i = 0; i < k.n && !bad; i++) {
        bad = write_all(f, k.ptr[i], (size_t)k.len[i]);
        uint64_t pad = (ALIGN - k.len[i] % ALIGN) % ALIGN;
        if (!bad) bad = write_all(f, zeros, (size_t)pad);
    }
    if (fclose(f) != 0) bad = 1;
    if (!bad && rename(tmp, out_path) != 0) bad = 1;
    if (bad) {
        rc = ptts_fail(e, PTTS_E_IO, "%s: cannot write: %s", out_path, strerror(errno));
        remove(tmp);
    }
    free(tmp);
done:
    free(k.ptr);
    free(k.len);
    return rc;
}

/* The stored architecture: every field a plausible size, the derived ones consistent. */
static int check_arch(const ptts_arch *a) {
    const int *v = (const int *)a;
    for (uint32_t i = 0; i < N_ARCH; i++)
        if (v[i] < 0 || v[i] > (1 << 24)) return -1;
    if (a->d < 1 || a->heads < 1 || a->d % a->heads || a->layers < 1 || a->layers > 256 ||
        a->ffn < 1 || a->ld < 1 || a->inner_dim < 1 || a->nb < 1 || a->fd < 1 ||
        a->flow_depth < 1 || a->flow_depth > 256 || a->nfreq < 1 || a->C < 1 ||
        a->codec_heads < 1 || a->C % a->codec_heads || a->codec_layers < 1 ||
        a->codec_layers > 256 || a->codec_ffn < 1 || a->codec_window < 1 || a->nf < 1 ||
        a->has_bos_before_voice > 1 || a->has_encoder > 1)
        return -1;
    if (ptts_flow_k(a->flow_type) != a->n_time_embed) return -1;
    int64_t fs = 16;
    for (int i = 0; i < 3; i++) {
        if (a->ratios[i] < 1 || a->ratios[i] > 64) return -1;
        fs *= a->ratios[i];
    }
    return fs == a->frame_samples ? 0 : -1;
}

int ptts_packed_load_memory(ptts_weights **out, const void *buf, size_t size, const char *name,
                            const ptts_weights_options *o, ptts_error *e) {
    *out = NULL;
    const uint8_t *p = buf;
    if (size < HDR_BYTES || memcmp(p, PTTS_PACKED_MAGIC, 8) != 0)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: not a converted weights file", name);
    if (get_u32(p + 8) != PTTS_PACKED_VERSION || get_u32(p + 64) != N_ARCH)
        return ptts_fail(e, PTTS_E_FORMAT,
                         "%s: converted by another version of pocket-tts (format %u); convert the "
                         "checkpoint again",
                         name, get_u32(p + 8));
    if (get_u32(p + 80) != BYTE_ORDER_TAG)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: written on a machine of another byte order", name);
    if (get_u64(p + 16) != size)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: %llu bytes, its header says %llu (truncated?)",
                         name, (unsigned long long)size, (unsigned long long)get_u64(p + 16));
    const uint32_t prec = get_u32(p + 12);
    if (prec > PTTS_WMODE_INT8)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: unknown precision %u", name, prec);
    static const char *const prec_names[] = {"f32", "bf16", "int8"};
    const ptts_wmode want = o ? o->mode : PTTS_WMODE_F32;
    if (want != PTTS_WMODE_F32 && want != (ptts_wmode)prec)
        return ptts_fail(e, PTTS_E_INVALID,
                         "%s was converted for %s; precision %s needs the checkpoint or a file "
                         "converted for it",
                         name, prec_names[prec], prec_names[want]);
    const uint64_t table = HDR_BYTES + (uint64_t)N_ARCH * 4;
    const uint32_t n_entries = get_u32(p + 68);
    const uint64_t payload = get_u64(p + 72);
    if (table > size || n_entries > (size - table) / ENTRY_BYTES ||
        payload < table + (uint64_t)n_entries * ENTRY_BYTES || payload > size)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: its table is outside the file", name);
    ptts_arch a;
    int arch[sizeof(ptts_arch) / sizeof(int)];
    for (uint32_t i = 0; i < N_ARCH; i++)
        arch[i] = (int)get_u32(p + HDR_BYTES + 4 * i);
    memcpy(&a, arch, sizeof a);
    if (check_arch(&a))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: the stored architecture is not valid", name);
    if (o &&
        ((o->heads && o->heads != a.heads) || (o->codec_heads && o->codec_heads != a.codec_heads)))
        return ptts_fail(e, PTTS_E_MODEL,
                         "%s was converted with %d backbone and %d codec heads; the config says "
                         "%d and %d",
                         name, a.heads, a.codec_heads, o->heads, o->codec_heads);
    ptts_weights *w;
    ptts_error se = {0};
    int rc = ptts_weights_skeleton(&w, &a, &se);
    if (rc) return ptts_fail(e, rc, "%s: %s", name, se.msg);
    w->mode = (int)prec;
    walker k = {.load = 1, .base = p, .size = size, .payload = payload, .table = p + table};
    k.n_entries = n_entries;
    walk(&k, w);
    if (!k.bad && k.next != n_entries) fail_walk(&k, "the end", "more entries than arrays");
    if (k.bad) {
        ptts_weights_free(w);
        return ptts_fail(e, PTTS_E_FORMAT, "%s: %s", name, k.why);
    }
    w->bytes = (size_t)k.total;
    *out = w;
    return 0;
}

int ptts_packed_is(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char m[8];
    int is = fread(m, 1, 8, f) == 8 && memcmp(m, PTTS_PACKED_MAGIC, 8) == 0;
    fclose(f);
    return is;
}

int ptts_packed_load(ptts_weights **out, const char *path, const ptts_weights_options *o,
                     ptts_error *e) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ptts_fail(e, PTTS_E_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return ptts_fail(e, PTTS_E_FORMAT, "%s: empty or unreadable", path);
    }
    size_t size = (size_t)st.st_size;
    /* MAP_POPULATE: the first frame reads every array, so the pages are mapped now, at load,
     * rather than faulted in one by one during the first frame (its time to first audio) */
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return ptts_fail(e, PTTS_E_IO, "%s: mmap: %s", path, strerror(errno));
    int rc = ptts_packed_load_memory(out, map, size, path, o, e);
    if (rc) {
        munmap(map, size);
        return rc;
    }
    (*out)->map = map;
    (*out)->map_size = size;
    return 0;
}
