#!/usr/bin/env bash
# The Debian package (cmake/packaging.cmake, `cpack -G DEB`) holds what docs/install.md says it
# installs, its Depends are computed from the linked libraries, /etc/logrotate.d/ovpnd is a
# conffile, and the systemd unit starts a binary that the package installs. The package is
# under the build's install prefix: docs/install.md's /usr paths are read as PREFIX paths
# (/usr/local/... in a build with the default prefix), and its /etc and /var paths as
# PREFIX/etc and PREFIX/var unless the prefix is /usr (GNUInstallDirs).
#
# usage: tests/package/test_deb.sh [BUILD_DIR]   (default: build; it must be built)
# The package is made from BUILD_DIR's install rules into a temporary directory, as `cpack -G
# DEB` in BUILD_DIR makes it, except that the tree is installed with `cmake --install` first
# (cpack would otherwise run the `preinstall` target, a make over the whole build tree: half a
# minute on a busy machine for nothing). Exits 77 (skipped) without dpkg-dev.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
for tool in cpack dpkg-deb dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || {
        echo "SKIP: $tool not installed (scripts/install-deps.sh)"
        exit 77
    }
done
[ -f "$build/CPackConfig.cmake" ] || {
    echo "FAIL: no $build/CPackConfig.cmake (configure the build first)"
    exit 1
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ovpnd-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
[ -n "$prefix" ] || fail "no CMAKE_INSTALL_PREFIX in $build/CMakeCache.txt"
etc=/etc var=/var
if [ "$prefix" != /usr ]; then
    etc=$prefix/etc var=$prefix/var
fi
DESTDIR=$tmp/stage cmake --install "$build" >"$tmp/install.log" 2>&1 ||
    fail "cmake --install: $(tail -n 5 "$tmp/install.log")"
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" \
    -D CPACK_INSTALL_CMAKE_PROJECTS= -D "CPACK_INSTALLED_DIRECTORIES=$tmp/stage;." \
    -D CPACK_PACKAGING_INSTALL_PREFIX=/) >"$tmp/cpack.log" 2>&1 ||
    fail "cpack: $(tail -n 10 "$tmp/cpack.log")"
deb=$(find "$tmp/out" -maxdepth 1 -name 'ovpnd_*.deb' | head -n 1)
[ -n "$deb" ] || fail "cpack made no ovpnd_*.deb: $(tail -n 10 "$tmp/cpack.log")"
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/files"

# Every path of docs/install.md's list ("## 2. What the package installs": indented lines
# starting with /) is in the package.
sed -n '/^## 2\. What the package installs/,/^## 3/p' "$src/docs/install.md" |
    sed -n 's|^    \(/[^ ]*\)$|\1|p' |
    sed -e "s|^/usr/|$prefix/|" -e "s|^/etc/|$etc/|" -e "s|^/var/|$var/|" >"$tmp/documented"
[ "$(wc -l <"$tmp/documented")" -ge 10 ] || fail "docs/install.md lists no package contents"
n=0
while read -r path; do
    if [ "$path" = "$prefix/share/man/man8/ovpnd.8.gz" ] && [ ! -f "$build/ovpnd.8.gz" ]; then
        echo "note: no man page in this build (scdoc was not installed when it was configured)"
        continue
    fi
    grep -qxF "$path" "$tmp/files" || fail "$path (docs/install.md) is not in $(basename "$deb")"
    n=$((n + 1))
done <"$tmp/documented"

# Nothing the binary needs is left to chance: Depends names the libraries it links.
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libmbedtls libuv1 libssl3 libc6; do
    case "$depends" in
    *"$lib"*) ;;
    *) fail "Depends has no $lib: $depends" ;;
    esac
done
dpkg-deb -I "$deb" conffiles | grep -qxF "$etc/logrotate.d/ovpnd" ||
    fail "$etc/logrotate.d/ovpnd is not a conffile"

# The unit starts a binary the package installs.
mkdir "$tmp/x"
dpkg-deb -x "$deb" "$tmp/x"
unit=$tmp/x$prefix/lib/systemd/system/ovpnd@.service
[ -f "$unit" ] || fail "no unit at $prefix/lib/systemd/system/ovpnd@.service"
exec_bin=$(sed -n 's/^ExecStart=[-@+!:]*\([^ ]*\).*/\1/p' "$unit" | head -n 1)
grep -qxF "$exec_bin" "$tmp/files" ||
    fail "the unit's ExecStart runs $exec_bin, which the package does not install"
"$tmp/x$exec_bin" --version >/dev/null || fail "the packaged ovpnd does not run"
echo "PASS: $(basename "$deb") (prefix $prefix): $n documented paths, Depends: $depends"
