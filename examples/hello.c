/*
 * hello.c - the smallest program on libpocket-tts: load a model and a voice, speak a text into
 * a 16-bit mono WAV file at 24 kHz.
 *
 *   cc hello.c $(pkg-config --cflags --libs pocket-tts) -o hello
 *   ./hello CONFIG WEIGHTS TOKENIZER VOICE OUT.wav [TEXT]
 *
 * CONFIG, WEIGHTS and TOKENIZER may be "" (the config's or the published english model's), as
 * may VOICE (the language's preset voice: give its name, "alba", or a .safetensors state).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ptts.h>

static const char *or_null(const char *s) { return s[0] ? s : NULL; }

static void put_u32(FILE *f, uint32_t v) {
    unsigned char b[4] = {v & 255, (v >> 8) & 255, (v >> 16) & 255, v >> 24};
    fwrite(b, 1, 4, f);
}

static void put_u16(FILE *f, unsigned v) {
    unsigned char b[2] = {v & 255, (v >> 8) & 255};
    fwrite(b, 1, 2, f);
}

/* Each 80 ms frame as it is generated: float samples in [-1, 1] to 16-bit. */
static int on_frame(void *user, const float *pcm, int n) {
    FILE *f = user;
    for (int i = 0; i < n; i++) {
        float x = pcm[i] > 1.0f ? 1.0f : pcm[i] < -1.0f ? -1.0f : pcm[i];
        put_u16(f, (unsigned)(int16_t)(x * 32767.0f) & 0xffffu);
    }
    return 0; /* nonzero would stop the generation */
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s CONFIG WEIGHTS TOKENIZER VOICE OUT.wav [TEXT]\n", argv[0]);
        return 2;
    }
    const char *text = argc > 6 ? argv[6] : "Hello world.";
    ptts_error err = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = or_null(argv[1]);
    mo.weights_path = or_null(argv[2]);
    mo.tokenizer_path = or_null(argv[3]);
    mo.backend = PTTS_BACKEND_CPU;
    ptts_model *model = NULL;
    ptts_voice *voice = NULL;
    FILE *f = NULL;
    int rc = 1;
    if (ptts_model_load(&model, &mo, &err) < 0) goto done;
    if (ptts_voice_open(&voice, model, NULL, argv[4][0] ? argv[4] : "alba", 0, NULL, &err) < 0)
        goto done;
    if (!(f = fopen(argv[5], "wb"))) {
        perror(argv[5]);
        goto done;
    }
    /* The header with sizes of 0, patched once the length is known. */
    fwrite("RIFF\0\0\0\0WAVEfmt ", 1, 16, f);
    put_u32(f, 16);
    put_u16(f, 1); /* PCM */
    put_u16(f, 1); /* mono */
    put_u32(f, PTTS_SAMPLE_RATE);
    put_u32(f, PTTS_SAMPLE_RATE * 2);
    put_u16(f, 2);
    put_u16(f, 16);
    fwrite("data\0\0\0\0", 1, 8, f);
    ptts_gen_options go = ptts_gen_options_default();
    go.seed = 1;
    go.seed_set = 1;
    if (ptts_synthesize(model, voice, text, &go, on_frame, f, &err) < 0) goto done;
    long size = ftell(f);
    if (size < 44 || fseek(f, 4, SEEK_SET) != 0) goto done;
    put_u32(f, (uint32_t)(size - 8));
    fseek(f, 40, SEEK_SET);
    put_u32(f, (uint32_t)(size - 44));
    printf("%s: %ld samples of \"%s\" (pocket-tts %s)\n", argv[5], (size - 44) / 2, text,
           ptts_version());
    rc = 0;
done:
    if (rc && err.code) fprintf(stderr, "hello: %s: %s\n", ptts_strerror(err.code), err.msg);
    if (f && fclose(f) != 0) rc = 1;
    ptts_voice_free(voice);
    ptts_model_free(model);
    return rc;
}
