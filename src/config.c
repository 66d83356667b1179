/*
 * config.c - the reference's YAML model configuration (config.h), read with libyaml.
 *
 * Why it is built this way:
 * - libyaml's document loader gives a node tree with the line of every node, so a wrong-typed
 *   key can be reported as "file:line"; aliases stay references to one node (no expansion), and
 *   only the known paths are visited, so hostile documents cost no more than their size.
 * - JSON is YAML (flow style), so the fixtures' manifest.json goes through the same parser; when
 *   the root mapping has a "config" mapping (the manifest), that mapping is the configuration.
 * - Scalars are typed the way PyYAML (the reference's loader) resolves plain scalars: null is
 *   "", "~", "null"/"Null"/"NULL"; booleans are true/false/yes/no/on/off in lower, Capitalized or
 *   UPPER case; integers are decimal. A quoted scalar is always a string, so `"64"` for an
 *   integer key is a type error like in the reference. A null value means "not given".
 * - For a duplicated key the last value wins, as in PyYAML.
 * - Relative paths are joined to the folder of the config file ("dir/rel", no lexical clean-up,
 *   which would be wrong across symbolic links); absolute paths and URLs ("scheme://...", e.g.
 *   hf://, http://, https://) are kept as written.
 * - ptts_config_load* starts from ptts_config_init and, on failure, leaves the config freed and
 *   re-initialized, so the caller frees in one place either way.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define CONFIG_MAX_BYTES ((size_t)64 << 20)

typedef struct {
    yaml_document_t *doc;
    const char *name;     /* the file name used in messages */
    const char *base_dir; /* NULL: relative paths kept as is */
    ptts_error *e;
} ctx;

void ptts_config_init(ptts_config *c) {
    memset(c, 0, sizeof *c);
    c->recommended_frames_after_eos = -1;
    c->insert_bos_before_voice = -1;
}

void ptts_config_free(ptts_config *c) {
    if (!c) return;
    free(c->weights_path);
    free(c->weights_path_without_voice_cloning);
    free(c->tokenizer_path);
    c->weights_path = c->weights_path_without_voice_cloning = c->tokenizer_path = NULL;
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

/* The value of `key` in mapping `map` (the last one when repeated), NULL when absent. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key) {
    yaml_node_t *found = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), key))
            found = yaml_document_get_node(doc, p->value);
    }
    return found;
}

static int type_error(ctx *x, const yaml_node_t *n, const char *path, const char *want) {
    if (n->type == YAML_SCALAR_NODE)
        return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: key '%s': expected %s, got %s'%.60s'",
                         x->name, line_of(n), path, want, is_plain(n) ? "" : "the quoted string ",
                         scalar(n));
    return ptts_fail(x->e, PTTS_E_FORMAT, "%s:%lu: key '%s': expected %s, got a %s", x->name,
                     line_of(n), path, want, n->type == YAML_MAPPING_NODE ? "mapping" : "sequence");
}

/* A sub-mapping (NULL when absent or null); *rc set on a type error. */
static yaml_node_t *get_map(ctx *x, yaml_node_t *map, const char *key, const char *path, int *rc) {
    if (!map) return NULL;
    yaml_node_t *n = map_get(x->doc, map, key);
    if (!n || is_null(n)) return NULL;
    if (n->type != YAML_MAPPING_NODE) {
        *rc = type_error(x, n, path, "a mapping");
        return NULL;
    }
    return n;
}

static int parse_int(const yaml_node_t *n, int *out) {
    if (!is_plain(n)) return -1;
    const char *s = scalar(n);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < -2147483647L - 1 || v > 2147483647L) return -1;
    /* strtol accepts leading spaces, which a plain scalar cannot have anyway. */
    *out = (int)v;
    return 0;
}

static int get_int(ctx *x, yaml_node_t *map, const char *key, const char *path, int *out) {
    if (!map) return PTTS_OK;
    yaml_node_t *n = map_get(x->doc, map, key);
    if (!n || is_null(n)) return PTTS_OK;
    if (parse_int(n, out)) return type_error(x, n, path, "an integer");
    return PTTS_OK;
}

static int get_float(ctx *x, yaml_node_t *map, const char *key, const char *path, float *out) {
    if (!map) return PTTS_OK;
    yaml_node_t *n = map_get(x->doc, map, key);
    if (!n || is_null(n)) return PTTS_OK;
    if (!is_plain(n)) return type_error(x, n, path, "a number");
    const char *s = scalar(n);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || fabs(v) > 3.4e38)
        return type_error(x, n, path, "a number");
    *out = (float)v;
    return PTTS_OK;
}

static int get_bool(ctx *x, yaml_node_t *map, const char *key, const char *path, int *out) {
    static const char *yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char *no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    if (!map) return PTTS_OK;
    yaml_node_t *n = map_get(x->doc, map, key);
    if (!n || is_null(n)) return PTTS_OK;
    if (is_plain(n)) {
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
            if (!strcmp(scalar(n), yes[i])) {
                *out = 1;
                return PTTS_OK;
            }
            if (!strcmp(scalar(n), no[i])) {
                *out = 0;
                return PTTS_OK;
            }
        }
    }
    return type_error(x, n, path, "a boolean");
}

static int is_url(const char *s) {
    const char *p = s;
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) return 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '+' || *p == '-' || *p == '.')
        p++;
    return p[0] == ':' && p[1] == '/' && p[2] == '/';
}

/* A path string (NULL when absent or null), resolved against base_dir when relative. */
static int get_path(ctx *x, yaml_node_t *map, const char *key, const char *path, char **out) {
    if (!map) return PTTS_OK;
    yaml_node_t *n = map_get(x->doc, map, key);
    if (!n || is_null(n)) return PTTS_OK;
    if (n->type != YAML_SCALAR_NODE) return type_error(x, n, path, "a path");
    const char *s = scalar(n);
    if (!*s) return type_error(x, n, path, "a path");
    char *v;
    if (x->base_dir && *x->base_dir && s[0] != '/' && !is_url(s)) {
        size_t a = strlen(x->base_dir), b = strlen(s);
        int slash = x->base_dir[a - 1] != '/';
        v = malloc(a + (size_t)slash + b + 1);
        if (v) {
            memcpy(v, x->base_dir, a);
            if (slash) v[a] = '/';
            memcpy(v + a + slash, s, b + 1);
        }
    } else {
        v = ptts_strdup(s);
    }
    if (!v) return ptts_fail(x->e, PTTS_E_NOMEM, "out of memory reading %s", x->name);
    free(*out);
    *out = v;
    return PTTS_OK;
}

static int get_ratios(ctx *x, yaml_node_t *map, const char *key, const char *path, int out[3]) {
    if (!map) return PTTS_OK;
    yaml_node_t *n = map_get(x->doc, map, key);
    if (!n || is_null(n)) return PTTS_OK;
    if (n->type != YAML_SEQUENCE_NODE ||
        n->data.sequence.items.top - n->data.sequence.items.start != 3)
        return type_error(x, n, path, "a list of 3 integers");
    int v[3];
    for (int i = 0; i < 3; i++) {
        yaml_node_t *it = yaml_document_get_node(x->doc, n->data.sequence.items.start[i]);
        if (!it || parse_int(it, &v[i]))
            return type_error(x, it ? it : n, path, "a list of 3 integers");
    }
    memcpy(out, v, sizeof v);
    return PTTS_OK;
}

static int read_config(ctx *x, yaml_node_t *root, ptts_config *c) {
    int rc = PTTS_OK, ignored_int = 0;
    float ignored_float = 0;
    yaml_node_t *inner = map_get(x->doc, root, "config");
    if (inner && inner->type == YAML_MAPPING_NODE) root = inner;

    if ((rc = get_path(x, root, "weights_path", "weights_path", &c->weights_path)) ||
        (rc = get_path(x, root, "weights_path_without_voice_cloning",
                       "weights_path_without_voice_cloning",
                       &c->weights_path_without_voice_cloning)) ||
        (rc = get_bool(x, root, "pad_with_spaces_for_short_inputs",
                       "pad_with_spaces_for_short_inputs", &c->pad_with_spaces)) ||
        (rc = get_bool(x, root, "remove_semicolons", "remove_semicolons", &c->remove_semicolons)) ||
        (rc = get_int(x, root, "model_recommended_frames_after_eos",
                      "model_recommended_frames_after_eos", &c->recommended_frames_after_eos)))
        return rc;

    yaml_node_t *flow_lm = get_map(x, root, "flow_lm", "flow_lm", &rc);
    if (rc) return rc;
    yaml_node_t *lut = get_map(x, flow_lm, "lookup_table", "flow_lm.lookup_table", &rc);
    if (rc) return rc;
    yaml_node_t *ftr = get_map(x, flow_lm, "transformer", "flow_lm.transformer", &rc);
    if (rc) return rc;
    yaml_node_t *flow = get_map(x, flow_lm, "flow", "flow_lm.flow", &rc);
    if (rc) return rc;
    if ((rc = get_bool(x, flow_lm, "insert_bos_before_voice", "flow_lm.insert_bos_before_voice",
                       &c->insert_bos_before_voice)) ||
        (rc = get_path(x, lut, "tokenizer_path", "flow_lm.lookup_table.tokenizer_path",
                       &c->tokenizer_path)) ||
        (rc = get_int(x, lut, "n_bins", "flow_lm.lookup_table.n_bins", &c->n_bins)) ||
        (rc = get_int(x, lut, "dim", "flow_lm.lookup_table.dim", &c->lookup_dim)) ||
        (rc = get_int(x, ftr, "d_model", "flow_lm.transformer.d_model", &c->d_model)) ||
        (rc = get_int(x, ftr, "num_heads", "flow_lm.transformer.num_heads", &c->num_heads)) ||
        (rc = get_int(x, ftr, "num_layers", "flow_lm.transformer.num_layers", &c->num_layers)) ||
        (rc = get_int(x, ftr, "hidden_scale", "flow_lm.transformer.hidden_scale",
                      &c->hidden_scale)) ||
        (rc = get_float(x, ftr, "max_period", "flow_lm.transformer.max_period", &c->max_period)) ||
        (rc = get_int(x, flow, "depth", "flow_lm.flow.depth", &c->flow_depth)) ||
        (rc = get_int(x, flow, "dim", "flow_lm.flow.dim", &c->flow_dim)))
        return rc;

    yaml_node_t *mimi = get_map(x, root, "mimi", "mimi", &rc);
    if (rc) return rc;
    yaml_node_t *seanet = get_map(x, mimi, "seanet", "mimi.seanet", &rc);
    if (rc) return rc;
    yaml_node_t *mtr = get_map(x, mimi, "transformer", "mimi.transformer", &rc);
    if (rc) return rc;
    yaml_node_t *quant = get_map(x, mimi, "quantizer", "mimi.quantizer", &rc);
    if (rc) return rc;
    /* sample_rate, frame_rate and quantizer.output_dimension have no field (the model fixes
     * them), but a wrong type there is still a broken file. */
    if ((rc = get_int(x, mimi, "inner_dim", "mimi.inner_dim", &c->mimi_inner_dim)) ||
        (rc = get_int(x, mimi, "outer_dim", "mimi.outer_dim", &c->mimi_outer_dim)) ||
        (rc = get_int(x, mimi, "sample_rate", "mimi.sample_rate", &ignored_int)) ||
        (rc = get_float(x, mimi, "frame_rate", "mimi.frame_rate", &ignored_float)) ||
        (rc = get_int(x, seanet, "n_filters", "mimi.seanet.n_filters", &c->seanet_n_filters)) ||
        (rc = get_int(x, seanet, "dimension", "mimi.seanet.dimension", &c->seanet_dimension)) ||
        (rc = get_ratios(x, seanet, "ratios", "mimi.seanet.ratios", c->seanet_ratios)) ||
        (rc = get_int(x, mtr, "d_model", "mimi.transformer.d_model", &c->codec_d_model)) ||
        (rc = get_int(x, mtr, "num_heads", "mimi.transformer.num_heads", &c->codec_num_heads)) ||
        (rc = get_int(x, mtr, "num_layers", "mimi.transformer.num_layers", &c->codec_num_layers)) ||
        (rc = get_int(x, mtr, "dim_feedforward", "mimi.transformer.dim_feedforward",
                      &c->codec_ffn)) ||
        (rc = get_int(x, mtr, "context", "mimi.transformer.context", &c->codec_context)) ||
        (rc =
             get_int(x, quant, "dimension", "mimi.quantizer.dimension", &c->quantizer_dimension)) ||
        (rc = get_int(x, quant, "output_dimension", "mimi.quantizer.output_dimension",
                      &ignored_int)))
        return rc;
    return PTTS_OK;
}

int ptts_config_load_memory(ptts_config *c, const char *text, size_t len, const char *name,
                            const char *base_dir, ptts_error *e) {
    if (!c || (!text && len))
        return ptts_fail(e, PTTS_E_INVALID, "ptts_config_load_memory: NULL argument");
    ptts_config_init(c);
    if (!name) name = "<config>";
    if (len > CONFIG_MAX_BYTES)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: %zu bytes is too large for a configuration", name,
                         len);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return ptts_fail(e, PTTS_E_NOMEM, "%s: cannot start the YAML parser", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), len);
    if (!yaml_parser_load(&parser, &doc)) {
        int rc;
        if (parser.error == YAML_MEMORY_ERROR)
            rc = ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory parsing YAML", name);
        else
            rc = ptts_fail(e, PTTS_E_FORMAT, "%s:%lu:%lu: malformed YAML: %s%s%s", name,
                           (unsigned long)parser.problem_mark.line + 1,
                           (unsigned long)parser.problem_mark.column + 1,
                           parser.problem ? parser.problem : "error", parser.context ? " " : "",
                           parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        return rc;
    }
    yaml_parser_delete(&parser);

    int rc = PTTS_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        rc = ptts_fail(e, PTTS_E_FORMAT, "%s: empty document, expected a mapping", name);
    else if (root->type != YAML_MAPPING_NODE)
        rc = ptts_fail(e, PTTS_E_FORMAT, "%s:%lu: expected a mapping at the top level", name,
                       line_of(root));
    else {
        ctx x = {&doc, name, base_dir, e};
        rc = read_config(&x, root, c);
    }
    yaml_document_delete(&doc);
    if (rc) {
        ptts_config_free(c);
        ptts_config_init(c);
    }
    return rc;
}

int ptts_config_load(ptts_config *c, const char *path, ptts_error *e) {
    if (!c || !path) return ptts_fail(e, PTTS_E_INVALID, "ptts_config_load: NULL argument");
    ptts_config_init(c);
    FILE *f = fopen(path, "rb");
    if (!f) return ptts_fail(e, PTTS_E_IO, "cannot open %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = PTTS_OK;
    for (;;) {
        if (len == cap) {
            if (cap >= CONFIG_MAX_BYTES) {
                rc = ptts_fail(e, PTTS_E_FORMAT, "%s: too large for a configuration", path);
                break;
            }
            size_t ncap = cap ? cap * 2 : 4096;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory reading %s", path);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) rc = ptts_fail(e, PTTS_E_IO, "cannot read %s", path);
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    /* The folder of the file: everything up to its last '/' (none: relative to the current
     * folder, which is what the path already is). */
    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    if (slash) {
        size_t dl = slash == path ? 1 : (size_t)(slash - path);
        dir = malloc(dl + 1);
        if (!dir) {
            free(buf);
            return ptts_fail(e, PTTS_E_NOMEM, "out of memory reading %s", path);
        }
        memcpy(dir, path, dl);
        dir[dl] = '\0';
    }
    rc = ptts_config_load_memory(c, buf, len, path, dir, e);
    free(dir);
    free(buf);
    return rc;
}
