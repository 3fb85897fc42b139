/* server/ops/privileges.h: `chroot`, `user` and `group` (openvpn 2.6 init.c do_uid_gid_chroot,
 * platform.c): once start-up has opened everything it needs, the log file is given to the new
 * user and group (so that a rotation can reopen it), the process changes root and then drops
 * its group and user. Main thread, once.
 */
#ifndef SERVER_OPS_PRIVILEGES_H
#define SERVER_OPS_PRIVILEGES_H

#include "server/config/config.h"

/* chroot to cfg->proc.chroot_dir (then chdir "/"), then setgroups/setgid to cfg->proc.group and
 * setuid to cfg->proc.user, each only when configured; users and groups are looked up before
 * the chroot. 0, or -EPERM with the reason logged (no such user or group, a call refused). */
int privileges_drop(const struct config *cfg);

#endif /* SERVER_OPS_PRIVILEGES_H */
