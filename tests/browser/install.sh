#!/usr/bin/env bash
# Installs what the MCP Apps browser test (tests/apps_browser.rs) needs, at exact versions:
#   package.json + package-lock.json (npm ci) -> $BROWSER_DIR/node_modules: the official
#     @modelcontextprotocol/ext-apps host bridge, esbuild (bundles host.mjs for the page) and
#     playwright-core (drives the browser; it downloads no browser: none is asked of it);
#   Debian's `chromium` at $CHROMIUM_VERSION, with apt-get, its .deb files kept in
#     $BROWSER_DIR/debs so that a reinstall needs no download.
# Node is the conformance suite's pinned one (tests/conformance/install.sh). tests/skills_ts.rs uses the
# same packages (the TypeScript client's skills host side).
# BROWSER_DIR defaults to <repo>/target/browser (gitignored). Each half is skipped when already
# done (a stamp of the lockfile; `chromium --version`), so a warm run costs no network.
#
# Usage: tests/browser/install.sh      prints two lines: the node binary, the chromium binary
# Env:   BROWSER_DIR, NPM (default: npm), CHROMIUM_VERSION (default: the pin below)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${BROWSER_DIR:-$repo/target/browser}"
npm_bin="${NPM:-npm}"
# Debian 12's security build of Chromium; `apt-cache policy chromium` shows what the mirror has.
chromium_version="${CHROMIUM_VERSION:-148.0.7778.167-1~deb12u1}"

log() { printf 'browser/install: %s\n' "$*" >&2; }
die() { printf 'browser/install: ERROR: %s\n' "$*" >&2; exit 1; }

node="$("$repo/tests/conformance/install.sh")"
mkdir -p "$dest"
exec 9>"$dest/.install.lock"
flock 9

stamp="$dest/install.stamp"
want="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$dest/node_modules/playwright-core" ]]; then
    log "npm packages up to date ($dest, lock ${want:0:12})"
else
    command -v "$npm_bin" >/dev/null 2>&1 || die "'$npm_bin' not found on PATH (apt-get install npm)"
    log "npm ci into $dest"
    rm -f "$stamp"
    cp "$here/package.json" "$here/package-lock.json" "$dest/"
    # --ignore-scripts: esbuild's binary comes in its platform package, and playwright-core has
    # no install script that matters here (it must download no browser).
    (cd "$dest" && "$npm_bin" ci --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error) >&2 \
        || die "npm ci failed in $dest (is the npm registry reachable?)"
    printf '%s\n' "$want" > "$stamp"
fi

chromium=/usr/bin/chromium
have="$(dpkg-query -W -f='${Version}' chromium 2>/dev/null || true)"
if [[ "$have" != "$chromium_version" || ! -x "$chromium" ]]; then
    [[ "$(id -u)" == 0 ]] || die "chromium $chromium_version is not installed, and installing it needs root (apt-get install chromium=$chromium_version)"
    log "apt-get install chromium=$chromium_version (debs kept in $dest/debs)"
    mkdir -p "$dest/debs/partial"
    apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dir::Cache::archives="$dest/debs" "$@"; }
    if ! apt_get install --no-install-recommends "chromium=$chromium_version" "chromium-common=$chromium_version" >&2; then
        apt-get update -q >&2 || true
        apt_get install --no-install-recommends "chromium=$chromium_version" "chromium-common=$chromium_version" >&2 \
            || die "could not install chromium $chromium_version (apt-cache policy chromium shows what the mirror has; set CHROMIUM_VERSION to move the pin)"
    fi
fi
[[ -x "$chromium" ]] || die "$chromium is missing after the install"
printf '%s\n%s\n' "$node" "$chromium"
