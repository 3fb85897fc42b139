#!/usr/bin/env bash
# Run the fuzz targets (tests/fuzz/fuzz_*.c) under libFuzzer with ASan and UBSan.
#
# usage: scripts/fuzz.sh [--time SECS] [--jobs N] [--merge] [TARGET...]
#
#   --time SECS   how long each target runs (default 300)
#   --jobs N      parallel fuzzing processes per target (default 1)
#   --merge       afterwards, add the inputs that reached new code to the committed corpus
#                 (tests/fuzz/corpus/TARGET, files named by libFuzzer's hash), so every test run
#                 replays them
#   TARGET        the name of a tests/fuzz/fuzz_*.c file without .c (default: all of them)
#
# Builds with clang into build-fuzz (-DOVPND_FUZZ=ON -DOVPND_SANITIZE=ON), then fuzzes each
# target starting from its committed corpus, in a work corpus under build-fuzz/corpus/TARGET.
# A failing input (a crash, a sanitizer report, or a broken check in the target) is saved as
# build-fuzz/crash-TARGET-*; reproduce it with `build-fuzz/tests/TARGET FILE`, or with the
# normal build's `build/tests/TARGET FILE`. Once fixed, copy it into tests/fuzz/corpus/TARGET/
# under a name that says what it found (found-WHAT), so that ctest keeps checking it.
# A new target is a tests/fuzz/fuzz_NAME.c defining LLVMFuzzerTestOneInput (tests/fuzz/
# fuzz_check.h has CHECK) and at least one seed in tests/fuzz/corpus/fuzz_NAME/ (add it to
# tests/fuzz/make_seeds.py): CMake picks the file up, and its ctest fails on an empty corpus.
# Exit status: 0 when no target failed, 1 otherwise, 2 for a bad option or target, 77 when
# clang or libFuzzer is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
secs=300
jobs=1
merge=0
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
    --time | --jobs)
        if [ $# -lt 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
            echo "$0: $1 needs a number" >&2
            exit 2
        fi
        if [ "$1" = --time ]; then secs=$2; else jobs=$2; fi
        shift ;;
    --merge) merge=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$0: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
    esac
    shift
done
if ! command -v clang >/dev/null; then
    echo "$0: clang not found (apt-get install clang libclang-rt-dev)" >&2
    exit 77
fi
if ! ls "$(clang -print-resource-dir)"/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 &&
    ! ls "$(clang -print-resource-dir)"/lib/x86_64-*/libclang_rt.fuzzer.a >/dev/null 2>&1; then
    echo "$0: libFuzzer not found (apt-get install libclang-rt-dev)" >&2
    exit 77
fi
if [ ${#targets[@]} -eq 0 ]; then
    for f in "$here"/tests/fuzz/fuzz_*.c; do
        targets+=("$(basename "$f" .c)")
    done
fi

for t in "${targets[@]}"; do
    if [ ! -f "$here/tests/fuzz/$t.c" ]; then
        echo "$0: no fuzz target $t (tests/fuzz/$t.c); the targets:" \
            "$(cd "$here/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//' | tr '\n' ' ')" >&2
        exit 2
    fi
done

bd=$here/build-fuzz
mkdir -p "$bd"
cmake -S "$here" -B "$bd" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOVPND_FUZZ=ON -DOVPND_SANITIZE=ON >"$bd/build.log" 2>&1 ||
    { cat "$bd/build.log" >&2; exit 1; }
cmake --build "$bd" -j"$(nproc)" --target "${targets[@]}" >>"$bd/build.log" 2>&1 ||
    { tail -40 "$bd/build.log" >&2; exit 1; }

status=0
for t in "${targets[@]}"; do
    work=$bd/corpus/$t
    mkdir -p "$work"
    echo "== $t: $secs s, $jobs job(s), corpus $work + tests/fuzz/corpus/$t"
    rc=0
    par=()
    if [ "$jobs" -gt 1 ]; then
        par=(-jobs="$jobs" -workers="$jobs")
    fi
    (cd "$bd" && UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bd/tests/$t" -max_total_time="$secs" "${par[@]}" \
        -artifact_prefix="$bd/crash-$t-" -print_final_stats=1 \
        "$work" "$here/tests/fuzz/corpus/$t" >"$bd/$t.log" 2>&1) || rc=$?
    grep -E "^(#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::new_units_added)" \
        "$bd/$t.log" | tail -3 || true
    if [ $rc -ne 0 ] || ls "$bd"/crash-"$t"-* >/dev/null 2>&1; then
        echo "$t: FAILED, see $bd/$t.log and $(ls "$bd"/crash-"$t"-* 2>/dev/null | tr '\n' ' ')"
        status=1
        continue
    fi
    if [ $merge -eq 1 ]; then
        before=$(ls "$here/tests/fuzz/corpus/$t" | wc -l)
        "$bd/tests/$t" -merge=1 "$here/tests/fuzz/corpus/$t" "$work" >>"$bd/$t.log" 2>&1
        echo "$t: corpus $before -> $(ls "$here/tests/fuzz/corpus/$t" | wc -l) inputs"
    fi
done
exit $status
