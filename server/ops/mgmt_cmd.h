/* server/ops/mgmt_cmd.h: the management interface's commands (openvpn 2.6 manage.c
 * man_dispatch_command), answered in 2.6's words. Loop thread only. */
#ifndef SERVER_OPS_MGMT_CMD_H
#define SERVER_OPS_MGMT_CMD_H

#include <stddef.h>

struct mgmt;
struct mgmt_client;

/* Handle one line from c (NUL-terminated, at most MGMT_LINE_MAX - 1 bytes, control characters
 * already dropped): the password while one is needed, else a command. c may be closed on
 * return (exit, three wrong passwords, output over MGMT_OUT_MAX). */
void mgmt_cmd_line(struct mgmt_client *c, char *line);

/* The CONNECTED state entry as `state` and >STATE print it (2.6 log_entry_print), into buf. */
void mgmt_cmd_state_format(const struct mgmt *m, char *buf, size_t cap);

#endif /* SERVER_OPS_MGMT_CMD_H */
