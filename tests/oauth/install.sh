#!/usr/bin/env bash
# Installs the authorization server the OAuth tests run against, oauth2-mock-server, at the exact
# versions of package-lock.json (npm ci) into $OAUTH_DIR (default <repo>/target/oauth, gitignored),
# and links tests/oauth/node_modules to it so that tests/oauth/issuer.mjs finds it. Skipped when a
# stamp records the same lockfile and Node.js version, so a warm run costs a hash and no network.
#
# Usage: tests/oauth/install.sh        Env: OAUTH_DIR, NODE (default node), NPM (default npm)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${OAUTH_DIR:-$repo/target/oauth}"
node_bin="${NODE:-node}"
npm_bin="${NPM:-npm}"

log() { printf 'oauth/install: %s\n' "$*" >&2; }
die() { printf 'oauth/install: ERROR: %s\n' "$*" >&2; exit 1; }

command -v "$node_bin" >/dev/null 2>&1 || die "'$node_bin' not found on PATH: the OAuth tests need Node.js >= 20.19 (apt-get install nodejs npm)"
command -v "$npm_bin" >/dev/null 2>&1 || die "'$npm_bin' not found on PATH: the OAuth tests install oauth2-mock-server with npm"
node_version="$("$node_bin" --version)"
"$node_bin" -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
    || die "Node.js $node_version is too old: oauth2-mock-server 8 needs >= 20.19"

mkdir -p "$dest"
exec 9>"$dest/.install.lock"
flock 9
stamp="$dest/stamp"
want="$({ printf 'node %s\n' "$node_version"; cat "$here/package.json" "$here/package-lock.json"; } | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$dest/node_modules" ]]; then
    log "up to date ($dest/node_modules, lock ${want:0:12})"
else
    log "npm ci into $dest (node $node_version)"
    rm -f "$stamp"
    cp "$here/package.json" "$here/package-lock.json" "$dest/"
    # --ignore-scripts: neither oauth2-mock-server nor its dependencies need an install script.
    (cd "$dest" && "$npm_bin" ci --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=warn) >&2 \
        || die "npm ci failed in $dest (is the npm registry reachable? is package-lock.json in sync with package.json?)"
    printf '%s\n' "$want" > "$stamp"
fi
if [[ -e "$here/node_modules" && ! -L "$here/node_modules" ]]; then
    die "$here/node_modules is a real directory (a stray npm install?); remove it so it can point at $dest/node_modules"
fi
ln -sfn "$dest/node_modules" "$here/node_modules"
printf '%s\n' "$(command -v "$node_bin")"
