#!/usr/bin/env bash
# Everything CI checks, in order:
#   1. install missing build/test packages (scripts/install-deps.sh)
#   2. configure and build in build/ with -Werror
#   3. clang-format check of every .c/.h file
#   4. all tests in build/ (unit, and netns when run as root: the stock openvpn client against
#      ovpnd in network namespaces)
#   5. ASan+UBSan build in build-asan/ and all tests there (the netns tests then run the
#      sanitized ovpnd, and fail on any sanitizer report in its log)
# Steps 3-5 all run even if one fails; the exit status is non-zero if any step failed.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
# The netns tests mostly wait (handshakes, pings, timers): the optimised pass runs one more test
# than CPUs at a time; tests marked "# ovt: serial" still run alone. The sanitizer pass, whose
# servers need several times the CPU, runs one per CPU.
ctest_jobs=$((jobs + 1))
failed=()
step() { printf '\n=== %s\n' "$*"; }

step "dependencies"
bash scripts/install-deps.sh

step "build (build/)"
cmake -S . -B build -DOVPND_WERROR=ON
cmake --build build -j"$jobs"

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
        UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j"$jobs" ||
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
