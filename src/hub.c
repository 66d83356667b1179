/*
 * hub.c - the published Pocket TTS models (MODEL.md sections 7 and 10): the 19 language
 * configs with their pinned files, the 27 preset voices, the packaged config of each language,
 * the gated-then-open choice of weights and configs named by URL, resolved through download.c.
 *
 * Revisions follow MODEL.md 10.8: all files of one config come from one epoch (the 3.3.0
 * wheel's where known, main 41cbc84's otherwise), so the voices revision is per config. Where
 * no source shows a file the table holds NULL and nothing is guessed.
 */
#include "hub.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "download.h"
#include "hf_cache.h"

/* MODEL.md 10.6 legend: OPEN = kyutai/pocket-tts-without-voice-cloning */
#define O_D29DB797 "d29db7978e464fb90cb3359ee0c69a273b9142cc" /* english_2026-01/04 */
#define O_E81D79E8 "e81d79e8194ad4c7ce879c87a4258ef20cbf2487" /* english_2026-04_24l */
#define O_E7205B6E "e7205b6ee50e654a5ea19f0e9df2b0813b05e921" /* english, english_2026-09* */
#define O_00EAC05E "00eac05ed3d16bdc3f6b5d598874019c34a89214" /* English tokenizer.json */
#define O_8843DB76 "8843db76457a91db32077edf8dfcd1c0e3e755fd" /* french; French tokenizers */
#define O_4E1E0A3E "4e1e0a3e611c51c0b4ed8174fc10f32a54644303" /* de/it/pt/es/nl; wheel voices */
#define O_1E08E6A2 "1e08e6a23401048648a9fdcfde2f89348215c2a7" /* main's retrain and voices */
#define O_A5CE31F3 "a5ce31f3eba7a3b0cb9c24ba2015b098f278eaae" /* english_drifting_26-09 */
/* GATED = kyutai/pocket-tts */
#define G_39592FF2 "39592ff23c9ef80098bb74895d104c26275fe2c9" /* english_2026-01 */
#define G_19F95FE2 "19f95fe2df36e79fbd9f10008595cc4c977a0fcc" /* english_2026-04 */
#define G_49252265 "492522650173a0653b7575cdc25ae09810e5d741" /* english_2026-04_24l */
#define G_983151F1 "983151f13aaeab1b13c1e5e3c2c383d49a9edf3f" /* english, english_2026-09* */
#define G_2DD944B0 "2dd944b099d06bb9edbd221fef138685711d9bf0" /* de/it/pt/es/nl wheel epoch */
#define G_3E82814A "3e82814a68665eec246ff649b14c71331f955c06" /* main's retrain */
#define G_75CFE24E "75cfe24e3142233bb81887fed3482e9652bb4a6e" /* english_drifting_26-09 */

#define TEXT_EN                                                                                    \
    "Hello world. I am Kyutai's Pocket TTS. I'm fast enough to run on small CPUs. I hope "         \
    "you'll like me."
#define TEXT_DE                                                                                    \
    "Hallo Welt. Ich bin Pocket TTS von Kyutai. Ich bin schnell genug, um auch auf kleinen "       \
    "CPUs zu laufen. Ich hoffe, ich gefalle dir."
#define TEXT_IT                                                                                    \
    "Ciao mondo. Sono il Pocket TTS di Kyutai. Sono abbastanza veloce da funzionare su "           \
    "piccole CPU. Spero che ti piacer\xc3\xb2."
#define TEXT_PT                                                                                    \
    "Ol\xc3\xa1 mundo. Eu sou o Pocket TTS da Kyutai. Sou r\xc3\xa1pido o suficiente para "        \
    "rodar em CPUs pequenas. Espero que voc\xc3\xaa goste de mim."
#define TEXT_ES                                                                                    \
    "Hola mundo. Soy el Pocket TTS de Kyutai. Soy lo suficientemente r\xc3\xa1pido para "          \
    "funcionar en peque\xc3\xb1"                                                                   \
    "as CPU. Espero que te guste."
#define TEXT_FR                                                                                    \
    "Bonjour le monde. Je suis le TTS de poche de Kyutai. Je suis assez rapide pour "              \
    "fonctionner sur de petits CPU. J'esp\xc3\xa8re que vous m'aimerez."
#define TEXT_NL                                                                                    \
    "Hallo wereld. Ik ben Pocket TTS van Kyutai. Ik ben snel genoeg om op kleine CPU's te "        \
    "draaien. Ik hoop dat je me leuk vindt."

#define EN(name, layers, sampler, bos, inner, pad, voice, gated, open, tok, voices, listed)        \
    {                                                                                              \
        name, layers, sampler, bos, inner, pad, 0, "", voice, TEXT_EN, gated, open, tok,           \
            O_00EAC05E, voices, listed                                                             \
    }
#define LANG(name, layers, semi, rep, voice, text, gated, open, tokrev, voices)                    \
    {                                                                                              \
        name, layers, "lsd", 1, 32, 0, semi, rep, voice, text, gated, open,                        \
            "languages/" name "/tokenizer.json", tokrev, voices, 1                                 \
    }
/* MODEL.md 10.3-10.6, in the order of 10.3. */
static const ptts_language g_languages[] = {
    EN("english", 6, "lsd", 1, 32, 0, "alba", G_983151F1, O_E7205B6E,
       "languages/english/tokenizer.json", O_4E1E0A3E, 1),
    EN("english_2026-01", 6, "lsd", 0, 512, 1, "alba", G_39592FF2, O_D29DB797, "tokenizer.json",
       O_4E1E0A3E, 1),
    EN("english_2026-04", 6, "lsd", 1, 32, 0, "alba", G_19F95FE2, O_D29DB797,
       "languages/english_2026-04/tokenizer.json", O_4E1E0A3E, 1),
    EN("english_2026-04_24l", 24, "lsd", 1, 32, 0, "alba", G_49252265, O_E81D79E8,
       "languages/english_2026-04_24l/tokenizer.json", O_4E1E0A3E, 0),
    EN("english_2026-09", 6, "lsd", 1, 32, 0, "alba", G_983151F1, O_E7205B6E,
       "languages/english_2026-09/tokenizer.json", O_4E1E0A3E, 1),
    EN("english_2026-09_24l", 24, "lsd", 1, 32, 0, "alba", G_983151F1, O_E7205B6E,
       "languages/english_2026-09_24l/tokenizer.json", O_4E1E0A3E, 0),
    EN("english_drifting_26-09", 6, "drifting", 1, 32, 0, "alba", G_75CFE24E, O_A5CE31F3,
       "languages/english_2026-09/tokenizer.json", O_1E08E6A2, 1),
    LANG("french", 6, 1, "A+FR", "estelle", TEXT_FR, NULL, O_8843DB76, O_8843DB76, O_4E1E0A3E),
    LANG("french_24l", 24, 1, "A+FR", "estelle", TEXT_FR, G_3E82814A, O_1E08E6A2, O_8843DB76,
         O_1E08E6A2),
    LANG("german", 6, 1, "A", "juergen", TEXT_DE, G_2DD944B0, O_4E1E0A3E, O_4E1E0A3E, O_4E1E0A3E),
    LANG("german_24l", 24, 1, "A", "juergen", TEXT_DE, G_2DD944B0, O_4E1E0A3E, O_4E1E0A3E,
         O_4E1E0A3E),
    LANG("italian", 6, 0, "A", "giovanni", TEXT_IT, G_2DD944B0, O_4E1E0A3E, O_4E1E0A3E, O_4E1E0A3E),
    LANG("italian_24l", 24, 0, "A", "giovanni", TEXT_IT, G_3E82814A, O_1E08E6A2, O_4E1E0A3E,
         O_1E08E6A2),
    LANG("portuguese", 6, 0, "A", "rafael", TEXT_PT, G_2DD944B0, O_4E1E0A3E, O_4E1E0A3E,
         O_4E1E0A3E),
    {"portuguese_24l", 24, "lsd", 1, 32, 0, 0, "A", "rafael", TEXT_PT, NULL, NULL, NULL, NULL, NULL,
     1},
    LANG("spanish", 6, 0, "A+ES", "lola", TEXT_ES, G_2DD944B0, O_4E1E0A3E, O_4E1E0A3E, O_4E1E0A3E),
    LANG("spanish_24l", 24, 0, "A+ES", "lola", TEXT_ES, G_2DD944B0, O_4E1E0A3E, O_4E1E0A3E,
         O_4E1E0A3E),
    LANG("dutch", 6, 0, "A", "daan", TEXT_NL, G_2DD944B0, O_4E1E0A3E, O_4E1E0A3E, O_4E1E0A3E),
    LANG("dutch_24l", 24, 0, "A", "daan", TEXT_NL, G_2DD944B0, O_4E1E0A3E, O_4E1E0A3E, O_4E1E0A3E),
};
#undef EN
#undef LANG
#define N_LANGUAGES ((int)(sizeof g_languages / sizeof g_languages[0]))

/* MODEL.md 7.4: every name with every language. */
static const char *const g_presets[] = {
    "alba",    "anna",    "azelma",         "bill_boerst", "caro_davy",   "charles", "cosette",
    "daan",    "eponine", "estelle",        "eve",         "fantine",     "george",  "giovanni",
    "jane",    "javert",  "jean",           "juergen",     "lola",        "marius",  "mary",
    "michael", "paul",    "peter_yearsley", "rafael",      "stuart_bell", "vera",
};
#define N_PRESETS ((int)(sizeof g_presets / sizeof g_presets[0]))

int ptts_language_count(void) { return N_LANGUAGES; }

const ptts_language *ptts_language_at(int i) {
    return i >= 0 && i < N_LANGUAGES ? &g_languages[i] : NULL;
}

const ptts_language *ptts_language_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < N_LANGUAGES; i++)
        if (!strcmp(name, g_languages[i].name)) return &g_languages[i];
    return NULL;
}

int ptts_preset_voice_count(const char *language) {
    return ptts_language_find(language) ? N_PRESETS : 0;
}

const char *ptts_preset_voice_name(const char *language, int k) {
    return ptts_language_find(language) && k >= 0 && k < N_PRESETS ? g_presets[k] : NULL;
}

static int is_preset(const char *voice) {
    for (int i = 0; i < N_PRESETS; i++)
        if (!strcmp(voice, g_presets[i])) return 1;
    return 0;
}

int ptts_preset_voice_url(const char *language, const char *voice, char *url, size_t cap) {
    const ptts_language *l = ptts_language_find(language ? language : "english");
    if (!l) return PTTS_E_INVALID;
    if (!voice || !is_preset(voice)) return PTTS_E_NOT_FOUND;
    if (!l->voices_revision) return PTTS_E_UNSUPPORTED;
    int n = snprintf(url, cap, "hf://" PTTS_OPEN_REPO "/languages/%s/embeddings/%s.safetensors@%s",
                     l->name, voice, l->voices_revision);
    return n < 0 || (size_t)n >= cap ? PTTS_E_INVALID : 0;
}

static int unknown_language(ptts_error *e, const char *name) {
    char list[512] = "";
    for (int i = 0; i < N_LANGUAGES; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, g_languages[i].name);
    }
    return ptts_fail(e, PTTS_E_INVALID, "unknown language '%s' (languages: %s)", name, list);
}

/* portuguese_24l: MODEL.md 10.6 note 9. */
static int unpinned(const ptts_language *l, ptts_error *e) {
    return ptts_fail(e, PTTS_E_UNSUPPORTED,
                     "%s: no source shows the files of its 3.3 release, and they are not "
                     "guessed; give them explicitly (--config, or --weights and --tokenizer as "
                     "hf://" PTTS_OPEN_REPO "/languages/%s/...@REVISION)",
                     l->name, l->name);
}

/* ---- packaged configs ----------------------------------------------------------------------- */

/* MODEL.md 10.5 as YAML flow-mapping entries (the French file holds them as UTF-8). */
#define REPLACE_A_QUOTES                                                                           \
    "\"\\\"\": \"\", \"\xe2\x80\x9c\": \"\", \"\xe2\x80\x9d\": \"\", \"\xe2\x80\x9e\": \"\", "     \
    "\"\xc2\xab\": \"\", \"\xc2\xbb\": \"\", \"\xe2\x80\x99\": \"'\", \"\xe2\x80\x98\": \"'\", "
#define REPLACE_FR "\":\": \",\", "
#define REPLACE_A_BRACKETS "\"(\": \"\", \")\": \"\", \"[\": \"\", \"]\": \"\""
#define REPLACE_ES ", \"\xc2\xa1\": \"\", \"\xc2\xbf\": \"\""

static const char *replace_yaml(const char *table) {
    if (!strcmp(table, "A")) return "{" REPLACE_A_QUOTES REPLACE_A_BRACKETS "}";
    if (!strcmp(table, "A+FR")) return "{" REPLACE_A_QUOTES REPLACE_FR REPLACE_A_BRACKETS "}";
    if (!strcmp(table, "A+ES")) return "{" REPLACE_A_QUOTES REPLACE_A_BRACKETS REPLACE_ES "}";
    return "{}";
}

/* The shipped configs' common architecture (MODEL.md 10.2); %s/%d fields per language. */
static const char g_packaged[] =
    "weights_path: %s\n"
    "weights_path_without_voice_cloning: %s\n"
    "pad_with_spaces_for_short_inputs: %s\n"
    "remove_semicolons: %s\n"
    "append_terminal_punctuation: true\n"
    "capitalize_first_letter: true\n"
    "replace_characters: %s\n"
    "model_recommended_frames_after_eos: null\n"
    "default_temperature: 0.3\n"
    "flow_lm:\n"
    "  dtype: float32\n"
    "  insert_bos_before_voice: %s\n"
    "  flow: {dim: 512, depth: 6, type: %s}\n"
    "  transformer: {hidden_scale: 4, max_period: 10000, d_model: 1024, num_heads: 16,"
    " num_layers: %d}\n"
    "  lookup_table: {dim: 1024, n_bins: 4000, tokenizer: tokenizers, tokenizer_path: %s}\n"
    "  weights_path: null\n"
    "mimi:\n"
    "  dtype: float32\n"
    "  sample_rate: 24000\n"
    "  channels: 1\n"
    "  frame_rate: 12.5\n"
    "  inner_dim: %d\n"
    "  outer_dim: 512\n"
    "  seanet: {dimension: 512, channels: 1, n_filters: 64, n_residual_layers: 1,"
    " ratios: [6, 5, 4], kernel_size: 7, residual_kernel_size: 3, last_kernel_size: 3,"
    " dilation_base: 2, pad_mode: constant, compress: 2}\n"
    "  transformer: {d_model: 512, input_dimension: 512, output_dimensions: [512],"
    " num_heads: 8, num_layers: 2, layer_scale: 0.01, context: 250, dim_feedforward: 2048}\n"
    "  quantizer: {dimension: 32, output_dimension: 512}\n"
    "  weights_path: null\n";

/* hf://REPO/PATH@REV in buf, or "null" when the revision is not known. */
static const char *pinned(char *buf, size_t cap, const char *repo, const char *path,
                          const char *rev) {
    if (!rev || !path) return "null";
    snprintf(buf, cap, "\"hf://%s/%s@%s\"", repo, path, rev);
    return buf;
}

int ptts_language_config(const ptts_language *l, ptts_config *c, ptts_error *e) {
    if (!l || !c) return ptts_fail(e, PTTS_E_INVALID, "ptts_language_config: NULL argument");
    char weights[128], gated[256], open[256], tok[256];
    snprintf(weights, sizeof weights, "languages/%s/model.safetensors", l->name);
    const char *t =
        pinned(tok, sizeof tok, PTTS_OPEN_REPO, l->tokenizer_path, l->tokenizer_revision);
    char yaml[4096];
    int n = snprintf(yaml, sizeof yaml, g_packaged,
                     pinned(gated, sizeof gated, PTTS_GATED_REPO, weights, l->gated_revision),
                     pinned(open, sizeof open, PTTS_OPEN_REPO, weights, l->open_revision),
                     l->pad_with_spaces ? "true" : "false", l->remove_semicolons ? "true" : "false",
                     replace_yaml(l->replace), l->insert_bos_before_voice ? "true" : "false",
                     l->sampler, l->layers, strcmp(t, "null") ? t : "unpinned", l->inner_dim);
    if (n < 0 || (size_t)n >= sizeof yaml)
        return ptts_fail(e, PTTS_E_INTERNAL, "%s: the packaged config does not fit", l->name);
    char name[96];
    snprintf(name, sizeof name, "<packaged %s.yaml>", l->name);
    int rc = ptts_config_load_memory(c, yaml, (size_t)n, name, NULL, e);
    if (!rc && !l->tokenizer_revision) {
        free(c->tokenizer_path);
        c->tokenizer_path = NULL;
    }
    return rc;
}

/* ---- fetching ------------------------------------------------------------------------------- */

static atomic_flag g_gated_said = ATOMIC_FLAG_INIT;

int ptts_hub_fetch_weights(char **path, const char *primary, const char *fallback,
                           int *used_primary, ptts_error *e) {
    int status = 0;
    ptts_error e1 = {0};
    if (used_primary) *used_primary = 0;
    int rc = ptts_download(path, primary, &status, &e1);
    if (!rc) {
        if (used_primary) *used_primary = 1;
        return 0;
    }
    if (!fallback || rc == PTTS_E_CANCELLED || rc == PTTS_E_IO || rc == PTTS_E_NOMEM ||
        rc == PTTS_E_INVALID) {
        if (e) *e = e1;
        return rc;
    }
    if (status == 401 || status == 403) {
        if (!atomic_flag_test_and_set(&g_gated_said))
            ptts_log(PTTS_LOG_INFO,
                     "using the weights without voice cloning: cloning a voice from audio needs "
                     "the gated weights; to get them, accept the licence at "
                     "https://huggingface.co/" PTTS_GATED_REPO
                     " and set HF_TOKEN to a token of that account (preset voices and "
                     "voice-state files work without)");
    } else if (!ptts_offline()) { /* offline, a missing gated file is the expected case */
        ptts_log(PTTS_LOG_INFO, "%s; using the weights without voice cloning", e1.msg);
    }
    return ptts_download(path, fallback, NULL, e);
}

static void tokenizer_url(const ptts_language *l, char *tok, size_t cap) {
    snprintf(tok, cap, "hf://" PTTS_OPEN_REPO "/%s@%s", l->tokenizer_path, l->tokenizer_revision);
}

int ptts_language_fetch_tokenizer(const char *language, char **tokenizer_path, ptts_error *e) {
    *tokenizer_path = NULL;
    const ptts_language *l = ptts_language_find(language);
    if (!l) return unknown_language(e, language ? language : "(null)");
    if (!l->tokenizer_revision) return unpinned(l, e);
    char tok[256];
    tokenizer_url(l, tok, sizeof tok);
    return ptts_download(tokenizer_path, tok, NULL, e);
}

int ptts_language_fetch(const char *language, char **weights_path, char **tokenizer_path,
                        int *has_cloning, ptts_error *e) {
    *weights_path = *tokenizer_path = NULL;
    if (has_cloning) *has_cloning = 0;
    const ptts_language *l = ptts_language_find(language);
    if (!l) return unknown_language(e, language ? language : "(null)");
    if (!l->open_revision || !l->tokenizer_revision) return unpinned(l, e);
    char gated[256], open[256], tok[256];
    snprintf(gated, sizeof gated, "hf://" PTTS_GATED_REPO "/languages/%s/model.safetensors@%s",
             l->name, l->gated_revision ? l->gated_revision : "");
    snprintf(open, sizeof open, "hf://" PTTS_OPEN_REPO "/languages/%s/model.safetensors@%s",
             l->name, l->open_revision);
    tokenizer_url(l, tok, sizeof tok);
    int rc;
    if (l->gated_revision) {
        rc = ptts_hub_fetch_weights(weights_path, gated, open, has_cloning, e);
    } else { /* french: MODEL.md 10.6 note 5, as the reference treats a refused gated file */
        ptts_log(PTTS_LOG_INFO,
                 "%s: the gated weights of this release are not confirmed; using the weights "
                 "without voice cloning",
                 l->name);
        rc = ptts_download(weights_path, open, NULL, e);
    }
    if (!rc) rc = ptts_download(tokenizer_path, tok, NULL, e);
    if (rc) {
        free(*weights_path);
        *weights_path = NULL;
    }
    return rc;
}

int ptts_voice_resolve(char **path, const char *language, const char *voice, ptts_error *e) {
    *path = NULL;
    if (!language) language = "english";
    if (!voice || !*voice) return ptts_fail(e, PTTS_E_INVALID, "empty voice");
    const ptts_language *l = ptts_language_find(language);
    if (!l) return unknown_language(e, language);
    if (is_preset(voice)) {
        if (!l->voices_revision) return unpinned(l, e);
        char url[512];
        int rc = ptts_preset_voice_url(l->name, voice, url, sizeof url);
        if (rc) return ptts_fail(e, rc, "voice %s: no URL for it", voice);
        int status = 0;
        rc = ptts_download(path, url, &status, e);
        if (rc == PTTS_E_NOT_FOUND && status == 404)
            return ptts_fail(e, rc, "the preset voice '%s' does not exist for %s (HTTP 404 for %s)",
                             voice, l->name, url);
        return rc;
    }
    if (ptts_is_url(voice) || access(voice, F_OK) == 0) return ptts_download(path, voice, NULL, e);
    char list[1024] = "";
    for (int i = 0; i < N_PRESETS; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, g_presets[i]);
    }
    return ptts_fail(e, PTTS_E_NOT_FOUND,
                     "voice '%s': no such file, and not a preset voice (presets: %s)", voice, list);
}

/* ---- configs by URL ------------------------------------------------------------------------- */

int ptts_config_fetch(ptts_config *c, const char *path_or_url, char **local, ptts_error *e) {
    if (local) *local = NULL;
    if (!c || !path_or_url || !*path_or_url)
        return ptts_fail(e, PTTS_E_INVALID, "ptts_config_fetch: no config given");
    ptts_config_init(c);
    const char *s = path_or_url;
    size_t n = strlen(s);
    const int hf = !strncmp(s, "hf://", 5);
    if (hf && strrchr(s, '@')) /* hf://ORG/NAME/PATH@REV (REV may hold '/': refs/pr/1) */
        n = (size_t)(strrchr(s, '@') - s);
    const char *slash = s + n;
    while (slash > s && *slash != '/')
        slash--;
    if (!((n > 5 && !strncmp(s + n - 5, ".yaml", 5)) || (n > 4 && !strncmp(s + n - 4, ".yml", 4)) ||
          (n > 5 && !strncmp(s + n - 5, ".json", 5))))
        return ptts_fail(e, PTTS_E_INVALID,
                         "config %s: the name must end in .yaml or .yml (or .json)", s);
    char *file = NULL;
    int rc = ptts_download(&file, s, NULL, e);
    if (rc) return rc;
    char *base = NULL;
    if (ptts_is_url(s)) { /* the folder of the URL, with an hf:// revision kept at its end */
        size_t dl = (size_t)(slash - s);
        const char *rev = hf ? s + n : "";
        base = malloc(dl + strlen(rev) + 1);
        if (base) {
            memcpy(base, s, dl);
            strcpy(base + dl, rev);
        }
        if (!base) rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        if (!rc && hf && dl <= 5) rc = ptts_fail(e, PTTS_E_INVALID, "config %s: no repository", s);
    }
    if (!rc && !base)
        rc = ptts_config_load(c, file, e); /* a local file: relative to its own folder */
    else if (!rc)
        rc = ptts_config_load_file(c, file, s, base, e);
    free(base);
    if (!rc && local)
        *local = file;
    else
        free(file);
    return rc;
}

int ptts_config_fetch_files(const ptts_config *c, char **weights, char **tokenizer,
                            int *has_cloning, ptts_error *e) {
    *weights = *tokenizer = NULL;
    if (has_cloning) *has_cloning = 0;
    int rc = 0;
    if (c->weights_path)
        rc = ptts_hub_fetch_weights(weights, c->weights_path, c->weights_path_without_voice_cloning,
                                    has_cloning, e);
    else if (c->weights_path_without_voice_cloning)
        rc = ptts_download(weights, c->weights_path_without_voice_cloning, NULL, e);
    if (!rc && c->tokenizer_path) rc = ptts_download(tokenizer, c->tokenizer_path, NULL, e);
    if (rc) {
        free(*weights);
        *weights = NULL;
    }
    return rc;
}
