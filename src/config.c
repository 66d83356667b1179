/*
 * config.c - the reference's YAML model configuration, 3.3 schema (config.h, MODEL.md 10.2),
 * read with libyaml and checked against one key table.
 *
 * Why it is built this way:
 * - The table `g_keys` is the schema: {full path, type, field offset, required}. The walker
 *   visits every key of every mapping it reaches: a key not in the table is an error naming its
 *   full path, and after each mapping its required children must all have been seen. Mappings
 *   are only entered where the table says so, lists hold at most PTTS_CONFIG_MAX_RATIOS scalars
 *   and replace_characters at most MAX_PAIRS pairs, so aliases (references to one node, never
 *   expanded by libyaml) cannot make the walk longer than the table.
 * - Hostile input is bounded before the document is built: at most CONFIG_MAX_BYTES bytes, and
 *   an event pre-pass refuses nesting deeper than MAX_DEPTH and more than MAX_EVENTS events, so
 *   the node tree stays small whatever the bytes are.
 * - The input is read as UTF-8 whatever the locale or a byte-order mark says (the French config
 *   holds its replace_characters as UTF-8; MODEL.md 10.5); libyaml rejects invalid UTF-8.
 * - Scalars are typed as PyYAML (the reference's loader) resolves plain scalars: null is "",
 *   "~", null/Null/NULL; booleans true/false/yes/no/on/off in lower, Capitalized or UPPER case;
 *   integers are decimal; a float field takes an integer too (pydantic widens it). A quoted
 *   scalar is always a string, so `"64"` for an integer key is a type error, and a plain `64`
 *   is no string. A null is allowed only where the schema says "or null".
 * - For a repeated key the last value wins, as in PyYAML.
 * - JSON is YAML (flow style): the fixtures' manifest.json goes through the same parser; when
 *   the root mapping has a "config" mapping (the manifest), that mapping is the configuration.
 * - Relative paths are joined to the folder of the config ("dir/rel", no lexical clean-up for
 *   local folders, which would be wrong across symbolic links). A URL folder (a config fetched
 *   from hf:// or http(s), see hub.c) is cleaned of "../" lexically, and an hf:// folder's
 *   "@revision" moves to the end of the joined path. Absolute paths and URLs stay as written.
 * - ptts_config_load* starts from ptts_config_init and, on failure, leaves the config freed and
 *   re-initialized, so the caller frees in one place either way.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define CONFIG_MAX_BYTES ((size_t)256 << 10)
#define MAX_DEPTH 16      /* the schema nests 3 mappings deep; JSON manifests add one */
#define MAX_EVENTS 200000 /* a shipped config has about 200 */
#define MAX_PAIRS 256     /* pairs of one mapping (replace_characters included) */
#define MAX_PATH 160      /* a key path in messages */

enum {
    K_MAP,     /* a mapping, walked with the table */
    K_INT,     /* int */
    K_NINT,    /* int or null (null: -1) */
    K_FLOAT,   /* float (an int is accepted) */
    K_BOOL,    /* bool */
    K_STR,     /* str (malloc'd) */
    K_PATH,    /* str, resolved against the config's folder */
    K_NPATH,   /* str or null, resolved */
    K_INTS,    /* list of int, at most PTTS_CONFIG_MAX_RATIOS; aux = offset of the count */
    K_FLOW,    /* flow.type: lsd, flow_matching or drifting */
    K_REPLACE, /* replace_characters: one character -> a string */
};

typedef struct key_def {
    const char *path;
    unsigned char type, required;
    size_t off, aux;
} key_def;

#define F(field) offsetof(ptts_config, field)
#define REQ(p, t, field)                                                                           \
    { p, t, 1, F(field), 0 }
#define OPT(p, t, field)                                                                           \
    { p, t, 0, F(field), 0 }
#define MAP(p, req)                                                                                \
    { p, K_MAP, req, 0, 0 }
#define INTS(p, field, count)                                                                      \
    { p, K_INTS, 1, F(field), F(count) }
static const key_def g_keys[] = {
    OPT("weights_path", K_NPATH, weights_path),
    OPT("weights_path_without_voice_cloning", K_NPATH, weights_path_without_voice_cloning),
    OPT("pad_with_spaces_for_short_inputs", K_BOOL, text.pad_with_spaces),
    OPT("remove_semicolons", K_BOOL, text.remove_semicolons),
    OPT("append_terminal_punctuation", K_BOOL, text.append_terminal_punctuation),
    OPT("capitalize_first_letter", K_BOOL, text.capitalize_first_letter),
    OPT("replace_characters", K_REPLACE, text),
    OPT("model_recommended_frames_after_eos", K_NINT, recommended_frames_after_eos),
    OPT("default_temperature", K_FLOAT, default_temperature),
    MAP("flow_lm", 1),
    REQ("flow_lm.dtype", K_STR, flow_lm_dtype),
    MAP("flow_lm.flow", 1),
    REQ("flow_lm.flow.dim", K_INT, flow_dim),
    REQ("flow_lm.flow.depth", K_INT, flow_depth),
    OPT("flow_lm.flow.type", K_FLOW, flow_type),
    MAP("flow_lm.transformer", 1),
    REQ("flow_lm.transformer.hidden_scale", K_INT, hidden_scale),
    REQ("flow_lm.transformer.max_period", K_FLOAT, max_period),
    REQ("flow_lm.transformer.d_model", K_INT, d_model),
    REQ("flow_lm.transformer.num_heads", K_INT, num_heads),
    REQ("flow_lm.transformer.num_layers", K_INT, num_layers),
    MAP("flow_lm.lookup_table", 1),
    REQ("flow_lm.lookup_table.dim", K_INT, lookup_dim),
    REQ("flow_lm.lookup_table.n_bins", K_INT, n_bins),
    REQ("flow_lm.lookup_table.tokenizer", K_STR, tokenizer_kind),
    REQ("flow_lm.lookup_table.tokenizer_path", K_PATH, tokenizer_path),
    OPT("flow_lm.weights_path", K_NPATH, flow_lm_weights_path),
    OPT("flow_lm.insert_bos_before_voice", K_BOOL, insert_bos_before_voice),
    MAP("mimi", 1),
    REQ("mimi.dtype", K_STR, mimi_dtype),
    REQ("mimi.sample_rate", K_INT, sample_rate),
    REQ("mimi.channels", K_INT, channels),
    REQ("mimi.frame_rate", K_FLOAT, frame_rate),
    MAP("mimi.seanet", 1),
    REQ("mimi.seanet.dimension", K_INT, seanet_dimension),
    REQ("mimi.seanet.channels", K_INT, seanet_channels),
    REQ("mimi.seanet.n_filters", K_INT, seanet_n_filters),
    REQ("mimi.seanet.n_residual_layers", K_INT, seanet_n_residual_layers),
    INTS("mimi.seanet.ratios", seanet_ratios, n_seanet_ratios),
    REQ("mimi.seanet.kernel_size", K_INT, seanet_kernel_size),
    REQ("mimi.seanet.residual_kernel_size", K_INT, seanet_residual_kernel_size),
    REQ("mimi.seanet.last_kernel_size", K_INT, seanet_last_kernel_size),
    REQ("mimi.seanet.dilation_base", K_INT, seanet_dilation_base),
    REQ("mimi.seanet.pad_mode", K_STR, seanet_pad_mode),
    REQ("mimi.seanet.compress", K_INT, seanet_compress),
    MAP("mimi.transformer", 1),
    REQ("mimi.transformer.d_model", K_INT, codec_d_model),
    REQ("mimi.transformer.input_dimension", K_INT, codec_input_dimension),
    INTS("mimi.transformer.output_dimensions", codec_output_dimensions, n_codec_output_dimensions),
    REQ("mimi.transformer.num_heads", K_INT, codec_num_heads),
    REQ("mimi.transformer.num_layers", K_INT, codec_num_layers),
    REQ("mimi.transformer.layer_scale", K_FLOAT, codec_layer_scale),
    REQ("mimi.transformer.context", K_INT, codec_context),
    REQ("mimi.transformer.dim_feedforward", K_INT, codec_ffn),
    OPT("mimi.transformer.max_period", K_FLOAT, codec_max_period),
    MAP("mimi.quantizer", 1),
    REQ("mimi.quantizer.dimension", K_INT, quantizer_dimension),
    REQ("mimi.quantizer.output_dimension", K_INT, quantizer_output_dimension),
    OPT("mimi.weights_path", K_NPATH, mimi_weights_path),
    OPT("mimi.inner_dim", K_NINT, mimi_inner_dim),
    OPT("mimi.outer_dim", K_NINT, mimi_outer_dim),
};
#undef F
#undef REQ
#undef OPT
#undef MAP
#undef INTS
#define N_KEYS ((int)(sizeof g_keys / sizeof g_keys[0]))

typedef struct {
    yaml_document_t *doc;
    const char *name;     /* the file name used in messages */
    const char *base_dir; /* NULL: relative paths kept as is */
    ptts_config *c;
    ptts_error *e;
    unsigned char seen[N_KEYS];
} ctx;

void ptts_config_init(ptts_config *c) {
    memset(c, 0, sizeof *c);
    c->text = ptts_text_options_default();
    c->recommended_frames_after_eos = -1;
    c->default_temperature = 0.3f;
    c->flow_type = PTTS_FLOW_LSD;
    c->codec_max_period = 10000.0f;
    c->mimi_inner_dim = -1;
    c->mimi_outer_dim = -1;
}

void ptts_config_free(ptts_config *c) {
    if (!c) return;
    char **strs[] = {&c->weights_path,     &c->weights_path_without_voice_cloning,
                     &c->flow_lm_dtype,    &c->tokenizer_kind,
                     &c->tokenizer_path,   &c->flow_lm_weights_path,
                     &c->mimi_dtype,       &c->seanet_pad_mode,
                     &c->mimi_weights_path};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
    for (int i = 0; i < c->text.n_replace; i++) {
        free(c->replace_from[i]);
        free(c->replace_to[i]);
    }
    free(c->replace_from);
    free(c->replace_to);
    c->replace_from = c->replace_to = NULL;
    c->text.n_replace = 0;
    c->text.replace_from = c->text.replace_to = NULL;
}

static unsigned long line_of(const yaml_node_t *n) { return (unsigned long)n->start_mark.line + 1; }

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int is_plain(const yaml_node_t *n) {
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static int is_null(const yaml_node_t *n) {
    if (!is_plain(n)) return 0;
    const char *s = scalar(n);
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* 1/0 for a plain boolean scalar, -1 otherwise. */
static int bool_of(const yaml_node_t *n) {
    static const char *yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char *no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    if (!is_plain(n)) return -1;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!strcmp(scalar(n), yes[i])) return 1;
        if (!strcmp(scalar(n), no[i])) return 0;
    }
    return -1;
}

static int parse_int(const yaml_node_t *n, int *out) {
    if (!is_plain(n)) return -1;
    const char *s = scalar(n);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < -2147483647L - 1 || v > 2147483647L) return -1;
    *out = (int)v;
    return 0;
}

static int parse_float(const yaml_node_t *n, float *out) {
    if (!is_plain(n)) return -1;
    const char *s = scalar(n);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || fabs(v) > 3.4e38) return -1;
    *out = (float)v;
    return 0;
}

/* A string value: a quoted scalar, or a plain one that PyYAML would not read as another type. */
static int is_string(const yaml_node_t *n) {
    if (n->type != YAML_SCALAR_NODE) return 0;
    if (!is_plain(n)) return 1;
    int i;
    float f;
    return !is_null(n) && bool_of(n) < 0 && parse_int(n, &i) && parse_float(n, &f);
}

static int type_error(ctx *x, const yaml_node_t *n, const char *path, const char *want) {
    if (n->type == YAML_SCALAR_NODE)
        return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: %s: expected %s, got %s'%.60s'", x->name,
                         line_of(n), path, want, is_plain(n) ? "" : "the quoted string ",
                         scalar(n));
    return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: %s: expected %s, got a %s", x->name, line_of(n),
                     path, want, n->type == YAML_MAPPING_NODE ? "mapping" : "sequence");
}

static int is_url(const char *s) {
    const char *p = s;
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) return 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '+' || *p == '-' || *p == '.')
        p++;
    return p[0] == ':' && p[1] == '/' && p[2] == '/';
}

/* `rel` joined to the folder `base` (see the file comment); NULL when out of memory. */
static char *join_path(const char *base, const char *rel) {
    size_t bl = strlen(base), rl = strlen(rel);
    const char *rev = "";
    size_t revl = 0;
    if (!strncmp(base, "hf://", 5)) { /* hf://org/name/dir@rev: the revision goes last */
        const char *at = strrchr(base, '@'), *slash = strrchr(base, '/');
        if (at && at > slash) {
            rev = at;
            revl = bl - (size_t)(at - base);
            bl = (size_t)(at - base);
        }
    }
    char *v = malloc(bl + rl + revl + 2);
    if (!v) return NULL;
    memcpy(v, base, bl);
    size_t n = bl;
    if (n && v[n - 1] != '/') v[n++] = '/';
    if (is_url(base)) { /* "../" climbs one segment, never above scheme://host/ (or org/name) */
        /* in base, which has its NUL (v has none yet); the scheme lies within v's first bl bytes */
        const char *sep = strstr(base, "://");
        size_t floor = (size_t)(sep - base) + 3;
        for (int seg = 0; seg < (strncmp(base, "hf://", 5) ? 1 : 2); seg++) {
            const char *s = memchr(v + floor, '/', n - floor);
            if (!s) break;
            floor = (size_t)(s - v) + 1;
        }
        while (!strncmp(rel, "../", 3) || !strncmp(rel, "./", 2)) {
            if (rel[1] == '/') {
                rel += 2;
                continue;
            }
            rel += 3;
            if (n > floor) {
                n--;
                while (n > floor && v[n - 1] != '/')
                    n--;
            }
        }
        rl = strlen(rel);
    }
    memcpy(v + n, rel, rl);
    memcpy(v + n + rl, rev, revl);
    v[n + rl + revl] = 0;
    return v;
}

static int set_string(ctx *x, char **dst, const yaml_node_t *n, const char *path, int resolve) {
    const char *s = scalar(n);
    if (resolve && !*s) return type_error(x, n, path, "a path");
    char *v = resolve && x->base_dir && *x->base_dir && s[0] != '/' && !is_url(s)
                  ? join_path(x->base_dir, s)
                  : ptts_strdup(s);
    if (!v) return ptts_fail(x->e, PTTS_E_NOMEM, "out of memory reading %s", x->name);
    free(*dst);
    *dst = v;
    return PTTS_OK;
}

static int read_ints(ctx *x, const key_def *k, const yaml_node_t *n) {
    int *out = (int *)((char *)x->c + k->off), *count = (int *)((char *)x->c + k->aux);
    if (n->type != YAML_SEQUENCE_NODE) return type_error(x, n, k->path, "a list of integers");
    ptrdiff_t len = n->data.sequence.items.top - n->data.sequence.items.start;
    if (len < 1 || len > PTTS_CONFIG_MAX_RATIOS)
        return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: %s: expected 1 to %d integers, got %td",
                         x->name, line_of(n), k->path, PTTS_CONFIG_MAX_RATIOS, len);
    for (ptrdiff_t i = 0; i < len; i++) {
        yaml_node_t *it = yaml_document_get_node(x->doc, n->data.sequence.items.start[i]);
        if (!it || parse_int(it, &out[i]))
            return type_error(x, it ? it : n, k->path, "a list of integers");
    }
    *count = (int)len;
    return PTTS_OK;
}

/* Bytes of the one UTF-8 character that `s` is, or 0 when it is none or several. */
static int one_char(const char *s) {
    unsigned char c = (unsigned char)s[0];
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!c || !n) return 0;
    for (int i = 1; i < n; i++)
        if (((unsigned char)s[i] >> 6) != 2) return 0;
    return s[n] ? 0 : n;
}

static int read_replace(ctx *x, const key_def *k, const yaml_node_t *n) {
    ptts_config *c = x->c;
    if (n->type != YAML_MAPPING_NODE) return type_error(x, n, k->path, "a mapping");
    ptrdiff_t len = n->data.mapping.pairs.top - n->data.mapping.pairs.start;
    if (len > MAX_PAIRS)
        return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: %s: more than %d entries", x->name,
                         line_of(n), k->path, MAX_PAIRS);
    for (int i = 0; i < c->text.n_replace; i++) { /* a repeated replace_characters: the last */
        free(c->replace_from[i]);
        free(c->replace_to[i]);
    }
    c->text.n_replace = 0;
    char **from = realloc(c->replace_from, (size_t)(len ? len : 1) * sizeof *from);
    if (from) c->replace_from = from;
    char **to = from ? realloc(c->replace_to, (size_t)(len ? len : 1) * sizeof *to) : NULL;
    if (to) c->replace_to = to;
    if (!from || !to) return ptts_fail(x->e, PTTS_E_NOMEM, "out of memory reading %s", x->name);
    for (ptrdiff_t i = 0; i < len; i++) {
        yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];
        yaml_node_t *kn = yaml_document_get_node(x->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(x->doc, p->value);
        if (!kn || !vn) return ptts_fail(x->e, PTTS_E_FORMAT, "%s: broken document", x->name);
        if (!is_string(kn) || !one_char(scalar(kn)))
            return type_error(x, kn, k->path, "one character as the key");
        if (!is_string(vn)) return type_error(x, vn, k->path, "a string as the value");
        int at = c->text.n_replace;
        for (int j = 0; j < c->text.n_replace; j++)
            if (!strcmp(c->replace_from[j], scalar(kn))) at = j; /* repeated key: the last */
        char *f = ptts_strdup(scalar(kn)), *t = ptts_strdup(scalar(vn));
        if (!f || !t) {
            free(f);
            free(t);
            return ptts_fail(x->e, PTTS_E_NOMEM, "out of memory reading %s", x->name);
        }
        if (at < c->text.n_replace) {
            free(c->replace_from[at]);
            free(c->replace_to[at]);
        } else {
            c->text.n_replace++;
        }
        c->replace_from[at] = f;
        c->replace_to[at] = t;
    }
    c->text.replace_from = (const char *const *)c->replace_from;
    c->text.replace_to = (const char *const *)c->replace_to;
    return PTTS_OK;
}

static int walk(ctx *x, const yaml_node_t *map, const char *prefix);

static int read_value(ctx *x, int ki, const yaml_node_t *n) {
    const key_def *k = &g_keys[ki];
    void *dst = (char *)x->c + k->off;
    int nullable = k->type == K_NINT || k->type == K_NPATH;
    if (is_null(n) && nullable) {
        if (k->type == K_NINT)
            *(int *)dst = -1;
        else {
            free(*(char **)dst);
            *(char **)dst = NULL;
        }
        return PTTS_OK;
    }
    switch (k->type) {
    case K_MAP:
        if (n->type != YAML_MAPPING_NODE) return type_error(x, n, k->path, "a mapping");
        return walk(x, n, k->path);
    case K_INT:
    case K_NINT:
        if (parse_int(n, dst))
            return type_error(x, n, k->path, nullable ? "an integer or null" : "an integer");
        return PTTS_OK;
    case K_FLOAT: return parse_float(n, dst) ? type_error(x, n, k->path, "a number") : PTTS_OK;
    case K_BOOL: {
        int b = bool_of(n);
        if (b < 0) return type_error(x, n, k->path, "a boolean");
        *(int *)dst = b;
        return PTTS_OK;
    }
    case K_STR:
    case K_PATH:
    case K_NPATH:
        if (!is_string(n))
            return type_error(x, n, k->path, nullable ? "a string or null" : "a string");
        return set_string(x, dst, n, k->path, k->type != K_STR);
    case K_INTS: return read_ints(x, k, n);
    case K_FLOW:
        if (is_string(n) && !strcmp(scalar(n), "lsd"))
            *(int *)dst = PTTS_FLOW_LSD;
        else if (is_string(n) && !strcmp(scalar(n), "flow_matching"))
            *(int *)dst = PTTS_FLOW_MATCHING;
        else if (is_string(n) && !strcmp(scalar(n), "drifting"))
            *(int *)dst = PTTS_FLOW_DRIFTING;
        else
            return type_error(x, n, k->path, "lsd, flow_matching or drifting");
        return PTTS_OK;
    case K_REPLACE: return read_replace(x, k, n);
    }
    return ptts_fail(x->e, PTTS_E_INTERNAL, "%s: key type %d", k->path, k->type);
}

/* Is g_keys[i] a direct child of the mapping at `prefix` ("" for the root)? */
static int child_of(int i, const char *prefix) {
    const char *p = g_keys[i].path;
    size_t pl = strlen(prefix);
    if (pl) {
        if (strncmp(p, prefix, pl) || p[pl] != '.') return 0;
        p += pl + 1;
    }
    return strchr(p, '.') == NULL;
}

static int walk(ctx *x, const yaml_node_t *map, const char *prefix) {
    ptrdiff_t len = map->data.mapping.pairs.top - map->data.mapping.pairs.start;
    if (len > MAX_PAIRS)
        return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: %s: more than %d keys", x->name,
                         line_of(map), *prefix ? prefix : "the top level", MAX_PAIRS);
    for (ptrdiff_t i = 0; i < len; i++) {
        yaml_node_pair_t *p = &map->data.mapping.pairs.start[i];
        yaml_node_t *kn = yaml_document_get_node(x->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(x->doc, p->value);
        if (!kn || !vn) return ptts_fail(x->e, PTTS_E_FORMAT, "%s: broken document", x->name);
        if (kn->type != YAML_SCALAR_NODE)
            return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: %s: a key must be a string", x->name,
                             line_of(kn), *prefix ? prefix : "the top level");
        char path[MAX_PATH];
        snprintf(path, sizeof path, "%s%s%.100s", prefix, *prefix ? "." : "", scalar(kn));
        int ki = -1;
        for (int j = 0; j < N_KEYS && ki < 0; j++)
            if (!strcmp(g_keys[j].path, path)) ki = j;
        if (ki < 0)
            return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: %s: unknown key", x->name, line_of(kn),
                             path);
        x->seen[ki] = 1;
        int rc = read_value(x, ki, vn);
        if (rc) return rc;
    }
    for (int j = 0; j < N_KEYS; j++)
        if (g_keys[j].required && !x->seen[j] && child_of(j, prefix))
            return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: %s: missing (a required key)", x->name,
                             line_of(map), g_keys[j].path);
    return PTTS_OK;
}

/* The event pre-pass: nesting depth and event count, without building anything. */
static int prescan(const char *text, size_t len, const char *name, ptts_error *e) {
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return ptts_fail(e, PTTS_E_NOMEM, "%s: cannot start the YAML parser", name);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = PTTS_OK, depth = 0;
    for (long events = 0;; events++) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = parser.error == YAML_MEMORY_ERROR
                     ? ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory parsing YAML", name)
                     : ptts_fail(e, PTTS_E_FORMAT, "%s:%lu:%lu: malformed YAML: %s%s%s", name,
                                 (unsigned long)parser.problem_mark.line + 1,
                                 (unsigned long)parser.problem_mark.column + 1,
                                 parser.problem ? parser.problem : "error",
                                 parser.context ? " " : "", parser.context ? parser.context : "");
            break;
        }
        yaml_event_type_t t = ev.type;
        unsigned long line = (unsigned long)ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) depth++;
        if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) depth--;
        if (depth > MAX_DEPTH) {
            rc = ptts_fail(e, PTTS_E_FORMAT, "%s:%lu: nested deeper than %d levels", name, line,
                           MAX_DEPTH);
            break;
        }
        if (events > MAX_EVENTS) {
            rc = ptts_fail(e, PTTS_E_FORMAT, "%s: more than %d YAML events: not a model config",
                           name, MAX_EVENTS);
            break;
        }
        if (t == YAML_STREAM_END_EVENT) break;
    }
    yaml_parser_delete(&parser);
    return rc;
}

static int check_config(ctx *x) {
    ptts_config *c = x->c;
    if ((c->flow_lm_weights_path == NULL) != (c->mimi_weights_path == NULL))
        return ptts_fail(x->e, PTTS_E_FORMAT,
                         "%s: flow_lm.weights_path and mimi.weights_path must be given together",
                         x->name);
    if (c->mimi_inner_dim < 0) c->mimi_inner_dim = c->seanet_dimension;
    return PTTS_OK;
}

int ptts_config_load_memory(ptts_config *c, const char *text, size_t len, const char *name,
                            const char *base_dir, ptts_error *e) {
    if (!c || (!text && len))
        return ptts_fail(e, PTTS_E_INVALID, "ptts_config_load_memory: NULL argument");
    ptts_config_init(c);
    if (!name) name = "<config>";
    if (!text) text = "";
    if (len > CONFIG_MAX_BYTES)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: %zu bytes is too large for a configuration", name,
                         len);
    int rc = prescan(text, len, name, e);
    if (rc) return rc;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return ptts_fail(e, PTTS_E_NOMEM, "%s: cannot start the YAML parser", name);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = parser.error == YAML_MEMORY_ERROR
                 ? ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory parsing YAML", name)
                 : ptts_fail(e, PTTS_E_FORMAT, "%s:%lu:%lu: malformed YAML: %s", name,
                             (unsigned long)parser.problem_mark.line + 1,
                             (unsigned long)parser.problem_mark.column + 1,
                             parser.problem ? parser.problem : "error");
        yaml_parser_delete(&parser);
        return rc;
    }
    yaml_parser_delete(&parser);

    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        rc = ptts_fail(e, PTTS_E_FORMAT, "%s: empty document, expected a mapping", name);
    } else if (root->type != YAML_MAPPING_NODE) {
        rc = ptts_fail(e, PTTS_E_FORMAT, "%s:%lu: expected a mapping at the top level", name,
                       line_of(root));
    } else {
        ctx x = {.doc = &doc, .name = name, .base_dir = base_dir, .c = c, .e = e};
        yaml_node_t *map = root;
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
             p++) { /* the fixtures' manifest */
            yaml_node_t *k = yaml_document_get_node(&doc, p->key);
            yaml_node_t *v = yaml_document_get_node(&doc, p->value);
            if (k && v && k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), "config") &&
                v->type == YAML_MAPPING_NODE)
                map = v;
        }
        rc = walk(&x, map, "");
        if (!rc) rc = check_config(&x);
    }
    yaml_document_delete(&doc);
    if (rc) {
        ptts_config_free(c);
        ptts_config_init(c);
    }
    return rc;
}

int ptts_config_load_file(ptts_config *c, const char *path, const char *name, const char *base_dir,
                          ptts_error *e) {
    if (!c || !path) return ptts_fail(e, PTTS_E_INVALID, "ptts_config_load: NULL argument");
    ptts_config_init(c);
    if (!name) name = path;
    FILE *f = fopen(path, "rb");
    if (!f) return ptts_fail(e, PTTS_E_IO, "cannot open %s: %s", path, strerror(errno));
    char *buf = malloc(CONFIG_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory reading %s", name);
    }
    size_t len = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    int rc = PTTS_OK;
    if (bad)
        rc = ptts_fail(e, PTTS_E_IO, "cannot read %s", path);
    else
        rc = ptts_config_load_memory(c, buf, len, name, base_dir, e);
    free(buf);
    return rc;
}

int ptts_config_load(ptts_config *c, const char *path, ptts_error *e) {
    if (!c || !path) return ptts_fail(e, PTTS_E_INVALID, "ptts_config_load: NULL argument");
    ptts_config_init(c);
    /* The folder of the file: everything up to its last '/' (none: relative to the current
     * folder, which is what the path already is). */
    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    if (slash) {
        size_t dl = slash == path ? 1 : (size_t)(slash - path);
        if (!(dir = malloc(dl + 1))) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        memcpy(dir, path, dl);
        dir[dl] = '\0';
    }
    int rc = ptts_config_load_file(c, path, path, dir, e);
    free(dir);
    return rc;
}
