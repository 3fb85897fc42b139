/* server/main.c: ovpnd's entry point: command line, configuration, logging, then the server. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/config.h"
#include "server/log.h"
#include "server/server.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: ovpnd [--config] FILE [--test-config]\n"
               "       ovpnd --version\n"
               "\n"
               "Runs an OpenVPN-protocol server from an OpenVPN 2.6 style server config FILE.\n"
               "  --config FILE   the configuration file (the word --config may be left out)\n"
               "  --test-config   parse FILE, report problems, and exit (0 when valid)\n");
}

static int open_log(const struct config *cfg)
{
    int fd;

    if (!cfg->log_file) {
        return STDERR_FILENO;
    }
    fd = open(cfg->log_file,
              O_WRONLY | O_CREAT | O_CLOEXEC | (cfg->log_append ? O_APPEND : O_TRUNC), 0640);
    if (fd < 0) {
        fprintf(stderr, "%s: log: cannot open %s: %s\n", cfg->source, cfg->log_file,
                strerror(errno));
    }
    return fd;
}

static int write_pid(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        log_msg(LOG_ERR, "writepid: cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "%ld\n", (long)getpid());
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    bool test_only = false;
    char errbuf[1024] = "";
    struct config cfg;
    int log_fd, err;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            path = argv[++i];
        } else if (strcmp(argv[i], "--test-config") == 0) {
            test_only = true;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("ovpnd %s\n", OVPND_VERSION);
            return 0;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            fprintf(stderr, "ovpnd: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    config_init(&cfg);
    if (config_parse_file(&cfg, path, errbuf, sizeof(errbuf))) {
        fprintf(stderr, "%s\n", errbuf);
        config_free(&cfg);
        return 1;
    }
    for (size_t i = 0; i < cfg.n_warnings; i++) {
        fprintf(stderr, "WARNING: %s\n", cfg.warnings[i]);
    }
    if (test_only) {
        printf("%s: configuration OK\n", path);
        config_free(&cfg);
        return 0;
    }
    if (cfg.cd_dir && chdir(cfg.cd_dir) < 0) {
        fprintf(stderr, "%s: cd: cannot change to %s: %s\n", cfg.source, cfg.cd_dir,
                strerror(errno));
        config_free(&cfg);
        return 1;
    }
    log_fd = open_log(&cfg);
    if (log_fd < 0) {
        config_free(&cfg);
        return 1;
    }
    log_init(log_fd, log_level_from_verb(cfg.verb));
    if (cfg.daemonize && daemon(1, log_fd == STDERR_FILENO ? 0 : 1) < 0) {
        log_msg(LOG_ERR, "daemon: %s", strerror(errno));
        config_free(&cfg);
        return 1;
    }
    if (cfg.writepid && write_pid(cfg.writepid)) {
        config_free(&cfg);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    err = server_run(&cfg);
    config_free(&cfg);
    return err ? 1 : 0;
}
