#!/usr/bin/env bash
# dev_log_ns.sh SOCKET DIR CMD...: run CMD in a mount namespace of its own whose /dev/log is
# SOCKET (the socket of tests/netns/syslog_sink.py), so that a server's syslog(3) messages reach
# the test without a syslog daemon and without touching the host's /dev. In that namespace /dev
# is a small tmpfs of symbolic links to every entry of the real /dev (bind-mounted at DIR, an
# empty directory of the test) plus log -> SOCKET. The namespace ends with CMD and whatever it
# forks (a daemon keeps it).
set -euo pipefail
if [ "${OVT_DEV_LOG_NS:-}" != 1 ]; then
    exec env OVT_DEV_LOG_NS=1 unshare --mount --propagation private bash "$0" "$@"
fi
sock=$1 dir=$2
shift 2
mkdir -p "$dir"
mount --rbind /dev "$dir"
mount -t tmpfs -o mode=755,size=64k ovt-dev /dev
for e in "$dir"/*; do
    ln -s "$e" "/dev/${e##*/}"
done
ln -sfn "$sock" /dev/log
exec "$@"
