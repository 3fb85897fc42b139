#!/usr/bin/env bash
# Everything CI checks, in order:
#   1. install missing build/test packages (scripts/install-deps.sh)
#   2. configure and build in build/ with -Werror
#   3. the layering of server/ (scripts/check-layout.sh: no upward include, no include cycle)
#   4. clang-format check of every .c/.h file
#   5. all tests in build/ (unit, and netns when run as root: the stock openvpn client against
#      ovpnd in network namespaces)
#   6. ASan+UBSan build in build-asan/ and all tests there (the netns tests then run the
#      sanitized ovpnd, and fail on any sanitizer report in its log)
# Steps 3-6 all run even if one fails; the exit status is non-zero if any step failed.
#
# scripts/test.sh --tsan runs the ThreadSanitizer pass instead (not part of CI, whose run it
# would lengthen by about 7 minutes on two cores): a -DOVPND_SANITIZE=thread build in
# build-tsan/, the unit tests there, and the netns tests that drive several threads at once
# against that ovpnd: renegotiations in the middle of client-to-client traffic and transfers
# across workers, with kernel steering and without (test_workers_clients with OVT_RENEG_SEC),
# renegotiation under a TCP transfer, storms of 100 and 200 simulated clients connecting and
# leaving at once, session takeovers, plugins (Debian's PAM plugin among them) and scripts
# answering from their threads, auth tokens, status and signal handling, junk floods, floats
# and CRL reloads. A netns test fails on any "WARNING: ThreadSanitizer" in the server log
# (tests/netns/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=all
case "${1:-}" in
"") ;;
--tsan) mode=tsan ;;
*)
    echo "usage: scripts/test.sh [--tsan]" >&2
    exit 2
    ;;
esac

jobs=$(nproc 2>/dev/null || echo 2)
# The netns tests mostly wait (handshakes, pings, timers): both passes run one more test than
# CPUs at a time (the sanitizer pass at one per CPU left the CPUs 40-70% idle on two cores);
# tests marked "# ovt: serial" still run alone.
ctest_jobs=$((jobs + 1))
failed=()
step() { printf '\n=== %s\n' "$*"; }

step "dependencies"
bash scripts/install-deps.sh

if [ "$mode" = tsan ]; then
    tsan_tests="workers_clients|renegotiation|loadgen|pool_loadgen|steering|session_restart"
    tsan_tests+="|duplicate_cn|reconnect_address|hooks|native_plugins|auth_gen_token|status_exit"
    tsan_tests+="|signals|garbage|float|crl_verify|auth_user_pass|auth_pam_plugin"
    step "ThreadSanitizer build (build-tsan/)"
    cmake -S . -B build-tsan -DOVPND_WERROR=ON -DOVPND_SANITIZE=thread
    cmake --build build-tsan -j"$jobs"
    # history_size: enough of each thread's past to show both stacks of a race
    export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1:history_size=4"
    step "ThreadSanitizer: unit tests"
    ctest --test-dir build-tsan --output-on-failure -L unit -j"$jobs" || failed+=("unit (tsan)")
    step "ThreadSanitizer: netns tests"
    if [ "$(id -u)" != 0 ]; then
        echo "note: not root, the netns integration tests will be skipped"
    fi
    # Renegotiation every 4 s during the worker runs, with steering on and off.
    OVT_RENEG_SEC=4 OVT_WORKER_RUNS="2:on 2:off" ctest --test-dir build-tsan \
        --output-on-failure -j"$jobs" -R "^netns\.test_($tsan_tests)\$" ||
        failed+=("netns (tsan)")
    echo
    if [ "${#failed[@]}" -ne 0 ]; then
        echo "test.sh --tsan: FAILED: ${failed[*]}"
        exit 1
    fi
    echo "test.sh --tsan: all steps passed"
    exit 0
fi

step "build (build/)"
cmake -S . -B build -DOVPND_WERROR=ON
cmake --build build -j"$jobs"

step "layout check (scripts/check-layout.sh)"
bash scripts/check-layout.sh || failed+=("check-layout")

step "clang-format check"
if git rev-parse --git-dir >/dev/null 2>&1; then
    mapfile -t sources < <(git ls-files --cached --others --exclude-standard -- '*.c' '*.h')
else
    mapfile -t sources < <(find . -path './build*' -prune -o -path './.git' -prune -o \
        \( -name '*.c' -o -name '*.h' \) -print)
fi
existing=()
for f in "${sources[@]}"; do
    [ -f "$f" ] && existing+=("$f")
done
if [ "${#existing[@]}" -eq 0 ]; then
    echo "no C sources found"
elif clang-format-16 --dry-run -Werror "${existing[@]}"; then
    echo "clang-format: ${#existing[@]} files clean"
else
    failed+=("clang-format")
fi

step "tests (build/, all labels)"
if [ "$(id -u)" != 0 ]; then
    echo "note: not root, the netns integration tests will be skipped"
fi
ctest --test-dir build --output-on-failure -j"$ctest_jobs" || failed+=("ctest build/")

step "ASan+UBSan build (build-asan/): unit tests, and the netns tests against that ovpnd"
if cmake -S . -B build-asan -DOVPND_WERROR=ON -DOVPND_SANITIZE=ON &&
    cmake --build build-asan -j"$jobs"; then
    # OVT_SANITIZER_PASS: the slowest netns tests run a reduced matrix here (see each test).
    OVT_SANITIZER_PASS=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure \
        -j"$ctest_jobs" ||
        failed+=("ctest build-asan/")
else
    failed+=("build-asan/")
fi

echo
if [ "${#failed[@]}" -ne 0 ]; then
    echo "test.sh: FAILED: ${failed[*]}"
    exit 1
fi
echo "test.sh: all steps passed"
