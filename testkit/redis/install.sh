#!/usr/bin/env bash
# Installs a pinned redis-server for the tests and the benchmark, without touching the system: the Debian packages
# below are downloaded with `apt-get download` (exact versions) and unpacked into
# $REDIS_DIR (default <repo>/target/redis/<version>, gitignored); nothing is installed system-wide.
# Debian's redis-server is the redis-check-rdb binary of redis-tools run under the name
# redis-server, so the installer links it so, next to the two libraries it needs.
# Prints the path of the redis-server launcher on stdout. A warm run costs a stat and no network.
#
# Env: REDIS_DIR (where to install), REDIS_SERVER (skip all this and use that binary).
set -euo pipefail

# Pinned versions (Debian 12 "bookworm"). Several revisions of redis-tools are accepted, newest
# first, because Debian's mirrors keep only the current one of each suite.
REDIS_VERSION=7.0.15
REDIS_TOOLS=(5:7.0.15-1~deb12u7 5:7.0.15-1~deb12u6)
LIBJEMALLOC2=5.3.0-1
LIBLZF1=3.6-3

log() { printf 'redis/install: %s\n' "$*" >&2; }
die() {
    printf 'redis/install: ERROR: %s\n' "$*" >&2
    printf 'redis/install: the Redis tests need redis-server %s: let this script download it (needs apt-get and Debian 12 package lists: run apt-get update), or set REDIS_SERVER=/path/to/redis-server (7.x).\n' "$REDIS_VERSION" >&2
    exit 1
}

if [[ -n "${REDIS_SERVER:-}" ]]; then
    [[ -x "$REDIS_SERVER" ]] || die "REDIS_SERVER=$REDIS_SERVER is not an executable"
    printf '%s\n' "$REDIS_SERVER"
    exit 0
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${REDIS_DIR:-$repo/target/redis/$REDIS_VERSION}"
launcher="$dest/redis-server"

mkdir -p "$dest"
exec 9>"$dest/.install.lock"
flock 9
if [[ -x "$launcher" ]] && "$launcher" --version 2>/dev/null | grep -q "v=$REDIS_VERSION "; then
    printf '%s\n' "$launcher"
    exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get not found"
command -v dpkg-deb >/dev/null 2>&1 || die "dpkg-deb not found"
downloads="$dest/debs"
rm -rf "$downloads" "$dest/root"
mkdir -p "$downloads"

fetch() { (cd "$downloads" && apt-get download -q "$1=$2" >/dev/null 2>&1); }
fetched=
for version in "${REDIS_TOOLS[@]}"; do
    if fetch redis-tools "$version"; then fetched=$version; break; fi
done
if [[ -z "$fetched" ]]; then
    log "redis-tools not in the package lists; running apt-get update once"
    apt-get update -q >/dev/null 2>&1 || die "apt-get update failed"
    for version in "${REDIS_TOOLS[@]}"; do
        if fetch redis-tools "$version"; then fetched=$version; break; fi
    done
fi
[[ -n "$fetched" ]] || die "none of redis-tools ${REDIS_TOOLS[*]} can be downloaded"
fetch libjemalloc2 "$LIBJEMALLOC2" || die "libjemalloc2=$LIBJEMALLOC2 cannot be downloaded"
fetch liblzf1 "$LIBLZF1" || die "liblzf1=$LIBLZF1 cannot be downloaded"
for deb in "$downloads"/*.deb; do
    dpkg-deb -x "$deb" "$dest/root" || die "dpkg-deb -x $deb failed"
done
[[ -x "$dest/root/usr/bin/redis-check-rdb" ]] || die "redis-tools has no usr/bin/redis-check-rdb"
# redis picks its role from argv[0]: the binary must be called redis-server.
ln -sfn redis-check-rdb "$dest/root/usr/bin/redis-server"
cat > "$launcher.tmp" <<LAUNCHER
#!/bin/sh
# redis-server $fetched (Debian), unpacked by testkit/redis/install.sh.
LD_LIBRARY_PATH="$dest/root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$dest/root/usr/bin/redis-server" "\$@"
LAUNCHER
chmod +x "$launcher.tmp"
mv "$launcher.tmp" "$launcher"
"$launcher" --version | grep -q "v=$REDIS_VERSION " || die "the unpacked redis-server does not run: $("$launcher" --version 2>&1 | head -1)"
log "installed redis-server $fetched into $dest"
printf '%s\n' "$launcher"
