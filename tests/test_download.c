// ctest-label: unit
// ctest-timeout: 180
/*
 * test_download.c - SHA-256 test vectors, then downloads against tests/hf_mock.py, a loopback
 * mock of the Hugging Face hub (HF_ENDPOINT, HF_HOME and HOME point into a temporary folder):
 * the hub cache layout (blobs, snapshots symlinks, refs), commit-pinned cache hits without a
 * request, resume after a hang-up and across calls, a corrupt transfer refused, 404s, the gated
 * repository (401, 403, token, token file) and the fallback to the open one with its message
 * said once, HF_HUB_OFFLINE, plain http(s) URLs, an unwritable cache, a full disk, cancelling,
 * an unreachable endpoint, configs by URL (hf:// and http, resolved beside themselves), the
 * language table pinned to MODEL.md 10.4/10.6, french and portuguese_24l, preset voices and
 * loading a model by language (which needs the tokenizer.json backend).
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
                 "@2dd944b099d06bb9edbd221fef138685711d9bf0",
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
                 "@2dd944b099d06bb9edbd221fef138685711d9bf0",
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

/* MODEL.md 10.4 and 10.6, every path and full revision (generated from the spec's tables and
 * legend, not from hub.c): NULL where the spec says uncertain. */
static const struct {
    const char *name;
    int layers;
    const char *sampler;
    int bos, inner_dim, pad, remove_semicolons;
    const char *replace, *voice, *gated, *open, *tokenizer, *tokenizer_rev, *voices;
} g_spec[] = {
    {"english", 6, "lsd", 1, 32, 0, 0, "", "alba", "983151f13aaeab1b13c1e5e3c2c383d49a9edf3f",
     "e7205b6ee50e654a5ea19f0e9df2b0813b05e921", "languages/english/tokenizer.json",
     "00eac05ed3d16bdc3f6b5d598874019c34a89214", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"english_2026-09", 6, "lsd", 1, 32, 0, 0, "", "alba",
     "983151f13aaeab1b13c1e5e3c2c383d49a9edf3f", "e7205b6ee50e654a5ea19f0e9df2b0813b05e921",
     "languages/english_2026-09/tokenizer.json", "00eac05ed3d16bdc3f6b5d598874019c34a89214",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"english_2026-09_24l", 24, "lsd", 1, 32, 0, 0, "", "alba",
     "983151f13aaeab1b13c1e5e3c2c383d49a9edf3f", "e7205b6ee50e654a5ea19f0e9df2b0813b05e921",
     "languages/english_2026-09_24l/tokenizer.json", "00eac05ed3d16bdc3f6b5d598874019c34a89214",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"english_2026-04", 6, "lsd", 1, 32, 0, 0, "", "alba",
     "19f95fe2df36e79fbd9f10008595cc4c977a0fcc", "d29db7978e464fb90cb3359ee0c69a273b9142cc",
     "languages/english_2026-04/tokenizer.json", "00eac05ed3d16bdc3f6b5d598874019c34a89214",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"english_2026-04_24l", 24, "lsd", 1, 32, 0, 0, "", "alba",
     "492522650173a0653b7575cdc25ae09810e5d741", "e81d79e8194ad4c7ce879c87a4258ef20cbf2487",
     "languages/english_2026-04_24l/tokenizer.json", "00eac05ed3d16bdc3f6b5d598874019c34a89214",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"english_2026-01", 6, "lsd", 0, 512, 1, 0, "", "alba",
     "39592ff23c9ef80098bb74895d104c26275fe2c9", "d29db7978e464fb90cb3359ee0c69a273b9142cc",
     "tokenizer.json", "00eac05ed3d16bdc3f6b5d598874019c34a89214",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"english_drifting_26-09", 6, "drifting", 1, 32, 0, 0, "", "alba",
     "75cfe24e3142233bb81887fed3482e9652bb4a6e", "a5ce31f3eba7a3b0cb9c24ba2015b098f278eaae",
     "languages/english_2026-09/tokenizer.json", "00eac05ed3d16bdc3f6b5d598874019c34a89214",
     "1e08e6a23401048648a9fdcfde2f89348215c2a7"},
    {"french", 6, "lsd", 1, 32, 0, 1, "A+FR", "estelle", NULL,
     "8843db76457a91db32077edf8dfcd1c0e3e755fd", "languages/french/tokenizer.json",
     "8843db76457a91db32077edf8dfcd1c0e3e755fd", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"french_24l", 24, "lsd", 1, 32, 0, 1, "A+FR", "estelle",
     "3e82814a68665eec246ff649b14c71331f955c06", "1e08e6a23401048648a9fdcfde2f89348215c2a7",
     "languages/french_24l/tokenizer.json", "8843db76457a91db32077edf8dfcd1c0e3e755fd",
     "1e08e6a23401048648a9fdcfde2f89348215c2a7"},
    {"german", 6, "lsd", 1, 32, 0, 1, "A", "juergen", "2dd944b099d06bb9edbd221fef138685711d9bf0",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "languages/german/tokenizer.json",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"german_24l", 24, "lsd", 1, 32, 0, 1, "A", "juergen",
     "2dd944b099d06bb9edbd221fef138685711d9bf0", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303",
     "languages/german_24l/tokenizer.json", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"italian", 6, "lsd", 1, 32, 0, 0, "A", "giovanni", "2dd944b099d06bb9edbd221fef138685711d9bf0",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "languages/italian/tokenizer.json",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"italian_24l", 24, "lsd", 1, 32, 0, 0, "A", "giovanni",
     "3e82814a68665eec246ff649b14c71331f955c06", "1e08e6a23401048648a9fdcfde2f89348215c2a7",
     "languages/italian_24l/tokenizer.json", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303",
     "1e08e6a23401048648a9fdcfde2f89348215c2a7"},
    {"portuguese", 6, "lsd", 1, 32, 0, 0, "A", "rafael", "2dd944b099d06bb9edbd221fef138685711d9bf0",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "languages/portuguese/tokenizer.json",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"portuguese_24l", 24, "lsd", 1, 32, 0, 0, "A", "rafael", NULL, NULL, NULL, NULL, NULL},
    {"spanish", 6, "lsd", 1, 32, 0, 0, "A+ES", "lola", "2dd944b099d06bb9edbd221fef138685711d9bf0",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "languages/spanish/tokenizer.json",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"spanish_24l", 24, "lsd", 1, 32, 0, 0, "A+ES", "lola",
     "2dd944b099d06bb9edbd221fef138685711d9bf0", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303",
     "languages/spanish_24l/tokenizer.json", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"dutch", 6, "lsd", 1, 32, 0, 0, "A", "daan", "2dd944b099d06bb9edbd221fef138685711d9bf0",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "languages/dutch/tokenizer.json",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},
    {"dutch_24l", 24, "lsd", 1, 32, 0, 0, "A", "daan", "2dd944b099d06bb9edbd221fef138685711d9bf0",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "languages/dutch_24l/tokenizer.json",
     "4e1e0a3e611c51c0b4ed8174fc10f32a54644303", "4e1e0a3e611c51c0b4ed8174fc10f32a54644303"},

};

/* MODEL.md 7.4: the first of these keys that occurs in the config name, else alba. */
static const char *default_voice_rule(const char *name) {
    static const char *rule[][2] = {{"italian", "giovanni"}, {"spanish", "lola"},
                                    {"german", "juergen"},   {"portuguese", "rafael"},
                                    {"french", "estelle"},   {"dutch", "daan"}};
    for (size_t i = 0; i < sizeof rule / sizeof rule[0]; i++)
        if (strstr(name, rule[i][0])) return rule[i][1];
    return "alba";
}

static int same_or_null(const char *a, const char *b) {
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* --config by URL: the config's relative paths resolve beside it (same repository folder and
 * revision for hf://, the URL's folder for http), and its files then download from there. */
static void test_config_urls(void) {
    ptts_config c;
    ptts_error e = {0};
    char *local = NULL, *p = NULL, url[256];
    size_t n = 0;
    char *tok = NULL;
    FILE *f = fopen(PTTS_FIXTURES "/tokenizer/sp_unigram_tiny.tokenizer.json", "rb");
    REQUIRE(f);
    fseek(f, 0, SEEK_END);
    n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    tok = malloc(n);
    REQUIRE(tok && fread(tok, 1, n, f) == n);
    fclose(f);

    const char *pinned = "hf://test/repo/cfg/tiny.yaml@3333333333333333333333333333333333333333";
    CHECKF(ptts_config_fetch(&c, pinned, &local, &e) == 0, "%s", e.msg);
    CHECK(local && strstr(local, "/snapshots/3333") && strstr(local, "/cfg/tiny.yaml"));
    CHECKF(c.tokenizer_path &&
               !strcmp(c.tokenizer_path, "hf://test/repo/tok/t.json"
                                         "@3333333333333333333333333333333333333333"),
           "%s", c.tokenizer_path ? c.tokenizer_path : "(null)");
    CHECK(c.d_model == 64 && c.n_bins == 300);
    CHECKF(c.tokenizer_path && ptts_fetch(&p, c.tokenizer_path, &e) == 0, "%s", e.msg);
    CHECK(p && file_equals(p, tok, n));
    free(p);
    free(local);
    ptts_config_free(&c);

    CHECKF(ptts_config_fetch(&c, "hf://test/repo/cfg/tiny.yaml", NULL, &e) == 0, "%s", e.msg);
    CHECK(c.tokenizer_path && !strcmp(c.tokenizer_path, "hf://test/repo/tok/t.json"));
    ptts_config_free(&c);

    snprintf(url, sizeof url, "%s/plain/cfg/tiny.yaml", g_endpoint);
    CHECKF(ptts_config_fetch(&c, url, NULL, &e) == 0, "%s", e.msg);
    snprintf(url, sizeof url, "%s/plain/tok/t.json", g_endpoint);
    CHECKF(c.tokenizer_path && !strcmp(c.tokenizer_path, url), "%s",
           c.tokenizer_path ? c.tokenizer_path : "(null)");
    CHECKF(c.tokenizer_path && ptts_fetch(&p, c.tokenizer_path, &e) == 0, "%s", e.msg);
    CHECK(p && file_equals(p, tok, n));
    free(p);
    ptts_config_free(&c);

    /* the files it names: open weights beside it (no gated ones named: no cloning) */
    const char *wcfg = "hf://test/repo/cfg/weights.yaml@3333333333333333333333333333333333333333";
    CHECKF(ptts_config_fetch(&c, wcfg, NULL, &e) == 0, "%s", e.msg);
    char *w = NULL, *t = NULL;
    int cloning = -1;
    CHECKF(ptts_config_fetch_files(&c, &w, &t, &cloning, &e) == 0, "%s", e.msg);
    CHECK(cloning == 0 && w && strstr(w, "models--test--repo/snapshots/3333") &&
          strstr(w, "/w/model.safetensors"));
    CHECK(t && file_equals(t, tok, n));
    free(w);
    free(t);
    /* the gated file first when named: refused without a token (the open one), then with one
     * (english_2026-04's: no later test expects that file refused, and it is cached now) */
    free(c.weights_path);
    c.weights_path = ptts_strdup("hf://kyutai/pocket-tts/languages/english_2026-04/"
                                 "model.safetensors@19f95fe2df36e79fbd9f10008595cc4c977a0fcc");
    CHECKF(ptts_config_fetch_files(&c, &w, &t, &cloning, &e) == 0, "%s", e.msg);
    CHECK(cloning == 0 && w && strstr(w, "/w/model.safetensors"));
    free(w);
    free(t);
    set_env("HF_TOKEN", "good-token");
    CHECKF(ptts_config_fetch_files(&c, &w, &t, &cloning, &e) == 0, "%s", e.msg);
    CHECK(cloning == 1 && w && strstr(w, "models--kyutai--pocket-tts/snapshots/19f95fe2"));
    free(w);
    free(t);
    set_env("HF_TOKEN", NULL);
    free(c.tokenizer_path);
    c.tokenizer_path = ptts_strdup("hf://test/repo/tok/none.json");
    CHECK(ptts_config_fetch_files(&c, &w, &t, &cloning, &e) == PTTS_E_NOT_FOUND && !w && !t);
    ptts_config_free(&c);

    /* a local config: relative to its own folder */
    CHECKF(ptts_config_fetch(&c, PTTS_FIXTURES "/tiny/config.yaml", &local, &e) == 0, "%s", e.msg);
    CHECK(local && !strcmp(local, PTTS_FIXTURES "/tiny/config.yaml"));
    CHECK(c.tokenizer_path &&
          !strcmp(c.tokenizer_path, PTTS_FIXTURES "/tiny/../tokenizer/sp_unigram_tiny.model"));
    free(local);
    ptts_config_free(&c);

    /* the fixtures' manifest.json: JSON is accepted too */
    CHECKF(ptts_config_fetch(&c, PTTS_FIXTURES "/tiny/manifest.json", NULL, &e) == 0, "%s", e.msg);
    CHECK(c.d_model == 64);
    ptts_config_free(&c);

    /* not .yaml/.yml, missing, or not a config */
    CHECK(ptts_config_fetch(&c, "hf://test/repo/small.txt", NULL, &e) == PTTS_E_INVALID &&
          strstr(e.msg, ".yaml"));
    CHECK(ptts_config_fetch(&c, "hf://test/repo/tiny.yaml.txt@main", NULL, &e) == PTTS_E_INVALID);
    CHECK(ptts_config_fetch(&c, "hf://test/repo/cfg/none.yml", NULL, &e) == PTTS_E_NOT_FOUND);
    CHECK(ptts_config_fetch(&c, "", NULL, &e) == PTTS_E_INVALID);
    /* a revision with slashes: the name before it decides, and the mock has no such ref */
    CHECK(ptts_config_fetch(&c, "hf://test/repo/cfg/tiny.yaml@refs/pr/1", NULL, &e) ==
              PTTS_E_NOT_FOUND &&
          strstr(e.msg, "revision"));
    free(tok);
}

static void test_language_table(void) {
    static const char *order[] = {"english",
                                  "english_2026-01",
                                  "english_2026-04",
                                  "english_2026-04_24l",
                                  "english_2026-09",
                                  "english_2026-09_24l",
                                  "english_drifting_26-09",
                                  "french",
                                  "french_24l",
                                  "german",
                                  "german_24l",
                                  "italian",
                                  "italian_24l",
                                  "portuguese",
                                  "portuguese_24l",
                                  "spanish",
                                  "spanish_24l",
                                  "dutch",
                                  "dutch_24l"};
    const int n = (int)(sizeof g_spec / sizeof g_spec[0]);
    CHECK(n == 19 && ptts_language_count() == 19);
    for (int i = 0; i < 19 && ptts_language_at(i); i++)
        CHECKF(!strcmp(ptts_language_at(i)->name, order[i]), "%d: %s", i,
               ptts_language_at(i)->name);
    CHECK(ptts_language_at(19) == NULL && ptts_language_at(-1) == NULL);
    for (int i = 0; i < n; i++) {
        const ptts_language *l = ptts_language_find(g_spec[i].name);
        CHECKF(l != NULL, "%s", g_spec[i].name);
        if (!l) continue;
        CHECKF(l->layers == g_spec[i].layers && !strcmp(l->sampler, g_spec[i].sampler) &&
                   l->insert_bos_before_voice == g_spec[i].bos &&
                   l->inner_dim == g_spec[i].inner_dim && l->pad_with_spaces == g_spec[i].pad &&
                   l->remove_semicolons == g_spec[i].remove_semicolons &&
                   !strcmp(l->replace, g_spec[i].replace),
               "%s: settings", l->name);
        CHECKF(!strcmp(l->default_voice, g_spec[i].voice) &&
                   !strcmp(l->default_voice, default_voice_rule(l->name)),
               "%s: default voice %s", l->name, l->default_voice);
        CHECKF(same_or_null(l->gated_revision, g_spec[i].gated), "%s: gated", l->name);
        CHECKF(same_or_null(l->open_revision, g_spec[i].open), "%s: open", l->name);
        CHECKF(same_or_null(l->tokenizer_path, g_spec[i].tokenizer), "%s: tokenizer", l->name);
        CHECKF(same_or_null(l->tokenizer_revision, g_spec[i].tokenizer_rev), "%s: tokenizer rev",
               l->name);
        CHECKF(same_or_null(l->voices_revision, g_spec[i].voices), "%s: voices", l->name);
        CHECKF(l->listed == !(strstr(l->name, "english_") && strstr(l->name, "_24l")), "%s",
               l->name);
        CHECK(l->default_text && *l->default_text);
        /* the languages/<name>/ folder rule: voices of english are not english_2026-04's */
        char url[512], want[512];
        int rc = ptts_preset_voice_url(l->name, "daan", url, sizeof url);
        if (g_spec[i].voices) {
            snprintf(want, sizeof want,
                     "hf://kyutai/pocket-tts-without-voice-cloning/languages/%s/embeddings/"
                     "daan.safetensors@%s",
                     l->name, g_spec[i].voices);
            CHECKF(rc == 0 && !strcmp(url, want), "%s: %s", l->name, url);
        } else {
            CHECK(rc == PTTS_E_UNSUPPORTED);
        }
    }
    CHECK(ptts_language_find("klingon") == NULL && ptts_language_find(NULL) == NULL);
    /* the 27 presets, each with every language */
    static const char *presets[] = {
        "alba",    "anna",    "azelma",         "bill_boerst", "caro_davy",   "charles", "cosette",
        "daan",    "eponine", "estelle",        "eve",         "fantine",     "george",  "giovanni",
        "jane",    "javert",  "jean",           "juergen",     "lola",        "marius",  "mary",
        "michael", "paul",    "peter_yearsley", "rafael",      "stuart_bell", "vera"};
    CHECK(ptts_preset_voice_count("german_24l") == 27 && ptts_preset_voice_count("x") == 0);
    for (int k = 0; k < 27; k++)
        CHECKF(ptts_preset_voice_name("dutch", k) &&
                   !strcmp(ptts_preset_voice_name("dutch", k), presets[k]),
               "preset %d", k);
    CHECK(ptts_preset_voice_name("dutch", 27) == NULL);
    char url[512];
    CHECK(ptts_preset_voice_url("english", "alba", url, sizeof url) == 0);
    CHECK(!strcmp(url, "hf://kyutai/pocket-tts-without-voice-cloning/languages/english/"
                       "embeddings/alba.safetensors@4e1e0a3e611c51c0b4ed8174fc10f32a54644303"));
    CHECK(ptts_preset_voice_url("english", "nobody", url, sizeof url) == PTTS_E_NOT_FOUND);
    CHECK(ptts_preset_voice_url("klingon", "alba", url, sizeof url) == PTTS_E_INVALID);
    CHECK(ptts_preset_voice_url("english", "alba", url, 20) == PTTS_E_INVALID);
}

static void test_languages(void) {
    /* the gated weights refused: the open ones, and the message once */
    char *w = NULL, *t = NULL;
    int cloning = -1;
    ptts_error e = {0};
    g_nlogs = 0;
    CHECKF(ptts_language_fetch("english", &w, &t, &cloning, &e) == 0, "%s", e.msg);
    CHECK(cloning == 0 && w && strstr(w, "models--kyutai--pocket-tts-without-voice-cloning"));
    CHECK(w && strstr(w, "/snapshots/e7205b6e") && strstr(w, "/languages/english/model."));
    CHECK(t && strstr(t, "/snapshots/00eac05e") && strstr(t, "/languages/english/tokenizer.json"));
    free(w);
    free(t);
    CHECK(ptts_language_fetch("english", &w, &t, &cloning, &e) == 0);
    free(w);
    free(t);
    CHECKF(g_nlogs == 1 && strstr(g_logs[0], "HF_TOKEN") && strstr(g_logs[0], "licence"),
           "%d messages: %s", g_nlogs, g_logs[0]);
    set_env("HF_TOKEN", "good-token");
    CHECKF(ptts_language_fetch("english", &w, &t, &cloning, &e) == 0, "%s", e.msg);
    CHECK(cloning == 1 && w && strstr(w, "models--kyutai--pocket-tts/snapshots/983151f1"));
    free(w);
    free(t);
    set_env("HF_TOKEN", NULL);
    CHECK(ptts_language_fetch("klingon", &w, &t, &cloning, &e) == PTTS_E_INVALID &&
          strstr(e.msg, "french_24l") && strstr(e.msg, "english_drifting_26-09") &&
          strstr(e.msg, "dutch_24l"));
    /* french: the gated file is not confirmed, so the open one without asking the gated repo */
    set_env("HF_TOKEN", "good-token");
    mock_reset();
    CHECKF(ptts_language_fetch("french", &w, &t, &cloning, &e) == 0, "%s", e.msg);
    CHECK(cloning == 0 && w && strstr(w, "without-voice-cloning/snapshots/8843db76"));
    CHECK(t && strstr(t, "/languages/french/tokenizer.json"));
    CHECK(log_count("kyutai/pocket-tts/") == 0);
    free(w);
    free(t);
    set_env("HF_TOKEN", NULL);
    /* portuguese_24l: accepted by name, refused without explicit files, saying why */
    int rc0 = ptts_language_fetch("portuguese_24l", &w, &t, &cloning, &e);
    CHECKF(rc0 == PTTS_E_UNSUPPORTED && strstr(e.msg, "no source") && w == NULL, "%s", e.msg);
    rc0 = ptts_language_fetch_tokenizer("portuguese_24l", &t, &e);
    CHECK(rc0 == PTTS_E_UNSUPPORTED && t == NULL);
    rc0 = ptts_voice_resolve(&t, "portuguese_24l", "rafael", &e);
    CHECK(rc0 == PTTS_E_UNSUPPORTED && t == NULL);

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
        CHECK(m->text.n_replace == 12 && m->default_temperature == 0.3f);
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
    test_language_table();
    test_languages();
    test_config_urls(); /* after test_languages: that checks the once-per-process message */

    stop_mock();
    rm_rf(g_tmp);
    curl_global_cleanup();
    return test_summary();
}
