// ctest-label: unit
/*
 * test_fill_write.c - a synthetic checkpoint of the tiny architecture written by
 * ptts_fill_write has exactly the tensors of the reference's tiny/model.safetensors (names,
 * shapes) with identical bytes, in F32 and in BF16/F16 (= the fixture's rounded copies); and it
 * loads through the normal loader.
 */
#include <unistd.h>

#include "fill_write.h"
#include "test.h"

static void same_file(const char *ours, const char *theirs) {
    st_file *a, *b;
    ptts_error e = {0};
    REQUIRE(st_open(&a, ours, &e) == 0);
    REQUIRE(st_open(&b, theirs, &e) == 0);
    CHECKF(st_count(a) == st_count(b), "%d tensors, reference has %d", st_count(a), st_count(b));
    for (int i = 0; i < st_count(b); i++) {
        const st_tensor *tb = st_at(b, i), *ta = st_find(a, tb->name);
        CHECKF(ta != NULL, "%s missing", tb->name);
        if (!ta) continue;
        int same = ta->dtype == tb->dtype && ta->ndim == tb->ndim && ta->nbytes == tb->nbytes;
        for (int d = 0; same && d < ta->ndim; d++)
            same = ta->shape[d] == tb->shape[d];
        CHECKF(same, "%s: dtype or shape differs", tb->name);
        if (same)
            CHECKF(memcmp(ta->data, tb->data, ta->nbytes) == 0, "%s: values differ", tb->name);
    }
    st_close(a);
    st_close(b);
}

int main(void) {
    char dir[] = "/tmp/ptts_fillw_XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[256];
    ptts_arch a;
    REQUIRE(ptts_arch_preset(&a, "tiny") == 0);
    ptts_error e = {0};
    static const struct {
        st_dtype dt;
        const char *fixture;
    } cases[] = {{ST_F32, "tiny/model.safetensors"},
                 {ST_BF16, "tiny/model.bf16.safetensors"},
                 {ST_F16, "tiny/model.f16.safetensors"}};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/m%d.safetensors", dir, i);
        CHECKF(ptts_fill_write(&a, cases[i].dt, path, &e) == 0, "%s", e.msg);
        same_file(path, fixture_path(cases[i].fixture));
        ptts_weights *w = NULL;
        ptts_weights_options o = {.heads = 4, .codec_heads = 4};
        CHECKF(ptts_weights_load(&w, path, &o, &e) == 0, "%s", e.msg);
        if (w) CHECK(w->arch.d == 64 && w->arch.layers == 2 && w->arch.has_encoder);
        ptts_weights_free(w);
        unlink(path);
    }
    CHECK(ptts_fill_write(&a, ST_I64, path, &e) == PTTS_E_INVALID);
    rmdir(dir);
    return test_summary();
}
