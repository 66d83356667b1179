/* cli.c - shared option parsing for the subcommands (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

const char *cli_program = "pocket-tts";

const char *cli_model_help =
    "model (default: the english model, downloaded from Hugging Face on first use):\n"
    "  --language L           a published model: english, english_2026-01, english_2026-04,\n"
    "                         english_2026-09, english_drifting_26-09, french, french_24l,\n"
    "                         german, german_24l, italian, italian_24l, portuguese,\n"
    "                         portuguese_24l, spanish, spanish_24l, dutch, dutch_24l\n"
    "  --config FILE          the reference's YAML config (weights_path, tokenizer_path, rules)\n"
    "  --weights FILE         model.safetensors (overrides the config)\n"
    "  --tokenizer FILE       tokenizer.model (overrides the config)\n"
    "  --precision P          backbone weights: f32 (default, parity), bf16, int8\n"
    "  --quantize             same as --precision int8 (the reference's flag)\n"
    "  --threads N            CPU threads (default: all cores)\n"
    "  --backend B            auto (default: the GPU when a discrete one has Vulkan, else\n"
    "                         the CPU), cpu, vulkan, vulkan-codec (the codec alone on the GPU)\n"
    "  --device D             the Vulkan device: its number or a part of its name, as\n"
    "                         `pocket-tts devices` lists them (default: a discrete GPU first;\n"
    "                         PTTS_VK_DEVICE); with --backend auto it asks for that GPU\n"
    "  --overlap M            CPU: codec of frame t next to the backbone of t+1: auto\n"
    "                         (default: where it pays, see ptts.h), on, off\n";

const char *cli_gen_help =
    "generation:\n"
    "  --temperature T        noise variance (default: the config's, 0.3; 0 = deterministic)\n"
    "  --sampler-decode-steps N  sampler steps per frame (default 1)\n"
    "  --noise-clamp C        truncate the noise to [-C, C] (default: none)\n"
    "  --eos-threshold X      EOS logit threshold (default -4.0)\n"
    "  --frames-after-eos N   frames after EOS (default: the model's, else from the text)\n"
    "  --max-tokens N         tokens per text chunk (default 50)\n"
    "  --seed N               reproducible noise (default: random)\n"
    "  --no-markup            speak [pause] and <tags> as written (default: [pause],\n"
    "                         [pause:1.5], <break time=\"500ms\"/> and SSML are read)\n"
    "  --sentence-silence S   seconds of silence between chunks (default 0)\n";

int cli_is(const char *arg, const char *name) {
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

const char *cli_value(int argc, char **argv, int *i) {
    const char *eq = strchr(argv[*i], '=');
    if (eq && argv[*i][0] == '-' && argv[*i][1] == '-') return eq + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: option %s needs a value\n", cli_program, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s expects an integer in [%ld, %ld], got '%s'\n", cli_program, opt, lo,
                hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_float(const char *opt, const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "%s: %s expects a number in [%g, %g], got '%s'\n", cli_program, opt, lo, hi,
                s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_model_option(cli_model_args *a, int argc, char **argv, int *i) {
    const char *arg = argv[*i], *v;
    long n;
    if (cli_is(arg, "--language")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        if (!ptts_language_find(v)) {
            fprintf(stderr, "%s: unknown language '%s'; languages:", cli_program, v);
            for (int k = 0; k < ptts_language_count(); k++)
                fprintf(stderr, " %s", ptts_language_at(k)->name);
            fputc('\n', stderr);
            return -1;
        }
        a->mo.language = v;
    } else if (cli_is(arg, "--config")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        a->mo.config_path = v;
    } else if (cli_is(arg, "--weights")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        a->mo.weights_path = v;
    } else if (cli_is(arg, "--tokenizer")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        a->mo.tokenizer_path = v;
    } else if (cli_is(arg, "--quantize")) {
        a->mo.precision = PTTS_PRECISION_INT8;
    } else if (cli_is(arg, "--precision")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        if (!strcmp(v, "f32") || !strcmp(v, "float32"))
            a->mo.precision = PTTS_PRECISION_F32;
        else if (!strcmp(v, "bf16"))
            a->mo.precision = PTTS_PRECISION_BF16;
        else if (!strcmp(v, "int8"))
            a->mo.precision = PTTS_PRECISION_INT8;
        else {
            fprintf(stderr, "%s: --precision is f32, bf16 or int8, got '%s'\n", cli_program, v);
            return -1;
        }
    } else if (cli_is(arg, "--threads")) {
        if (!(v = cli_value(argc, argv, i)) || cli_parse_int(arg, v, 0, 256, &n)) return -1;
        a->mo.threads = (int)n;
    } else if (cli_is(arg, "--backend")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        if (!strcmp(v, "auto"))
            a->mo.backend = PTTS_BACKEND_AUTO;
        else if (!strcmp(v, "cpu"))
            a->mo.backend = PTTS_BACKEND_CPU;
        else if (!strcmp(v, "vulkan"))
            a->mo.backend = PTTS_BACKEND_VULKAN;
        else if (!strcmp(v, "vulkan-codec"))
            a->mo.backend = PTTS_BACKEND_VULKAN_CODEC;
        else {
            fprintf(stderr, "%s: --backend is auto, cpu, vulkan or vulkan-codec, got '%s'\n",
                    cli_program, v);
            return -1;
        }
    } else if (cli_is(arg, "--device")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        if (!*v) {
            fprintf(stderr, "%s: --device needs a device number or name\n", cli_program);
            return -1;
        }
        a->mo.device = v;
    } else if (cli_is(arg, "--overlap")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        if (!strcmp(v, "auto"))
            a->mo.overlap = PTTS_OVERLAP_AUTO;
        else if (!strcmp(v, "on"))
            a->mo.overlap = PTTS_OVERLAP_ON;
        else if (!strcmp(v, "off"))
            a->mo.overlap = PTTS_OVERLAP_OFF;
        else {
            fprintf(stderr, "%s: --overlap is auto, on or off, got '%s'\n", cli_program, v);
            return -1;
        }
    } else {
        return 0;
    }
    return 1;
}

int cli_gen_option(ptts_gen_options *o, int argc, char **argv, int *i) {
    const char *arg = argv[*i], *v;
    long n;
    double x;
    if (cli_is(arg, "--temperature")) {
        if (!(v = cli_value(argc, argv, i)) || cli_parse_float(arg, v, 0, 100, &x)) return -1;
        o->temperature = (float)x;
        o->temperature_set = 1;
    } else if (cli_is(arg, "--sampler-decode-steps") || cli_is(arg, "--lsd-decode-steps")) {
        /* the hidden, deprecated --lsd-decode-steps overrides --sampler-decode-steps in
         * whatever order they come (the reference's rule); one command line per process */
        static int lsd_given;
        const int lsd = cli_is(arg, "--lsd-decode-steps");
        if (!(v = cli_value(argc, argv, i)) || cli_parse_int(arg, v, 1, 1000, &n)) return -1;
        if (lsd || !lsd_given) o->sampler_steps = (int)n;
        lsd_given |= lsd;
    } else if (cli_is(arg, "--noise-clamp")) {
        if (!(v = cli_value(argc, argv, i)) || cli_parse_float(arg, v, 0, 1e6, &x)) return -1;
        o->noise_clamp = (float)x;
    } else if (cli_is(arg, "--eos-threshold")) {
        if (!(v = cli_value(argc, argv, i)) || cli_parse_float(arg, v, -1e30, 1e30, &x)) return -1;
        o->eos_threshold = (float)x;
        o->eos_threshold_set = 1;
    } else if (cli_is(arg, "--frames-after-eos")) {
        if (!(v = cli_value(argc, argv, i)) || cli_parse_int(arg, v, 0, 100000, &n)) return -1;
        o->frames_after_eos = (int)n;
        o->frames_after_eos_set = 1;
    } else if (cli_is(arg, "--max-tokens")) {
        if (!(v = cli_value(argc, argv, i)) || cli_parse_int(arg, v, 1, 100000, &n)) return -1;
        o->max_tokens = (int)n;
    } else if (cli_is(arg, "--seed")) {
        if (!(v = cli_value(argc, argv, i))) return -1;
        char *end;
        errno = 0;
        unsigned long long s = strtoull(v, &end, 0);
        if (errno || end == v || *end) {
            fprintf(stderr, "%s: --seed expects a non-negative integer, got '%s'\n", cli_program,
                    v);
            return -1;
        }
        o->seed = s;
        o->seed_set = 1;
    } else if (!strcmp(arg, "--no-markup")) {
        o->markup = PTTS_MARKUP_OFF;
    } else if (cli_is(arg, "--sentence-silence")) {
        if (!(v = cli_value(argc, argv, i)) || cli_parse_float(arg, v, 0, 10, &x)) return -1;
        o->sentence_silence = (float)x;
    } else {
        return 0;
    }
    return 1;
}

void cli_log_to_stderr(void *user, int level, const char *msg) {
    tool_log(user ? *(const int *)user : 0, level, "%s", msg);
}

/* A download progress bar on a terminal; elsewhere one line per completed download. */
static int cli_progress(void *user, const char *name, int64_t done, int64_t total) {
    (void)user;
    double mb = 1e-6 * (double)done;
    if (!isatty(2)) {
        if (done == total) fprintf(stderr, "%s: downloaded %s (%.1f MB)\n", cli_program, name, mb);
        return 0;
    }
    if (total > 0) {
        int pct = (int)(100.0 * (double)done / (double)total);
        char bar[31];
        int full = pct * 30 / 100;
        for (int k = 0; k < 30; k++)
            bar[k] = k < full ? '#' : '.';
        bar[30] = 0;
        fprintf(stderr, "\r\033[Kdownloading %s [%s] %3d%% %.1f/%.1f MB", name, bar, pct, mb,
                1e-6 * (double)total);
    } else {
        fprintf(stderr, "\r\033[Kdownloading %s %.1f MB", name, mb);
    }
    if (done == total) fputc('\n', stderr);
    return 0;
}

void cli_show_progress(int quiet) { ptts_set_progress_callback(quiet ? NULL : cli_progress, NULL); }

ptts_model *cli_load_model(const cli_model_args *a, int quiet) {
    cli_show_progress(quiet);
    ptts_model *m = NULL;
    ptts_error e = {0};
    if (ptts_model_load(&m, &a->mo, &e)) {
        fprintf(stderr, "%s: %s\n", cli_program, e.msg);
        return NULL;
    }
    return m;
}

char *cli_read_all(FILE *f, size_t limit, size_t *len) {
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= limit + 2) {
                free(buf);
                return NULL;
            }
            size_t nc = cap * 2 > limit + 2 ? limit + 2 : cap * 2;
            char *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    if (n > limit) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}
