/* server/ops/privileges.c: see privileges.h. */
#include "server/ops/privileges.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/log/log.h"

/* `chroot DIR` (2.6 platform_chroot: chroot, then chdir("/")), after everything start-up opens
 * and before the privilege drop. What is read later from paths is read inside it (config.h). */
static int enter_chroot(const struct config *cfg)
{
    const char *dir = cfg->proc.chroot_dir;

    if (dir == NULL) {
        return 0;
    }
    tzset(); /* the local time zone for log lines, read while /etc/localtime is reachable */
    if (chroot(dir) != 0 || chdir("/") != 0) {
        log_msg(LOG_ERR, "chroot: cannot change root to %s: %s", dir, strerror(errno));
        return -EPERM;
    }
    log_msg(LOG_INFO, "chroot to '%s' and '/' succeeded", dir);
    return 0;
}

int privileges_drop(const struct config *cfg)
{
    /* looked up before the chroot: /etc/passwd and /etc/group are outside the jail */
    struct group *g = cfg->proc.group ? getgrnam(cfg->proc.group) : NULL;
    gid_t gid = g ? g->gr_gid : 0;
    struct passwd *pw = cfg->proc.user ? getpwnam(cfg->proc.user) : NULL;
    uid_t uid = pw ? pw->pw_uid : 0;
    int err;

    if (cfg->proc.group && !g) {
        log_msg(LOG_ERR, "group %s: cannot switch: no such group", cfg->proc.group);
        return -EPERM;
    }
    if (cfg->proc.user && !pw) {
        log_msg(LOG_ERR, "user %s: cannot switch: no such user", cfg->proc.user);
        return -EPERM;
    }
    if ((cfg->proc.user || cfg->proc.group) &&
        (err = log_give_file(pw ? uid : (uid_t)-1, g ? gid : (gid_t)-1)) != 0) {
        log_msg(LOG_WARN,
                "log: cannot give %s to user %s, group %s: %s; after a rotation it "
                "cannot be reopened",
                cfg->proc.log_file, cfg->proc.user ? cfg->proc.user : "-",
                cfg->proc.group ? cfg->proc.group : "-", strerror(-err));
    }
    err = enter_chroot(cfg);
    if (err) {
        return err;
    }
    if (cfg->proc.group && (setgroups(0, NULL) < 0 || setgid(gid) < 0)) {
        log_msg(LOG_ERR, "group %s: cannot switch: %s", cfg->proc.group, strerror(errno));
        return -EPERM;
    }
    if (cfg->proc.user && setuid(uid) < 0) {
        log_msg(LOG_ERR, "user %s: cannot switch: %s", cfg->proc.user, strerror(errno));
        return -EPERM;
    }
    if (cfg->proc.user || cfg->proc.group) {
        log_msg(LOG_INFO, "privileges dropped to user %s, group %s",
                cfg->proc.user ? cfg->proc.user : "-", cfg->proc.group ? cfg->proc.group : "-");
    }
    return 0;
}
