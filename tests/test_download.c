// ctest-label: unit
// ctest-timeout: 180
/*
 * test_download.c - SHA-256 test vectors, then downloads against tests/hf_mock.py, a loopback
 * mock of the Hugging Face hub (HF_ENDPOINT, HF_HOME and HOME point into a temporary folder):
 * the hub cache layout (blobs, snapshots symlinks, refs), commit-pinned cache hits without a
 * request, resume after a hang-up and across calls, a corrupt transfer refused, 404s, the gated
 * repository (401, 403, token, token file) and the fallback to the open one with its message
 * said once, HF_HUB_OFFLINE, plain http(s) URLs, an unwritable cache, a full disk, cancelling,
 * an unreachable endpoint, preset voices and loading a model by language.
 */
#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "download.h"
#include "hub.h"
#include "model.h"
#include "sha256.h"
#include "test.h"

static char g_tmp[256], g_endpoint[64], g_hub[512];
static pid_t g_mock = -1;

static void stop_mock(void) {
    if (g_mock > 0) {
        kill(g_mock, SIGTERM);
        waitpid(g_mock, NULL, 0);
        g_mock = -1;
    }
}

static void rm_rf(const char *path) {
    pid_t p = fork();
    if (p == 0) {
        execlp("rm", "rm", "-rf", path, (char *)NULL);
        _exit(127);
    }
    if (p > 0) waitpid(p, NULL, 0);
}

static void start_mock(void) {
    char port_file[512], script[1024];
    snprintf(port_file, sizeof port_file, "%s/port", g_tmp);
    snprintf(script, sizeof script, "%s/../hf_mock.py", PTTS_FIXTURES);
    g_mock = fork();
    REQUIRE(g_mock >= 0);
    if (g_mock == 0) {
        execlp("python3", "python3", script, port_file, PTTS_FIXTURES, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            int port = 0;
            if (fscanf(f, "%d", &port) == 1 && port > 0)
                snprintf(g_endpoint, sizeof g_endpoint, "http://127.0.0.1:%d", port);
            fclose(f);
            if (g_endpoint[0]) return;
        }
        usleep(50000);
    }
    stop_mock();
    fprintf(stderr, "the mock hub (python3 %s) did not start\n", script);
    exit(1);
}

/* GET a mock control URL into a malloc'd string. */
static size_t grow(char *p, size_t s, size_t n, void *u) {
    char **buf = u;
    size_t len = *buf ? strlen(*buf) : 0;
    char *nb = realloc(*buf, len + s * n + 1);
    if (!nb) return 0;
    memcpy(nb + len, p, s * n);
    nb[len + s * n] = 0;
    *buf = nb;
    return s * n;
}

static char *mock_get(const char *what) {
    char url[256];
    snprintf(url, sizeof url, "%s/%s", g_endpoint, what);
    char *buf = calloc(1, 1);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, grow);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &buf);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_cleanup(c);
    REQUIRE(rc == CURLE_OK);
    return buf;
}

static void mock_reset(void) { free(mock_get("_reset")); }

/* Requests since the last reset whose JSON record contains `needle` and `also` (NULL: any)
 * (the control requests themselves are not counted). */
static int log_count2(const char *needle, const char *also) {
    char *log = mock_get("_log");
    int n = 0;
    for (char *p = log; (p = strchr(p, '{')); p++) {
        char *end = strchr(p, '}');
        if (!end) break;
        *end = 0;
        if (!strstr(p, "/_log") && !strstr(p, "/_reset") && strstr(p, needle) &&
            (!also || strstr(p, also)))
            n++;
        *end = '}';
    }
    free(log);
    return n;
}

static int log_count(const char *needle) { return log_count2(needle, NULL); }

static unsigned char *pattern(size_t n, uint64_t x) {
    unsigned char *out = malloc(n + 8);
    for (size_t i = 0; i < n; i += 8) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        for (int k = 0; k < 8; k++)
            out[i + k] = (unsigned char)(x >> (8 * k));
    }
    return out;
}

static int file_equals(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char *buf = malloc(n + 1);
    size_t got = fread(buf, 1, n + 1, f);
    fclose(f);
    int eq = got == n && !memcmp(buf, data, n);
    free(buf);
    return eq;
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

static void set_env(const char *k, const char *v) {
    if (v)
        setenv(k, v, 1);
    else
        unsetenv(k);
}

static int fetch(const char *url, char **path, int *status, ptts_error *e) {
    memset(e, 0, sizeof *e);
    *path = NULL;
    return ptts_download(path, url, status, e);
}

static void test_sha256(void) {
    char hex[65];
    ptts_sha256_hex("", 0, hex);
    CHECK(!strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    ptts_sha256_hex("abc", 3, hex);
    CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ptts_sha256_hex(two, strlen(two), hex);
    CHECK(!strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    ptts_sha256_hex(a, 1000000, hex);
    CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    /* pieces of every size give the one-shot digest */
    ptts_sha256 s;
    uint8_t d[32];
    char hex2[65];
    ptts_sha256_init(&s);
    for (size_t off = 0, k = 1; off < 1000000; off += k, k = k % 131 + 1)
        ptts_sha256_update(&s, a + off, off + k > 1000000 ? 1000000 - off : k);
    ptts_sha256_final(&s, d);
    ptts_sha256_to_hex(d, hex2);
    CHECK(!strcmp(hex, hex2));
    free(a);
}

static int g_progress_calls, g_progress_final, g_cancel;
static int64_t g_progress_total;
static int on_progress(void *user, const char *name, int64_t done, int64_t total) {
    (void)user;
    (void)name;
    g_progress_calls++;
    if (done == total) g_progress_final++;
    g_progress_total = total;
    return g_cancel;
}

static char g_logs[8][512];
static int g_nlogs;
static void on_log(void *user, int level, const char *msg) {
    (void)user;
    (void)level;
    if (g_nlogs < 8) snprintf(g_logs[g_nlogs], sizeof g_logs[0], "%s", msg);
    g_nlogs++;
}

static void test_hub_layout(void) {
    char *p, buf[1024], link[512];
    int st;
    ptts_error e;
    unsigned char *ok = pattern(300000, 1);
    char sha[65];
    ptts_sha256_hex(ok, 300000, sha);
    g_progress_calls = g_progress_final = 0;
    CHECKF(fetch("hf://test/repo/ok.bin", &p, &st, &e) == 0, "%s", e.msg);
    snprintf(buf, sizeof buf, "%s/models--test--repo/snapshots/%s/ok.bin", g_hub,
             "2222222222222222222222222222222222222222");
    CHECKF(p && !strcmp(p, buf), "%s", p ? p : "(null)");
    CHECK(p && file_equals(p, ok, 300000));
    ssize_t n = readlink(buf, link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    snprintf(buf, sizeof buf, "../../blobs/%s", sha);
    CHECKF(!strcmp(link, buf), "symlink -> %s", link);
    snprintf(buf, sizeof buf, "%s/models--test--repo/refs/main", g_hub);
    CHECK(file_equals(buf, "2222222222222222222222222222222222222222", 40));
    snprintf(buf, sizeof buf, "%s/models--test--repo/blobs/%s.incomplete", g_hub, sha);
    CHECK(!exists(buf));
    snprintf(buf, sizeof buf, "%s/.locks/models--test--repo/%s.lock", g_hub, sha);
    CHECK(exists(buf));
    CHECK(g_progress_final >= 1 && g_progress_total == 300000);
    free(p);

    /* a non-LFS file: the blob is named by its git etag */
    CHECKF(fetch("hf://test/repo/small.txt", &p, &st, &e) == 0, "%s", e.msg);
    CHECK(p && file_equals(p, "hello\n", 6));
    snprintf(buf, sizeof buf,
             "%s/models--test--repo/blobs/ce013625030ba8dba906f756967f9e9ca394464a", g_hub);
    CHECK(file_equals(buf, "hello\n", 6));
    free(p);

    /* the same blob at a pinned commit: a HEAD and no transfer; then no request at all */
    mock_reset();
    const char *pinned = "hf://test/repo/ok.bin@3333333333333333333333333333333333333333";
    CHECKF(fetch(pinned, &p, &st, &e) == 0, "%s", e.msg);
    CHECK(p && file_equals(p, ok, 300000) && strstr(p, "/snapshots/3333"));
    CHECK(log_count("/cdn/") == 0);
    CHECK(log_count("HEAD") == 1);
    free(p);
    mock_reset();
    CHECKF(fetch(pinned, &p, &st, &e) == 0, "%s", e.msg);
    CHECK(log_count("/") == 0);
    free(p);
    free(ok);
}

static void test_resume(void) {
    char *p, buf[1024], link[512];
    int st;
    ptts_error e;
    /* the server hangs up after 50000 bytes: resumed with a Range request in the same call */
    mock_reset();
    unsigned char *data = pattern(200000, 3);
    CHECKF(fetch("hf://test/repo/interrupt.bin", &p, &st, &e) == 0, "%s", e.msg);
    CHECK(p && file_equals(p, data, 200000));
    CHECKF(log_count2("bytes=50000-", "/cdn/") == 1, "no Range request after the hang-up");
    free(p);
    free(data);

    /* a partial file left by an earlier run is resumed, and nested paths link right */
    data = pattern(1000, 2);
    char sha[65];
    ptts_sha256_hex(data, 1000, sha);
    snprintf(buf, sizeof buf, "%s/models--test--repo/blobs/%s.incomplete", g_hub, sha);
    FILE *f = fopen(buf, "wb");
    REQUIRE(f);
    fwrite(data, 1, 400, f);
    fclose(f);
    mock_reset();
    CHECKF(fetch("hf://test/repo/sub/dir/deep.bin", &p, &st, &e) == 0, "%s", e.msg);
    CHECK(p && file_equals(p, data, 1000));
    CHECK(log_count2("bytes=400-", "/cdn/") == 1);
    ssize_t n = p ? readlink(p, link, sizeof link - 1) : -1;
    link[n > 0 ? n : 0] = 0;
    snprintf(buf, sizeof buf, "../../../../blobs/%s", sha);
    CHECKF(!strcmp(link, buf), "nested symlink -> %s", link);
    free(p);
    free(data);
}

static void test_errors(void) {
    char *p, buf[1024];
    int st;
    ptts_error e;
    /* the bytes do not have the announced sha256: refused, nothing left behind */
    int rc = fetch("hf://test/repo/corrupt.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_NETWORK && strstr(e.msg, "corrupt"), "%d %s", rc, e.msg);
    CHECK(p == NULL);
    snprintf(buf, sizeof buf, "%s/models--test--repo/snapshots/%s/corrupt.bin", g_hub,
             "2222222222222222222222222222222222222222");
    CHECK(!exists(buf));
    char bad[65];
    ptts_sha256_hex("other", 5, bad);
    snprintf(buf, sizeof buf, "%s/models--test--repo/blobs/%s.incomplete", g_hub, bad);
    CHECK(!exists(buf));

    rc = fetch("hf://test/repo/missing.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_NOT_FOUND && st == 404 && strstr(e.msg, "no such file") &&
               strstr(e.msg, "missing.bin"),
           "%d %d %s", rc, st, e.msg);
    rc = fetch("hf://test/repo/ok.bin@nobranch", &p, &st, &e);
    CHECKF(rc == PTTS_E_NOT_FOUND && strstr(e.msg, "no such revision"), "%s", e.msg);
    rc = fetch("hf://nobody/nothing/x.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_NETWORK && st == 401 && strstr(e.msg, "does not exist"), "%s", e.msg);
    rc = fetch("hf://test/x.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_INVALID, "%s", e.msg);
    rc = fetch("hf://test/repo/../x.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_INVALID, "%s", e.msg);

    /* the gated repository: 401 without a token, 403 with a refused one */
    const char *gated = "hf://kyutai/pocket-tts/languages/english_2026-04/model.safetensors"
                        "@19f95fe2df36e79fbd9f10008595cc4c977a0fcc";
    rc = fetch(gated, &p, &st, &e);
    CHECKF(rc == PTTS_E_NETWORK && st == 401 && strstr(e.msg, "HF_TOKEN") &&
               strstr(e.msg, "licence"),
           "%s", e.msg);
    set_env("HF_TOKEN", "wrong");
    rc = fetch(gated, &p, &st, &e);
    CHECKF(rc == PTTS_E_NETWORK && st == 403 && strstr(e.msg, "refused"), "%s", e.msg);
    set_env("HF_TOKEN", "good-token");
    mock_reset();
    CHECKF(fetch("hf://kyutai/pocket-tts/languages/german/model.safetensors"
                 "@39592ff23c9ef80098bb74895d104c26275fe2c9",
                 &p, &st, &e) == 0,
           "%s", e.msg);
    CHECK(log_count("Bearer good-token") >= 1);
    free(p);
    set_env("HF_TOKEN", NULL);
    /* the token file of `hf auth login` */
    snprintf(buf, sizeof buf, "%s/hf/token", g_tmp);
    FILE *f = fopen(buf, "w");
    REQUIRE(f);
    fputs("good-token\n", f);
    fclose(f);
    CHECKF(fetch("hf://kyutai/pocket-tts/languages/italian/model.safetensors"
                 "@39592ff23c9ef80098bb74895d104c26275fe2c9",
                 &p, &st, &e) == 0,
           "%s", e.msg);
    free(p);
    unlink(buf);

    /* plain http(s): the reference's cache names */
    char url[256], hex[65];
    snprintf(url, sizeof url, "%s/plain/hello.txt", g_endpoint);
    CHECKF(fetch(url, &p, &st, &e) == 0, "%s", e.msg);
    ptts_sha256_hex(url, strlen(url), hex);
    snprintf(buf, sizeof buf, "%s/home/.cache/pocket_tts/%s.txt", g_tmp, hex);
    CHECKF(p && !strcmp(p, buf), "%s", p ? p : "(null)");
    CHECK(p && file_equals(p, "plain hello\n", 12));
    free(p);
    mock_reset();
    CHECK(fetch(url, &p, &st, &e) == 0 && log_count("/") == 0); /* cached: no request */
    free(p);
    snprintf(url, sizeof url, "%s/plain/noext", g_endpoint);
    CHECKF(fetch(url, &p, &st, &e) == 0, "%s", e.msg);
    ptts_sha256_hex(url, strlen(url), hex);
    CHECK(p && strstr(p, hex) && !strchr(strstr(p, hex), '.'));
    free(p);
    snprintf(url, sizeof url, "%s/plain/nothing.wav", g_endpoint);
    rc = fetch(url, &p, &st, &e);
    CHECKF(rc == PTTS_E_NOT_FOUND && st == 404, "%s", e.msg);

    /* not a URL: returned as it is */
    CHECK(fetch("some/local/file.wav", &p, &st, &e) == 0 && !strcmp(p, "some/local/file.wav"));
    free(p);
}

static void test_offline(void) {
    char *p, url[256];
    int st;
    ptts_error e;
    set_env("HF_HUB_OFFLINE", "1");
    mock_reset();
    CHECKF(fetch("hf://test/repo/ok.bin", &p, &st, &e) == 0, "%s", e.msg); /* through refs/main */
    free(p);
    CHECKF(fetch("hf://test/repo/sub/dir/deep.bin", &p, &st, &e) == 0, "%s", e.msg);
    free(p);
    snprintf(url, sizeof url, "%s/plain/hello.txt", g_endpoint);
    CHECK(fetch(url, &p, &st, &e) == 0);
    free(p);
    int rc = fetch("hf://test/repo/big.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_NOT_FOUND && strstr(e.msg, "HF_HUB_OFFLINE") && strstr(e.msg, "big.bin"),
           "%s", e.msg);
    snprintf(url, sizeof url, "%s/plain/voice.safetensors", g_endpoint);
    rc = fetch(url, &p, &st, &e);
    CHECKF(rc == PTTS_E_NOT_FOUND && strstr(e.msg, "HF_HUB_OFFLINE"), "%s", e.msg);
    CHECKF(log_count("/") == 0, "offline made requests");
    CHECK(ptts_fetch_cached(&p, "hf://test/repo/ok.bin") == 1);
    free(p);
    CHECK(ptts_fetch_cached(&p, "hf://test/repo/big.bin") == 0 && p == NULL);
    set_env("HF_HUB_OFFLINE", NULL);

    /* the endpoint unreachable: a branch already cached still resolves, a new file fails */
    set_env("HF_ENDPOINT", "http://127.0.0.1:1");
    CHECKF(fetch("hf://test/repo/small.txt", &p, &st, &e) == 0, "%s", e.msg);
    free(p);
    rc = fetch("hf://test/repo/big.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_NETWORK && strstr(e.msg, "cannot reach"), "%s", e.msg);
    set_env("HF_ENDPOINT", g_endpoint);
}

static void test_local_failures(void) {
    char *p, buf[1024];
    int st;
    ptts_error e;
    /* a cache that cannot be created: HF_HOME below a regular file */
    snprintf(buf, sizeof buf, "%s/plainfile", g_tmp);
    FILE *f = fopen(buf, "w");
    REQUIRE(f);
    fclose(f);
    snprintf(buf, sizeof buf, "%s/plainfile/hf", g_tmp);
    set_env("HF_HOME", buf);
    int rc = fetch("hf://test/repo/ok.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_IO && strstr(e.msg, "cache folder") && strstr(e.msg, "HF_HOME"), "%s",
           e.msg);
    snprintf(buf, sizeof buf, "%s/hf", g_tmp);
    set_env("HF_HOME", buf);

    /* a full disk (a file size limit stands in for it), in a child process */
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {100000, 100000};
        setrlimit(RLIMIT_FSIZE, &rl);
        char *q = NULL;
        ptts_error e2 = {0};
        int r = ptts_download(&q, "hf://test/repo/big.bin", NULL, &e2);
        if (r == PTTS_E_IO && strstr(e2.msg, "cannot write")) _exit(0);
        fprintf(stderr, "disk full: %d %s\n", r, e2.msg);
        _exit(1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a full disk is not reported");

    /* cancelled by the progress callback; the partial file stays for a later resume */
    g_cancel = 1;
    rc = fetch("hf://test/repo/big.bin", &p, &st, &e);
    CHECKF(rc == PTTS_E_CANCELLED, "%d %s", rc, e.msg);
    g_cancel = 0;
    CHECKF(fetch("hf://test/repo/big.bin", &p, &st, &e) == 0, "%s", e.msg);
    unsigned char *big = pattern(4 << 20, 5);
    CHECK(p && file_equals(p, big, 4 << 20));
    free(big);
    free(p);
}

static void test_languages(void) {
    CHECK(ptts_language_count() == 11);
    CHECK(ptts_language_find("english") == ptts_language_find("english_2026-04"));
    CHECK(!strcmp(ptts_language_find("english")->folder, "english_2026-04"));
    CHECK(ptts_language_find("french") == NULL && ptts_language_find("french_24l"));
    CHECK(ptts_language_find("french_24l")->frames_after_eos == 8);
    CHECK(ptts_language_find("french_24l")->remove_semicolons == 1);
    CHECK(ptts_language_find("german")->remove_semicolons == 1);
    CHECK(ptts_language_find("english_2026-01")->pad_with_spaces == 1);
    CHECK(ptts_language_find("spanish_24l")->layers == 24);
    CHECK(!strcmp(ptts_language_find("italian_24l")->default_voice, "giovanni"));
    CHECK(!strcmp(ptts_language_find("portuguese")->default_voice, "rafael"));
    CHECK(!strncmp(ptts_language_find("german")->default_text, "Hallo Welt", 10));
    CHECK(ptts_preset_voice_count("english") == 21);
    CHECK(ptts_preset_voice_count("german_24l") == 1);
    CHECK(!strcmp(ptts_preset_voice_name("german_24l", 0), "juergen"));
    char url[512];
    CHECK(ptts_preset_voice_url("english", "alba", url, sizeof url) == 0);
    CHECK(!strcmp(url, "hf://kyutai/pocket-tts-without-voice-cloning/languages/english_2026-04/"
                       "embeddings/alba.safetensors@e041936c75475d350b405bc870bcf7c22da4e9e6"));
    CHECK(ptts_preset_voice_url("english", "nobody", url, sizeof url) == PTTS_E_NOT_FOUND);
    CHECK(ptts_preset_voice_url("klingon", "alba", url, sizeof url) == PTTS_E_INVALID);

    /* the gated weights refused: the open ones, and the message once */
    char *w = NULL, *t = NULL;
    int cloning = -1;
    ptts_error e = {0};
    g_nlogs = 0;
    CHECKF(ptts_language_fetch("english", &w, &t, &cloning, &e) == 0, "%s", e.msg);
    CHECK(cloning == 0 && w && strstr(w, "models--kyutai--pocket-tts-without-voice-cloning"));
    CHECK(t && strstr(t, "/languages/english_2026-04/tokenizer.model"));
    free(w);
    free(t);
    CHECK(ptts_language_fetch("english", &w, &t, &cloning, &e) == 0);
    free(w);
    free(t);
    CHECKF(g_nlogs == 1 && strstr(g_logs[0], "HF_TOKEN") && strstr(g_logs[0], "licence"),
           "%d messages: %s", g_nlogs, g_logs[0]);
    set_env("HF_TOKEN", "good-token");
    CHECKF(ptts_language_fetch("english", &w, &t, &cloning, &e) == 0, "%s", e.msg);
    CHECK(cloning == 1 && w && strstr(w, "models--kyutai--pocket-tts/snapshots/19f95fe"));
    free(w);
    free(t);
    set_env("HF_TOKEN", NULL);
    CHECK(ptts_language_fetch("klingon", &w, &t, &cloning, &e) == PTTS_E_INVALID &&
          strstr(e.msg, "french_24l"));

    /* voices: presets, URLs, local files, unknown names */
    char *p = NULL;
    CHECKF(ptts_voice_resolve(&p, "english", "alba", &e) == 0, "%s", e.msg);
    CHECK(p && strstr(p, "/embeddings/alba.safetensors"));
    free(p);
    CHECKF(ptts_voice_resolve(&p, "german", "juergen", &e) == 0, "%s", e.msg);
    free(p);
    int rc = ptts_voice_resolve(&p, "italian", "giovanni", &e); /* not on the mock */
    CHECKF(rc == PTTS_E_NOT_FOUND && strstr(e.msg, "does not exist for italian"), "%s", e.msg);
    rc = ptts_voice_resolve(&p, "english", "nobody", &e);
    CHECKF(rc == PTTS_E_NOT_FOUND && strstr(e.msg, "alba") && strstr(e.msg, "nobody"), "%s", e.msg);
    CHECK(ptts_voice_resolve(&p, NULL, PTTS_FIXTURES "/tiny/voice.safetensors", &e) == 0 &&
          !strcmp(p, PTTS_FIXTURES "/tiny/voice.safetensors"));
    free(p);
    char url2[256];
    snprintf(url2, sizeof url2, "%s/plain/voice.safetensors", g_endpoint);
    CHECKF(ptts_voice_resolve(&p, NULL, url2, &e) == 0, "%s", e.msg);
    CHECK(p && strstr(p, "/.cache/pocket_tts/"));
    free(p);

    /* a model by language, with a preset voice, speaks */
    ptts_model_options mo = ptts_model_options_default();
    mo.language = "german";
    mo.threads = 1;
    ptts_model *m = NULL;
    CHECKF(ptts_model_load(&m, &mo, &e) == 0, "%s", e.msg);
    if (m) {
        CHECK(m->text.remove_semicolons == 1 && m->text.pad_with_spaces == 0);
        ptts_voice *v = NULL;
        CHECK(ptts_voice_resolve(&p, "german", "juergen", &e) == 0);
        CHECKF(ptts_voice_load(&v, m, p, &e) == 0, "%s", e.msg);
        free(p);
        ptts_gen_options go = ptts_gen_options_default();
        go.seed_set = 1;
        go.frames_after_eos = 1;
        go.frames_after_eos_set = 1;
        go.eos_threshold = -1e9f;
        go.eos_threshold_set = 1;
        ptts_stream *s = NULL;
        float pcm[PTTS_FRAME_SAMPLES];
        CHECK(ptts_stream_create(&s, m, &e) == 0);
        CHECKF(s && v && ptts_stream_start(s, v, "Hallo Welt.", &go, &e) == 0, "%s", e.msg);
        CHECK(s && ptts_stream_next(s, pcm, &e) == PTTS_FRAME_SAMPLES);
        ptts_stream_free(s);
        ptts_voice_free(v);
        ptts_model_free(m);
    }
    mo.language = "klingon";
    CHECK(ptts_model_load(&m, &mo, &e) == PTTS_E_INVALID && strstr(e.msg, "klingon"));
}

int main(void) {
    test_sha256();
    snprintf(g_tmp, sizeof g_tmp, "/tmp/ptts_dl_XXXXXX");
    REQUIRE(mkdtemp(g_tmp));
    start_mock();
    char buf[512];
    snprintf(buf, sizeof buf, "%s/hf", g_tmp);
    set_env("HF_HOME", buf);
    snprintf(g_hub, sizeof g_hub, "%s/hf/hub", g_tmp);
    snprintf(buf, sizeof buf, "%s/home", g_tmp);
    set_env("HOME", buf);
    set_env("HF_ENDPOINT", g_endpoint);
    const char *clear[] = {"HF_TOKEN",     "HF_TOKEN_PATH",         "HF_HUB_OFFLINE",
                           "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME"};
    for (size_t i = 0; i < sizeof clear / sizeof clear[0]; i++)
        set_env(clear[i], NULL);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ptts_set_progress_callback(on_progress, NULL);
    ptts_set_log_callback(on_log, NULL);

    test_hub_layout();
    test_resume();
    test_errors();
    test_offline();
    test_local_failures();
    test_languages();

    stop_mock();
    rm_rf(g_tmp);
    curl_global_cleanup();
    return test_summary();
}
