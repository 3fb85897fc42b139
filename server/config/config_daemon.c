/* server/config/config_daemon.c: handlers for the process side: includes, working directory,
 * privileges, daemon mode, logging, status file, worker count, and the directives that change
 * how unknown directives are treated. Facts from openvpn 2.6 src/openvpn/options.c
 * (add_option) and status.c.
 */
#include "server/config/config_internal.h"

#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WORKERS_MAX 256 /* peer_id values carry the worker number in their top bits */

int config_h_config(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (ps->cfg->config_file == NULL && (ps->cfg->config_file = strdup(argv[1])) == NULL) {
        return config_nomem(ps);
    }
    return config_parse_include(ps, argv[1]);
}

int config_real_dir(struct config_parser *ps, const char *value, char **out)
{
    char *joined = config_resolve(ps, value), *real;
    struct stat st;

    if (joined == NULL) {
        return config_nomem(ps);
    }
    real = realpath(joined, NULL);
    if (real == NULL) {
        int e = errno;

        free(joined);
        return e == ENOMEM ? config_nomem(ps)
                           : config_error(ps, "cannot use '%s': %s", value, strerror(e));
    }
    free(joined);
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(real);
        return config_error(ps, "'%s' is not a directory", value);
    }
    *out = real;
    return 0;
}

/* openvpn chdir()s at this point; we only remember the directory (see config.h). */
int config_h_cd(struct config_parser *ps, int argc, char **argv)
{
    char *real;
    int err;

    (void)argc;
    err = config_real_dir(ps, argv[1], &real);
    if (err) {
        return err;
    }
    free(ps->cd);
    ps->cd = real;
    return config_set_str(ps, &ps->cfg->cd_dir, real);
}

/* `chroot DIR`: relative to `cd`, as 2.6 resolves it after its chdir. Checked at the end. */
int config_h_chroot(struct config_parser *ps, int argc, char **argv)
{
    char *dir = config_resolve(ps, argv[1]);

    (void)argc;
    if (dir == NULL) {
        return config_nomem(ps);
    }
    free(ps->cfg->proc.chroot_dir);
    ps->cfg->proc.chroot_dir = dir;
    ps->seen_chroot = config_here(ps);
    return 0;
}

int config_jail_path(struct config_parser *ps, const char *path, char **host, char **runtime)
{
    const char *jail = ps->cfg->proc.chroot_dir;
    char *in = NULL, *out = NULL;

    if (jail == NULL) {
        in = config_resolve(ps, path);
    } else if (asprintf(&in, "%s%s", path[0] == '/' ? "" : "/", path) < 0) {
        in = NULL;
    }
    if (in == NULL) {
        return config_nomem(ps);
    }
    if (host != NULL) {
        if (jail == NULL) {
            out = strdup(in);
        } else if (asprintf(&out, "%s%s", jail, in) < 0) {
            out = NULL;
        }
        if (out == NULL) {
            free(in);
            return config_nomem(ps);
        }
        *host = out;
    }
    if (runtime != NULL) {
        free(*runtime);
        *runtime = in;
    } else {
        free(in);
    }
    return 0;
}

/* A directory used after the chroot, named at pending: it must allow mode; its runtime path
 * goes to *out. Without chroot it is made absolute (realpath), so daemon mode and `cd` change
 * nothing. */
static int jail_dir(struct config_parser *ps, const struct config_pending *pending,
                    const char *name, int mode, char **out)
{
    char *host = NULL, *runtime = NULL, *real = NULL;
    const char *why = NULL;
    struct stat st;

    if (pending->path == NULL) {
        return 0;
    }
    if (config_jail_path(ps, pending->path, &host, &runtime) != 0) {
        return -ENOMEM;
    }
    if (stat(host, &st) != 0) {
        why = strerror(errno);
    } else if (!S_ISDIR(st.st_mode)) {
        why = "not a directory";
    } else if (access(host, mode) != 0) {
        why = strerror(errno);
    } else if (ps->cfg->proc.chroot_dir == NULL && (real = realpath(host, NULL)) == NULL) {
        why = strerror(errno);
    }
    free(host);
    if (why != NULL) {
        free(runtime);
        return config_error_at(ps, &pending->where, name, "cannot use '%s'%s: %s", pending->path,
                               ps->cfg->proc.chroot_dir ? " (inside the chroot directory)" : "",
                               why);
    }
    if (real != NULL) {
        free(runtime);
        runtime = real;
    }
    free(*out);
    *out = runtime;
    return 0;
}

int config_check_jail(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    struct stat st;
    int err = 0;

    if (cfg->proc.chroot_dir != NULL) {
        const char *why = NULL;

        if (stat(cfg->proc.chroot_dir, &st) != 0) {
            why = strerror(errno);
        } else if (!S_ISDIR(st.st_mode)) {
            why = "not a directory";
        } else if (access(cfg->proc.chroot_dir, R_OK | X_OK) != 0) {
            why = strerror(errno);
        }
        if (why != NULL) { /* as 2.6 options.c "--chroot directory" */
            return config_error_at(ps, &ps->seen_chroot, "chroot", "cannot use '%s': %s",
                                   cfg->proc.chroot_dir, why);
        }
    }
    err = jail_dir(ps, &ps->ccd, "client-config-dir", R_OK | X_OK, &cfg->net.client_config_dir);
    if (err == -ENOMEM) {
        return err;
    }
    if (ps->tmp_dir.path == NULL && cfg->proc.chroot_dir != NULL) {
        /* 2.6 checks its default ($TMPDIR, else /tmp) inside the jail too, and stops if the
         * directory is not there: scripts' and plugins' files are made in it */
        const char *def = getenv("TMPDIR");

        ps->tmp_dir.where = ps->seen_chroot;
        if (config_set_str(ps, &ps->tmp_dir.path, def && def[0] ? def : "/tmp") != 0) {
            return -ENOMEM;
        }
    }
    {
        int e = jail_dir(ps, &ps->tmp_dir, "tmp-dir", W_OK | X_OK, &cfg->hooks.tmp_dir);

        err = err ? err : e;
    }
    return err;
}

static int set_name(struct config_parser *ps, char **dst, const char *value)
{
    if (value[0] == '\0') {
        return config_error(ps, "the name is empty");
    }
    return config_set_str(ps, dst, value);
}

int config_h_user(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return set_name(ps, &ps->cfg->proc.user, argv[1]);
}

int config_h_group(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return set_name(ps, &ps->cfg->proc.group, argv[1]);
}

/* Syslog as openvpn 2.6 opens it (error.c open_syslog): the first `syslog` or `daemon` line
 * chooses the program name, later ones change nothing. */
static int open_syslog(struct config_parser *ps, const char *name)
{
    if (ps->cfg->proc.use_syslog) {
        return 0;
    }
    if (name && name[0] == '\0') {
        return config_error(ps, "the name is empty");
    }
    ps->cfg->proc.use_syslog = true;
    return config_set_str(ps, &ps->cfg->proc.syslog_name, name);
}

int config_h_syslog(struct config_parser *ps, int argc, char **argv)
{
    return open_syslog(ps, argc == 2 ? argv[1] : NULL);
}

int config_h_daemon(struct config_parser *ps, int argc, char **argv)
{
    if (ps->cfg->proc.daemonize) {
        /* as 2.6 options.c: only a second `daemon NAME` is remarked on */
        return argc == 2 ? config_warn(ps, NULL,
                                       "daemon: ignoring 'daemon %s': a daemon directive came "
                                       "earlier (init scripts sometimes add their own)",
                                       argv[1])
                         : 0;
    }
    ps->cfg->proc.daemonize = true;
    return open_syslog(ps, argc == 2 ? argv[1] : NULL);
}

int config_h_writepid(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return set_name(ps, &ps->cfg->proc.writepid, argv[1]);
}

/* `log FILE` / `log-append FILE`: the file and the line that named it (the server opens it). */
static int set_log(struct config_parser *ps, const char *file, bool append)
{
    char *where = NULL;
    int err = set_name(ps, &ps->cfg->proc.log_file, file);

    if (err) {
        return err;
    }
    if (asprintf(&where, "%s:%d", ps->file, ps->line) < 0) {
        return config_nomem(ps);
    }
    free(ps->cfg->proc.log_where);
    ps->cfg->proc.log_where = where;
    ps->cfg->proc.log_append = append;
    return 0;
}

int config_h_log(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return set_log(ps, argv[1], false);
}

int config_h_log_append(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return set_log(ps, argv[1], true);
}

int config_h_suppress_timestamps(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->proc.suppress_timestamps = true;
    return 0;
}

int config_h_machine_readable_output(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->proc.machine_readable_output = true;
    return 0;
}

int config_h_verb(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 0, 11, &ps->cfg->proc.verb);
}

int config_h_mute(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 0, INT_MAX, &ps->cfg->proc.mute);
}

/* The start-up check openvpn 2.6 makes of the status file (options.c
 * options_postprocess_filechecks, check_file_access with CHKACC_DIRPATH | CHKACC_FILEXSTWR):
 * the directory it is in must exist and be readable, writable and searchable, and a file
 * already there must be writable; a failure stops 2.6 ("--status fails with ..."). Anything
 * else (a file that cannot be written later, a path that is a directory) is left to the status
 * writer, which warns and tries again. Relative names from the last `cd`. Not at a reload.
 * Returns 0, or -EINVAL with the error reported at this line. */
static int status_file_check(struct config_parser *ps, const char *file)
{
    char *path, *dir;
    int err = 0;

    if (ps->running) {
        /* a reload: the server keeps the status file it opened at start-up (a changed `status`
         * needs a restart), and runs as `user` by now, who may not write the path itself */
        return 0;
    }
    path = config_resolve(ps, file);
    if (!path) {
        return config_nomem(ps);
    }
    dir = strdup(path);
    if (!dir) {
        free(path);
        return config_nomem(ps);
    }
    config_path_dir(dir);
    if (access(dir, R_OK | W_OK | X_OK) != 0) {
        err = errno;
    } else if (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
        err = errno;
    }
    free(dir);
    free(path);
    if (err) {
        return config_error(ps, "cannot write '%s': %s (openvpn 2.6 does not start either)", file,
                            strerror(err));
    }
    return 0;
}

int config_h_status(struct config_parser *ps, int argc, char **argv)
{
    if (argc == 3) {
        int err = config_parse_int(ps, "update interval", argv[2], 0, 86400,
                                   &ps->cfg->status.status_interval_s);

        if (err) {
            return err;
        }
    }
    if (argv[1][0] != '\0') {
        int err = status_file_check(ps, argv[1]);

        if (err) {
            return err;
        }
    }
    return set_name(ps, &ps->cfg->status.status_file, argv[1]);
}

int config_h_status_version(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 1, 3, &ps->cfg->status.status_version);
}

int config_h_persist_key(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->proc.persist_key = true;
    return 0;
}

int config_h_persist_tun(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->proc.persist_tun = true;
    return 0;
}

int config_h_workers(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 0, WORKERS_MAX, &ps->cfg->proc.workers);
}

int config_h_ignore_unknown_option(struct config_parser *ps, int argc, char **argv)
{
    char **grown =
        realloc(ps->ignore_unknown, (ps->n_ignore_unknown + (size_t)argc - 1) * sizeof(*grown));

    if (grown == NULL) {
        return config_nomem(ps);
    }
    ps->ignore_unknown = grown;
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];

        if (name[0] == '-' && name[1] == '-') {
            name += 2;
        }
        grown[ps->n_ignore_unknown] = strdup(name);
        if (grown[ps->n_ignore_unknown] == NULL) {
            return config_nomem(ps);
        }
        ps->n_ignore_unknown++;
    }
    return 0;
}

/* `setenv opt ...` is handled before the table; here only plain environment settings. */

int config_h_mlock(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->proc.mlock = true;
    return 0;
}

/* `multihome` (2.6 socket.c, IP_PKTINFO / IPV6_RECVPKTINFO): for a server bound to several
 * addresses (or to all), each UDP reply leaves from the address its client's datagrams arrived
 * on. TCP connections do that by themselves. */
int config_h_multihome(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->net.multihome = true;
    return 0;
}

/* `mark N` (2.6 socket.c, Linux): the firewall mark SO_MARK puts on every packet the server's
 * sockets send, for policy routing of the tunnel's outer packets. */
int config_h_mark(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 0, INT_MAX, &ps->cfg->net.mark);
}

/* `nice N` (2.6 options.c, init.c do_init_first_time, platform.c platform_nice): N is added to
 * the process's nice value once at start-up (the kernel keeps the result within -20..19); 2.6
 * reads any integer (atoi), so does ovpnd, but refuses a word that is not one. */
int config_h_nice(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], INT_MIN, INT_MAX, &ps->cfg->proc.nice);
}

/* `remap-usr1 SIGHUP|SIGTERM` (2.6 options.c): the value is checked as 2.6 checks it, anything
 * else refused with 2.6's reason. In 2.6 a server sent SIGUSR1 is not remapped (see
 * config_proc.remap_usr1), so the setting changes nothing a server does, in ovpnd either. */
int config_h_remap_usr1(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (strcmp(argv[1], "SIGHUP") == 0) {
        ps->cfg->proc.remap_usr1 = SIGHUP;
    } else if (strcmp(argv[1], "SIGTERM") == 0) {
        ps->cfg->proc.remap_usr1 = SIGTERM;
    } else {
        return config_error(ps, "--remap-usr1 parm must be 'SIGHUP' or 'SIGTERM'");
    }
    return 0;
}

/* `bind-dev DEV` (2.6 socket.c, Linux): SO_BINDTODEVICE on the server's sockets, typically a VRF
 * device, so that the outer packets use that device's routing table. */
int config_h_bind_dev(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (strlen(argv[1]) == 0 || strlen(argv[1]) >= IFNAMSIZ) {
        return config_error(ps, "'%s' is not a device name (1 to %d characters)", argv[1],
                            IFNAMSIZ - 1);
    }
    return config_set_str(ps, &ps->cfg->net.bind_dev, argv[1]);
}

int config_h_down_pre(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->hooks.down_pre = true;
    return 0;
}
