/*
 * hub.c - languages, repositories and preset voices of the published Pocket TTS models
 * (MODEL.md sections 7 and 10), resolved through download.c.
 */
#include "hub.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "download.h"

#define GATED_REPO "kyutai/pocket-tts"
#define OPEN_REPO "kyutai/pocket-tts-without-voice-cloning"
#define GATED_REV "39592ff23c9ef80098bb74895d104c26275fe2c9"
#define GATED_REV_EN_2026_04 "19f95fe2df36e79fbd9f10008595cc4c977a0fcc"
#define OPEN_REV "d29db7978e464fb90cb3359ee0c69a273b9142cc"
#define VOICES_REV "e041936c75475d350b405bc870bcf7c22da4e9e6"

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

/* name, folder, layers, pad_with_spaces, remove_semicolons, frames_after_eos, voice, text */
static const ptts_language g_languages[] = {
    {"english", "english_2026-04", 6, 0, 0, -1, "alba", TEXT_EN},
    {"english_2026-01", "english_2026-01", 6, 1, 0, -1, "alba", TEXT_EN},
    {"german", "german", 6, 0, 1, -1, "juergen", TEXT_DE},
    {"italian", "italian", 6, 0, 0, -1, "giovanni", TEXT_IT},
    {"portuguese", "portuguese", 6, 0, 0, -1, "rafael", TEXT_PT},
    {"spanish", "spanish", 6, 0, 0, -1, "lola", TEXT_ES},
    {"french_24l", "french_24l", 24, 0, 1, 8, "estelle", TEXT_FR},
    {"german_24l", "german_24l", 24, 0, 1, -1, "juergen", TEXT_DE},
    {"italian_24l", "italian_24l", 24, 0, 0, -1, "giovanni", TEXT_IT},
    {"portuguese_24l", "portuguese_24l", 24, 0, 0, -1, "rafael", TEXT_PT},
    {"spanish_24l", "spanish_24l", 24, 0, 0, -1, "lola", TEXT_ES},
};
#define N_LANGUAGES ((int)(sizeof g_languages / sizeof g_languages[0]))

/* Preset voices and the language family (name prefix) they belong to. */
static const struct {
    const char *name, *family;
} g_presets[] = {
    {"alba", "english"},           {"anna", "english"},        {"azelma", "english"},
    {"bill_boerst", "english"},    {"caro_davy", "english"},   {"charles", "english"},
    {"cosette", "english"},        {"eponine", "english"},     {"eve", "english"},
    {"fantine", "english"},        {"george", "english"},      {"jane", "english"},
    {"javert", "english"},         {"jean", "english"},        {"marius", "english"},
    {"mary", "english"},           {"michael", "english"},     {"paul", "english"},
    {"peter_yearsley", "english"}, {"stuart_bell", "english"}, {"vera", "english"},
    {"giovanni", "italian"},       {"lola", "spanish"},        {"juergen", "german"},
    {"rafael", "portuguese"},      {"estelle", "french"},
};
#define N_PRESETS ((int)(sizeof g_presets / sizeof g_presets[0]))

int ptts_language_count(void) { return N_LANGUAGES; }

const ptts_language *ptts_language_at(int i) {
    return i >= 0 && i < N_LANGUAGES ? &g_languages[i] : NULL;
}

const ptts_language *ptts_language_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < N_LANGUAGES; i++)
        if (!strcmp(name, g_languages[i].name) || !strcmp(name, g_languages[i].folder))
            return &g_languages[i];
    return NULL;
}

static int in_family(const char *language, int preset) {
    const char *f = g_presets[preset].family;
    return !strncmp(language, f, strlen(f));
}

int ptts_preset_voice_count(const char *language) {
    const ptts_language *l = ptts_language_find(language);
    int n = 0;
    for (int i = 0; l && i < N_PRESETS; i++)
        n += in_family(l->name, i);
    return n;
}

const char *ptts_preset_voice_name(const char *language, int k) {
    const ptts_language *l = ptts_language_find(language);
    for (int i = 0; l && i < N_PRESETS; i++)
        if (in_family(l->name, i) && k-- == 0) return g_presets[i].name;
    return NULL;
}

static int is_preset(const char *voice) {
    for (int i = 0; i < N_PRESETS; i++)
        if (!strcmp(voice, g_presets[i].name)) return 1;
    return 0;
}

int ptts_preset_voice_url(const char *language, const char *voice, char *url, size_t cap) {
    const ptts_language *l = ptts_language_find(language ? language : "english");
    if (!l) return PTTS_E_INVALID;
    if (!voice || !is_preset(voice)) return PTTS_E_NOT_FOUND;
    int n =
        snprintf(url, cap, "hf://" OPEN_REPO "/languages/%s/embeddings/%s.safetensors@" VOICES_REV,
                 l->folder, voice);
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
                     "https://huggingface.co/" GATED_REPO
                     " and set HF_TOKEN to a token of that account (preset voices and "
                     "voice-state files work without)");
    } else if (!ptts_offline()) { /* offline, a missing gated file is the expected case */
        ptts_log(PTTS_LOG_INFO, "%s; using the weights without voice cloning", e1.msg);
    }
    return ptts_download(path, fallback, NULL, e);
}

/* The tokenizer's hf:// URL (english_2026-01 keeps it at the repository root). */
static void tokenizer_url(const ptts_language *l, char *tok, size_t cap) {
    if (!strcmp(l->folder, "english_2026-01"))
        snprintf(tok, cap, "hf://" OPEN_REPO "/tokenizer.model@" OPEN_REV);
    else
        snprintf(tok, cap, "hf://" OPEN_REPO "/languages/%s/tokenizer.model@" OPEN_REV,
                 l->folder);
}

int ptts_language_fetch_tokenizer(const char *language, char **tokenizer_path, ptts_error *e) {
    *tokenizer_path = NULL;
    const ptts_language *l = ptts_language_find(language);
    if (!l) return unknown_language(e, language ? language : "(null)");
    char tok[256];
    tokenizer_url(l, tok, sizeof tok);
    return ptts_download(tokenizer_path, tok, NULL, e);
}

int ptts_language_fetch(const char *language, char **weights_path, char **tokenizer_path,
                        int *has_cloning, ptts_error *e) {
    *weights_path = *tokenizer_path = NULL;
    const ptts_language *l = ptts_language_find(language);
    if (!l) return unknown_language(e, language ? language : "(null)");
    char gated[256], open[256], tok[256];
    snprintf(gated, sizeof gated, "hf://" GATED_REPO "/languages/%s/model.safetensors@%s",
             l->folder, !strcmp(l->folder, "english_2026-04") ? GATED_REV_EN_2026_04 : GATED_REV);
    snprintf(open, sizeof open, "hf://" OPEN_REPO "/languages/%s/model.safetensors@" OPEN_REV,
             l->folder);
    tokenizer_url(l, tok, sizeof tok);
    int rc = ptts_hub_fetch_weights(weights_path, gated, open, has_cloning, e);
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
    for (int i = 0, n = ptts_preset_voice_count(l->name); i < n; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, ptts_preset_voice_name(l->name, i));
    }
    return ptts_fail(e, PTTS_E_NOT_FOUND,
                     "voice '%s': no such file, and not a preset voice (%s presets: %s)", voice,
                     l->name, list);
}
