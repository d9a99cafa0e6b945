#!/usr/bin/env bash
# Finds (or installs, pinned) PostgreSQL 15 for the tests and the benchmark, and prints the
# directory of its programs (initdb, postgres, pg_ctl, psql) on stdout.
#
# Order: $PG_BIN if set; else Debian's /usr/lib/postgresql/15/bin; else, as root with apt-get,
# `apt-get install -y postgresql-15=<pinned version>` (running `apt-get update` once if the
# package lists lack it). Otherwise it fails saying how to get it: the Postgres tests never skip.
#
# Env: PG_BIN (use the programs in that directory instead).
set -euo pipefail

PG_MAJOR=15
# Debian 12 "bookworm"; several revisions are accepted, newest first, because Debian's mirrors
# keep only the current one of each suite.
PG_VERSIONS=(15.18-0+deb12u1)

log() { printf 'postgres/install: %s\n' "$*" >&2; }
die() {
    printf 'postgres/install: ERROR: %s\n' "$*" >&2
    printf 'postgres/install: the Postgres tests need PostgreSQL %s (initdb, postgres, pg_ctl, psql): run this script as root on Debian 12 (it runs apt-get install postgresql-15=%s), or install PostgreSQL %s yourself and set PG_BIN=/path/to/its/bin.\n' "$PG_MAJOR" "${PG_VERSIONS[0]}" "$PG_MAJOR" >&2
    exit 1
}

check() {
    local bin="$1"
    for program in initdb postgres pg_ctl psql; do
        [[ -x "$bin/$program" ]] || return 1
    done
    "$bin/postgres" --version | grep -q "(PostgreSQL) $PG_MAJOR\." || return 1
}

if [[ -n "${PG_BIN:-}" ]]; then
    check "$PG_BIN" || die "PG_BIN=$PG_BIN does not hold PostgreSQL $PG_MAJOR's initdb, postgres, pg_ctl and psql"
    printf '%s\n' "$PG_BIN"
    exit 0
fi

bin="/usr/lib/postgresql/$PG_MAJOR/bin"
if check "$bin"; then
    printf '%s\n' "$bin"
    exit 0
fi

[[ "$(id -u)" == 0 ]] || die "$bin is missing and installing it needs root"
command -v apt-get >/dev/null 2>&1 || die "$bin is missing and apt-get is not available"
install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-$PG_MAJOR=$1" >/dev/null 2>&1
}
installed=
for version in "${PG_VERSIONS[@]}"; do
    if install "$version"; then installed=$version; break; fi
done
if [[ -z "$installed" ]]; then
    log "postgresql-$PG_MAJOR not in the package lists; running apt-get update once"
    apt-get update -q >/dev/null 2>&1 || die "apt-get update failed"
    for version in "${PG_VERSIONS[@]}"; do
        if install "$version"; then installed=$version; break; fi
    done
fi
[[ -n "$installed" ]] || die "none of postgresql-$PG_MAJOR ${PG_VERSIONS[*]} can be installed"
check "$bin" || die "postgresql-$PG_MAJOR=$installed is installed but $bin does not hold its programs"
log "installed postgresql-$PG_MAJOR $installed"
printf '%s\n' "$bin"
