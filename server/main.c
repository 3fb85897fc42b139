/* server/main.c: ovpnd's entry point: command line, configuration, logging, then the server. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "proto/data_crypto.h"
#include "server/hooks/auth_token.h"
#include "server/config/ccd.h"
#include "server/config/config.h"
#include "server/config/genkey.h"
#include "server/config/profile.h"
#include "server/control/acceptor.h"
#include "server/log/log.h"
#include "server/ops/pkcs11.h"
#include "server/server.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: ovpnd [--config] FILE [--DIRECTIVE ARGS...]... [--test-config]\n"
               "       ovpnd --genkey TYPE [FILE]\n"
               "       ovpnd --tls-crypt-v2 SERVER-KEY --genkey tls-crypt-v2-client FILE "
               "[METADATA]\n"
               "       ovpnd profile --config FILE --remote HOST [PORT] [--cert FILE --key FILE] "
               "[--out FILE]\n"
               "       ovpnd --show-pkcs11-ids PROVIDER [CERT-PRIVATE]\n"
               "       ovpnd --version\n"
               "\n"
               "Runs an OpenVPN-protocol server from an OpenVPN 2.6 style server config FILE.\n"
               "  --config FILE   the configuration file (the word --config may be left out)\n"
               "  --DIRECTIVE ... any config directive, as openvpn takes them: applied in order,\n"
               "                  so '--config FILE --verb 4' overrides the file's verb\n"
               "  --test-config   parse everything, report problems, and exit (0 when valid)\n"
               "  --genkey TYPE [FILE]  write a new key to FILE (or standard output) in openvpn\n"
               "                  2.6's format; TYPE is tls-crypt, tls-auth, secret,\n"
               "                  tls-crypt-v2-server, tls-crypt-v2-client (wrapped with the\n"
               "                  --tls-crypt-v2 server key; METADATA: base64 user data, else\n"
               "                  the creation time) or auth-token; the old form\n"
               "                  --genkey --secret FILE writes a static key (deprecated)\n"
               "  --show-pkcs11-ids PROVIDER [CERT-PRIVATE]  list the certificates on the\n"
               "                  PKCS#11 tokens of the provider library, with the id that\n"
               "                  pkcs11-id takes (CERT-PRIVATE 1: log in first, PIN asked)\n"
               "  profile ...     write an inline client profile (.ovpn) for this server:\n"
               "                  'ovpnd profile --help' lists its options\n");
}

/* `--show-pkcs11-ids PROVIDER [CERT-PRIVATE]` (2.6 options.c: the provider is required in a
 * build without a default one, as Debian's; CERT-PRIVATE a number, not 0: log in first). */
static int show_pkcs11_ids(int argc, char **argv)
{
    char errbuf[512] = "";
    char *end = NULL;
    long cert_private = 0;

    if (argc < 1 || argc > 2 || strncmp(argv[0], "--", 2) == 0) {
        fprintf(stderr, "ovpnd: --show-pkcs11-ids requires a provider parameter\n");
        return 2;
    }
    if (argc == 2) {
        cert_private = strtol(argv[1], &end, 10);
        if (*end != '\0') {
            fprintf(stderr, "ovpnd: --show-pkcs11-ids: '%s' is not a number (CERT-PRIVATE)\n",
                    argv[1]);
            return 2;
        }
    }
    if (pkcs11_show_ids(argv[0], cert_private != 0, stdout, errbuf, sizeof(errbuf)) != 0) {
        fprintf(stderr, "ovpnd: --show-pkcs11-ids: %s\n", errbuf);
        return 1;
    }
    return 0;
}

/* The warning for a `log` / `log-append` file that cannot be opened (err an errno value): as
 * openvpn 2.6 (error.c redirect_stdout_stderr) the server goes on, logging where it would
 * without that line (syslog with `syslog`/`daemon`, else standard error). To stderr. */
static void log_open_warning(const struct config *cfg, int err)
{
    fprintf(stderr, "WARNING: %s: %s: cannot open '%s': %s; logging to %s instead\n",
            cfg->proc.log_where ? cfg->proc.log_where : config_origin(cfg),
            cfg->proc.log_append ? "log-append" : "log", cfg->proc.log_file, strerror(err),
            cfg->proc.use_syslog ? "syslog" : "standard error");
}

/* A `log` file that is a symbolic link: the server, still root, does not open it (O_NOFOLLOW:
 * someone may have left it there to point at another file) and does not start. To stderr. */
static void log_link_error(const struct config *cfg)
{
    fprintf(stderr,
            "%s: %s: '%s' is a symbolic link: not followed for a file the server creates as root; "
            "name the file itself\n",
            cfg->proc.log_where ? cfg->proc.log_where : config_origin(cfg),
            cfg->proc.log_append ? "log-append" : "log", cfg->proc.log_file);
}

/* The `log` file's descriptor, or STDERR_FILENO when there is none or it cannot be opened
 * (then *failed is set and the warning printed); -1 when it is a symbolic link (the error
 * printed). Start-up, after `cd`. */
static int open_log(const struct config *cfg, bool *failed)
{
    int fd;

    *failed = false;
    if (!cfg->proc.log_file) {
        return STDERR_FILENO;
    }
    fd = open(cfg->proc.log_file,
              O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
                  (cfg->proc.log_append ? O_APPEND : O_TRUNC),
              0640);
    if (fd < 0 && errno == ELOOP) {
        log_link_error(cfg);
        return -1;
    }
    if (fd < 0) {
        log_open_warning(cfg, errno);
        *failed = true;
        return STDERR_FILENO;
    }
    return fd;
}

/* --test-config: whether start-up could open the `log` file, without creating or truncating
 * it: an existing file must be writable, else its directory writable and searchable (relative
 * names from the last `cd`). Prints the start-up warning when not; -1 (the error printed) for
 * a symbolic link, which stops start-up. */
static int check_log(const struct config *cfg)
{
    const char *file = cfg->proc.log_file;
    char path[8192], dir[8192];
    struct stat st;
    int err = 0;

    if (!file) {
        return 0;
    }
    snprintf(path, sizeof(path), "%s%s%s", file[0] != '/' && cfg->cd_dir ? cfg->cd_dir : "",
             file[0] != '/' && cfg->cd_dir ? "/" : "", file);
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        log_link_error(cfg);
        return -1;
    }
    if (access(path, F_OK) == 0) {
        err = access(path, W_OK) == 0 ? 0 : errno;
    } else if (errno != ENOENT) {
        err = errno;
    } else {
        snprintf(dir, sizeof(dir), "%s", path);
        config_path_dir(dir);
        err = access(dir, W_OK | X_OK) == 0 ? 0 : errno;
    }
    if (err) {
        log_open_warning(cfg, err);
    }
    return 0;
}

static int write_pid(const char *path)
{
    /* (as root: not through a symbolic link someone left there) */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

    if (!f) {
        if (fd >= 0) {
            close(fd);
        }
        log_msg(LOG_ERR, "writepid: cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "%ld\n", (long)getpid());
    return fclose(f) == 0 ? 0 : -1;
}

static void print_line(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "%s\n", msg);
}

/* --test-config: every regular file in client-config-dir parsed as a connect parses it
 * (server/config/ccd.h), each bad line printed as "PATH:LINE: directive: reason". Start-up does
 * not read them (they may change before a client connects). Returns how many files are bad
 * (or 1 when the directory cannot be read). */
static int check_ccd(const struct config *cfg)
{
    const char *dir = cfg->net.client_config_dir;
    char host[8192];
    int n;

    if (!dir) {
        return 0;
    }
    if (cfg->proc.chroot_dir) { /* the jail's directory seen from outside, as start-up */
        snprintf(host, sizeof(host), "%s%s", cfg->proc.chroot_dir, dir);
        dir = host;
    }
    n = ccd_check_dir(dir, print_line, NULL);
    if (n < 0) {
        fprintf(stderr, "client-config-dir: cannot read %s: %s\n", dir, strerror(-n));
        return 1;
    }
    return n;
}

/* Append word to the config text in double quotes (backslash before '"' and '\\'), as
 * openvpn's config syntax reads it back. */
static int append_word(char **text, size_t *len, const char *word)
{
    size_t need = *len + 2 * strlen(word) + 4;
    char *t = realloc(*text, need);

    if (!t) {
        return -1;
    }
    *text = t;
    t[(*len)++] = ' ';
    t[(*len)++] = '"';
    for (const char *c = word; *c; c++) {
        if (*c == '"' || *c == '\\') {
            t[(*len)++] = '\\';
        }
        t[(*len)++] = *c;
    }
    t[(*len)++] = '"';
    t[*len] = '\0';
    return 0;
}

/* openvpn's command line is its config syntax: "--name args..." is the line "name args...", and
 * "--config FILE" (or a bare FILE) reads that file at that point. Builds that text; our own
 * options (--test-config, --version, --help) are taken out. Returns the text (malloc'd) or NULL
 * with *bad set to the offending argument. */
static char *argv_to_config(int argc, char **argv, bool *test_only, const char **bad)
{
    char *text = calloc(1, 1);
    size_t len = 0;

    for (int i = 1; text && i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--test-config") == 0) {
            *test_only = true;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (a[0] == '-' || i != 1) {
                *bad = a;
                free(text);
                return NULL;
            }
            a = "--config"; /* "ovpnd FILE" */
            i--;
        }
        if (append_word(&text, &len, a + 2) < 0) {
            free(text);
            return NULL;
        }
        while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
            if (append_word(&text, &len, argv[++i]) < 0) {
                free(text);
                return NULL;
            }
        }
        if (text) {
            char *t = realloc(text, len + 2);

            if (!t) {
                free(text);
                return NULL;
            }
            text = t;
            text[len++] = '\n';
            text[len] = '\0';
        }
    }
    return text;
}

/* mbedTLS 2.28 gives every TLS session two record buffers of about 16.7 KB each (the size is
 * fixed when the library is built; Debian's has no MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH), of which
 * a control channel, whose records are a few hundred bytes, touches the first page or two. From
 * a mapping of their own (glibc's calloc leaves fresh mappings as the kernel zeroed them) the
 * untouched pages never become resident, and a session's buffers go back to the kernel when it
 * ends. Without this they come from the heap, where calloc writes every byte: about 33 KB per
 * idle client. Nothing on the per-packet path allocates, so only start-up and the control plane
 * see the mmap calls. */
static void tune_malloc(void)
{
    mallopt(M_MMAP_THRESHOLD, 16 * 1024);
    mallopt(M_MMAP_MAX, 1 << 22); /* default 65536: two buffers each for 50,000 clients */
}

/* `--genkey TYPE [FILE] [METADATA]`, with `--tls-crypt-v2 SERVER-KEY` before or after it for
 * tls-crypt-v2-client keys, as openvpn 2.6 takes them (argv from main, genkey_at the index of
 * "--genkey"). Also the old `--genkey --secret FILE [DIRECTION]` (either order; TYPE absent or
 * secret/tls-auth/tls-crypt), which 2.6 still takes with a deprecation warning (init.c
 * do_genkey): a static key to FILE, the direction ignored. */
static int genkey(int argc, char **argv, int genkey_at)
{
    const char *server_key = NULL;
    char *secret_path = NULL;
    char *words[3];
    int n_words = 0;
    char errbuf[256];

    for (int i = 1; i < argc; i++) {
        if (i == genkey_at) {
            for (i++; i < argc && strncmp(argv[i], "--", 2) != 0; i++) {
                if (n_words == 3) {
                    fprintf(stderr, "ovpnd: --genkey: too many arguments\n");
                    return 2;
                }
                words[n_words++] = argv[i];
            }
            i--;
        } else if (strcmp(argv[i], "--tls-crypt-v2") == 0 && i + 1 < argc) {
            server_key = argv[++i];
        } else if (strcmp(argv[i], "--secret") == 0 && i + 1 < argc) {
            secret_path = argv[++i];
            if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                i++; /* the key direction of `secret FILE 0|1`: not used for writing */
            }
        } else {
            fprintf(stderr, "ovpnd: --genkey: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (secret_path) {
        if (n_words > 1) {
            fprintf(stderr,
                    "ovpnd: --genkey: give the file to --genkey or to --secret, not both\n");
            return 2;
        }
        if (n_words == 1 && strcmp(words[0], "secret") != 0 && strcmp(words[0], "tls-auth") != 0 &&
            strcmp(words[0], "tls-crypt") != 0) {
            fprintf(stderr,
                    "ovpnd: --genkey %s: --secret FILE is for static keys only; use "
                    "--genkey %s FILE\n",
                    words[0], words[0]);
            return 2;
        }
        fprintf(stderr, "ovpnd: WARNING: --genkey --secret FILE is deprecated (in openvpn 2.6 "
                        "too); write --genkey secret FILE\n");
        words[0] = n_words == 1 ? words[0] : "secret";
        words[1] = secret_path;
        n_words = 2;
    }
    if (n_words == 0) {
        fprintf(stderr, "ovpnd: --genkey needs a key type\n");
        usage(stderr);
        return 2;
    }
    if (strcmp(words[0], "auth-token") == 0) {
        if (n_words > 2 ||
            auth_token_genkey(n_words == 2 ? words[1] : NULL, errbuf, sizeof(errbuf)) != 0) {
            fprintf(stderr, "ovpnd: --genkey auth-token: %s\n",
                    n_words > 2 ? "usage: --genkey auth-token [FILE]" : errbuf);
            return 1;
        }
        return 0;
    }
    if (genkey_write(n_words, words, server_key, errbuf, sizeof(errbuf)) != 0) {
        fprintf(stderr, "ovpnd: --genkey %s: %s\n", words[0], errbuf);
        return 1;
    }
    return 0;
}

/* `nice N` (2.6 platform.c platform_nice, at start-up, before privileges are dropped): add N to
 * the nice value. On Linux it is a per-thread value that new threads inherit, so this runs
 * before server_run creates any thread (workers, the control thread, the TLS pool, plugins):
 * every one of them runs at it. A failure (raising the priority without CAP_SYS_NICE) is a
 * warning, as in 2.6. */
static void apply_nice(int n)
{
    if (n == 0) {
        return;
    }
    errno = 0;
    if (nice(n) == -1 && errno != 0) {
        log_msg(LOG_WARN, "nice %d failed: %s", n, strerror(errno));
    } else {
        log_msg(LOG_INFO, "nice %d succeeded", n);
    }
}

int main(int argc, char **argv)
{
    bool test_only = false;
    const char *bad = NULL;
    char errbuf[1024] = "";
    char start_dir[4096];
    struct config cfg;
    char *text;
    int log_fd, err, n_bad;
    bool log_failed;

    if (argc >= 2 && strcmp(argv[1], "profile") == 0) {
        return profile_main(argc - 1, argv + 1);
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--genkey") == 0) {
            return genkey(argc, argv, i);
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--show-pkcs11-ids") == 0) {
            return show_pkcs11_ids(argc - i - 1, argv + i + 1);
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("ovpnd %s\ndata channel crypto: %s\n", OVPND_VERSION,
                   data_aead_backend_name(data_crypto_default_backend()));
            return 0;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
    }
    text = argv_to_config(argc, argv, &test_only, &bad);
    if (!text || !text[0]) {
        if (bad) {
            fprintf(stderr, "ovpnd: unexpected argument '%s'\n", bad);
        }
        usage(stderr);
        free(text);
        return 2;
    }
    config_init(&cfg);
    err = config_parse_string(&cfg, "command line", text, errbuf, sizeof(errbuf));
    if (err) {
        free(text);
        /* every refused line, so that the config can be fixed in one pass */
        for (size_t i = 0; i < cfg.n_errors; i++) {
            fprintf(stderr, "%s\n", cfg.errors[i]);
        }
        if (cfg.n_errors == 0) {
            fprintf(stderr, "%s\n", errbuf);
        }
        if (cfg.n_errors_dropped > 0) {
            fprintf(stderr, "(%zu more errors not shown)\n", cfg.n_errors_dropped);
        }
        if (cfg.n_errors > 1) {
            fprintf(stderr, "%zu errors\n", cfg.n_errors + cfg.n_errors_dropped);
        }
        config_free(&cfg);
        return 1;
    }
    if (test_only) {
        for (size_t i = 0; i < cfg.n_warnings; i++) {
            fprintf(stderr, "WARNING: %s\n", cfg.warnings[i]);
        }
        free(text);
        /* what start-up checks beyond the config text: TLS setup, keys, plugins */
        n_bad = check_log(&cfg) != 0;
        n_bad += check_ccd(&cfg);
        err = acceptor_test_config(&cfg, errbuf, sizeof(errbuf));
        if (err) {
            fprintf(stderr, "%s\n", errbuf[0] ? errbuf : strerror(-err));
        }
        if (err || n_bad) {
            config_free(&cfg);
            return 1;
        }
        printf("configuration OK\n");
        config_free(&cfg);
        return 0;
    }
    /* a reload reads the same command line, relative to where the server started */
    if (!getcwd(start_dir, sizeof(start_dir))) {
        start_dir[0] = '\0';
    }
    if (cfg.cd_dir && chdir(cfg.cd_dir) < 0) {
        fprintf(stderr, "%s: cd: cannot change to %s: %s\n", config_origin(&cfg), cfg.cd_dir,
                strerror(errno));
        config_free(&cfg);
        free(text);
        return 1;
    }
    log_fd = open_log(&cfg, &log_failed);
    if (log_fd < 0) {
        config_free(&cfg);
        free(text);
        return 1;
    }
    if (cfg.proc.use_syslog && (!cfg.proc.log_file || log_failed)) {
        /* `syslog`, or `daemon` without `log`/`log-append` (whose standard error goes to
         * /dev/null below), as openvpn 2.6 */
        log_init_syslog(cfg.proc.syslog_name, log_level_from_verb(cfg.proc.verb));
    } else {
        log_init(log_fd, log_level_from_verb(cfg.proc.verb));
        /* openvpn 2.6 error.c: machine-readable-output wins over suppress-timestamps */
        log_set_stamp(cfg.proc.machine_readable_output ? LOG_STAMP_MACHINE
                      : cfg.proc.suppress_timestamps   ? LOG_STAMP_NONE
                                                       : LOG_STAMP_TIME);
    }
    /* the config's warnings where the server logs (a `log` file, syslog), as the rest */
    for (size_t i = 0; i < cfg.n_warnings; i++) {
        log_msg(LOG_WARN, "%s", cfg.warnings[i]);
    }
    if (cfg.proc.daemonize && daemon(1, log_fd == STDERR_FILENO ? 0 : 1) < 0) {
        log_msg(LOG_ERR, "daemon: %s", strerror(errno));
        config_free(&cfg);
        free(text);
        return 1;
    }
    if (cfg.proc.writepid && write_pid(cfg.proc.writepid)) {
        config_free(&cfg);
        free(text);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    tune_malloc();
    apply_nice(cfg.proc.nice);
    err = server_run(&cfg, text, start_dir[0] ? start_dir : NULL);
    free(text);
    if (cfg.proc.writepid) {
        (void)unlink(cfg.proc.writepid); /* best effort: after user/group it may not be ours */
    }
    config_free(&cfg);
    return err ? 1 : 0;
}
