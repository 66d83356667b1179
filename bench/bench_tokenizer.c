/*
 * bench_tokenizer.c - tokenizer encoding speed: about 1 MB of English text (sentences built
 * from word lists by a fixed pseudo-random sequence, so every run sees the same text) tokenized
 * with sp_unigram.model, both as one 1 MB call and sentence by sentence (how the TTS calls it),
 * and the ids decoded back. Prints milliseconds and MB/s (best of a few runs). Usage:
 *   bench_tokenizer [FILE]   (default: $PTTS_FIXTURES or tests/fixtures, sp_unigram.model; a
 *                            FILE ending in .json is read as a tokenizer.json)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "common.h"
#include "tokenizer.h"

/* The fixture next to this source file (__FILE__ is absolute in CMake builds). */
static const char *default_model(void) {
    static char path[1200];
    const char *env = getenv("PTTS_FIXTURES");
    if (env && *env) {
        snprintf(path, sizeof path, "%s/tokenizer/sp_unigram.model", env);
        return path;
    }
    snprintf(path, sizeof path, "%s", __FILE__);
    char *cut = strstr(path, "bench/bench_tokenizer.c");
    if (!cut) return "tests/fixtures/tokenizer/sp_unigram.model";
    strcpy(cut, "tests/fixtures/tokenizer/sp_unigram.model");
    return path;
}

static const char *SUBJ[] = {"The old lighthouse keeper",
                             "A small robot",
                             "My neighbour's daughter",
                             "The committee",
                             "Doctor Alvarez",
                             "Everyone in the village",
                             "The quick brown fox",
                             "Our new synthesizer",
                             "Kyutai's Pocket TTS",
                             "A tired student"};
static const char *VERB[] = {"carefully explained", "suddenly remembered",
                             "never understood",    "quietly repaired",
                             "wrote about",         "argued against",
                             "was reading",         "could not believe",
                             "happily announced",   "measured"};
static const char *OBJ[] = {"the strange noises coming from the basement",
                            "twelve thousand tiny gears",
                            "a letter dated March 3rd, 1987",
                            "why the river froze so early this year",
                            "the price of coffee ($4.50, again!)",
                            "the results of the 2nd experiment",
                            "an umbrella that nobody claimed",
                            "the café's new opening hours",
                            "every word of the speech",
                            "the lazy dog's favourite toy"};
static const char *TAIL[] = {".",
                             "!",
                             "?",
                             " yesterday.",
                             " before dinner.",
                             ", or so they said.",
                             " — twice.",
                             " in the morning.",
                             "; nobody knows why.",
                             "..."};

static uint32_t rng = 12345;
static uint32_t rnd(void) {
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

int main(int argc, char **argv) {
    int rc = bench_args(argc, argv, 1, "usage: bench_tokenizer [tokenizer.model or .json]\n");
    if (rc >= 0) return rc;
    const char *path = argc > 1 ? argv[1] : default_model();
    ptts_error e = {0};
    ptts_tokenizer *t = NULL;
    double t0 = ptts_now();
    if (ptts_tokenizer_load(&t, path, &e)) {
        fprintf(stderr, "bench_tokenizer: %s\n", e.msg);
        return 1;
    }
    double load_ms = (ptts_now() - t0) * 1e3;

    const size_t target = 1 << 20;
    char *text = malloc(target + 512);
    size_t *starts = malloc((target / 16 + 1) * sizeof *starts);
    size_t len = 0, ns = 0;
    while (len < target) {
        starts[ns++] = len;
        len += (size_t)sprintf(text + len, "%s %s %s%s ", SUBJ[rnd() % 10], VERB[rnd() % 10],
                               OBJ[rnd() % 10], TAIL[rnd() % 10]);
    }
    starts[ns] = len;
    double mb = (double)len / 1e6;

    double best_one = 1e9, best_sent = 1e9, best_dec = 1e9;
    long n_ids = 0, n_sent_ids = 0;
    for (int rep = 0; rep < 3; rep++) {
        int *ids = NULL, n = 0;
        t0 = ptts_now();
        if (ptts_tokenizer_encode(t, text, len, &ids, &n, &e)) {
            fprintf(stderr, "bench_tokenizer: %s\n", e.msg);
            return 1;
        }
        double dt = ptts_now() - t0;
        if (dt < best_one) best_one = dt;
        n_ids = n;

        char *dec = NULL;
        t0 = ptts_now();
        if (ptts_tokenizer_decode(t, ids, n, &dec, &e)) {
            fprintf(stderr, "bench_tokenizer: %s\n", e.msg);
            return 1;
        }
        dt = ptts_now() - t0;
        if (dt < best_dec) best_dec = dt;
        free(dec);
        free(ids);

        long total = 0;
        t0 = ptts_now();
        for (size_t s = 0; s < ns; s++) {
            if (ptts_tokenizer_encode(t, text + starts[s], starts[s + 1] - starts[s], &ids, &n,
                                      &e)) {
                fprintf(stderr, "bench_tokenizer: %s\n", e.msg);
                return 1;
            }
            total += n;
            free(ids);
        }
        dt = ptts_now() - t0;
        if (dt < best_sent) best_sent = dt;
        n_sent_ids = total;
    }
    printf("model            %s (vocabulary %d), loaded in %.2f ms\n", path,
           ptts_tokenizer_vocab_size(t), load_ms);
    printf("text             %zu bytes, %zu sentences\n", len, ns);
    printf("encode one call  %8.2f ms  %7.2f MB/s  %ld ids\n", best_one * 1e3, mb / best_one,
           n_ids);
    printf("encode sentences %8.2f ms  %7.2f MB/s  %ld ids (%.2f us/sentence)\n", best_sent * 1e3,
           mb / best_sent, n_sent_ids, best_sent * 1e6 / (double)ns);
    printf("decode           %8.2f ms  %7.2f MB/s\n", best_dec * 1e3, mb / best_dec);
    free(text);
    free(starts);
    ptts_tokenizer_free(t);
    return 0;
}
