#!/usr/bin/env bash
# Installs Claude Code at an exact version (package.json + package-lock.json, npm ci) into
# $CLAUDE_CODE_DIR (default <repo>/target/claude-code, gitignored) and prints the path of its
# native binary on stdout. The npm package `@anthropic-ai/claude-code` brings the binary in its
# platform package (`@anthropic-ai/claude-code-linux-x64`, an optional dependency), which runs
# without Node.js; its postinstall script only copies that binary over a placeholder, so the
# install runs no script and the tests run the platform package's binary. Skipped when a stamp
# file records the same lockfile, so a warm run costs a hash and no network.
#
# Usage: tests/claude_code/install.sh
# Env:   CLAUDE_CODE_DIR, NPM (default: npm)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${CLAUDE_CODE_DIR:-$repo/target/claude-code}"
npm_bin="${NPM:-npm}"

log() { printf 'claude_code/install: %s\n' "$*" >&2; }
die() { printf 'claude_code/install: ERROR: %s\n' "$*" >&2; exit 1; }

[[ "$(uname -s)-$(uname -m)" == "Linux-x86_64" ]] \
    || die "the tests run the linux-x64 binary; this is $(uname -s)-$(uname -m)"
command -v "$npm_bin" >/dev/null 2>&1 || die "'$npm_bin' not found on PATH: installing Claude Code needs npm (apt-get install npm)"

mkdir -p "$dest"
# One installer at a time (parallel test processes, two terminals).
exec 9>"$dest/.install.lock"
flock 9

stamp="$dest/install.stamp"
want="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
claude="$dest/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$claude" ]]; then
    log "up to date ($dest, lock ${want:0:12})"
else
    log "npm ci into $dest"
    rm -f "$stamp"
    cp "$here/package.json" "$here/package-lock.json" "$dest/"
    # --engine-strict=false: the wrapper package asks for Node >= 22, which only its scripts
    # (not run) would use.
    (cd "$dest" && "$npm_bin" ci --ignore-scripts --engine-strict=false --no-audit --no-fund --prefer-offline --loglevel=error) >&2 \
        || die "npm ci failed in $dest (is the npm registry reachable? is package-lock.json in sync with package.json?)"
    [[ -x "$claude" ]] || die "$claude is missing after npm ci"
    printf '%s\n' "$want" > "$stamp"
    log "installed $("$claude" --version)"
fi
printf '%s\n' "$claude"
