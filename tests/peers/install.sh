#!/usr/bin/env bash
# Installs the third-party MCP clients the peer tests drive, at exact versions:
#   node:   package.json + package-lock.json (npm ci)    -> $PEERS_DIR/node/node_modules
#   python: requirements.txt (a pip freeze, all ==)      -> $PEERS_DIR/py (a venv)
#   fastmcp: requirements-fastmcp.txt (the same, fastmcp-tasks) -> $PEERS_DIR/fastmcp (a venv)
#   langchain: requirements-langchain.txt (the same, langchain-mcp-adapters) -> $PEERS_DIR/langchain
# PEERS_DIR defaults to <repo>/target/peers (gitignored). Each half is skipped when a
# stamp file records the same inputs (manifest hashes + interpreter version), so a warm
# run costs a few hashes and no network.
#
# Usage: tests/peers/install.sh [node|python|fastmcp|langchain|all]   (default: all)
# Env:   PEERS_DIR, NODE (default: node), NPM (default: npm), PYTHON (default: python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
peers_dir="${PEERS_DIR:-$repo/target/peers}"
node_bin="${NODE:-node}"
npm_bin="${NPM:-npm}"
python_bin="${PYTHON:-python3}"

log() { printf 'peers/install: %s\n' "$*" >&2; }
die() { printf 'peers/install: ERROR: %s\n' "$*" >&2; exit 1; }

# sha256 of the given files plus any extra strings, one line.
fingerprint() {
    local extra="$1"; shift
    { printf '%s\n' "$extra"; cat "$@"; } | sha256sum | cut -d' ' -f1
}

install_node() {
    command -v "$node_bin" >/dev/null 2>&1 || die "'$node_bin' not found on PATH: the peer tests need Node.js >= 20 (apt-get install nodejs npm)"
    command -v "$npm_bin" >/dev/null 2>&1 || die "'$npm_bin' not found on PATH: the peer tests need npm to install the pinned MCP clients"
    local node_version major
    node_version="$("$node_bin" --version)"
    major="${node_version#v}"; major="${major%%.*}"
    [[ "$major" -ge 20 ]] || die "Node.js $node_version is too old: @modelcontextprotocol/client 2.x needs >= 20"

    local dest="$peers_dir/node" stamp want
    stamp="$peers_dir/node.stamp"
    want="$(fingerprint "node $node_version" "$here/package.json" "$here/package-lock.json")"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$dest/node_modules" ]]; then
        log "node: up to date ($dest/node_modules, lock ${want:0:12})"
    else
        log "node: npm ci into $dest (node $node_version, npm $("$npm_bin" --version 2>/dev/null))"
        mkdir -p "$dest"
        rm -f "$stamp"
        cp "$here/package.json" "$here/package-lock.json" "$dest/"
        # npm ci: exactly the lockfile, fails if package.json and the lock disagree.
        # --ignore-scripts: none of these packages needs an install script.
        (cd "$dest" && "$npm_bin" ci --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=warn) >&2 \
            || die "npm ci failed in $dest (is the npm registry reachable? is package-lock.json in sync with package.json?)"
        printf '%s\n' "$want" > "$stamp"
        log "node: installed $(cd "$dest" && "$node_bin" -e '
            const l = require("./package-lock.json").packages;
            console.log(Object.keys(l[""].dependencies).map(n => n + "@" + l["node_modules/" + n].version).join(", "))')"
    fi
    # ESM resolves bare specifiers from the importing file's directory upwards (NODE_PATH is
    # ignored), so the scripts in tests/peers/ find the packages through this symlink.
    if [[ -d "$here/node_modules" && ! -L "$here/node_modules" ]]; then
        die "$here/node_modules is a real directory (a stray npm install?); remove it so it can point at $dest/node_modules"
    fi
    ln -sfn "$dest/node_modules" "$here/node_modules"
}

# A venv at $peers_dir/$1 from the frozen requirements file $2 (installed with --no-deps), skipped
# when its stamp matches; $3 is the package whose version the log names.
install_venv() {
    local name="$1" requirements="$here/$2" package="$3"
    command -v "$python_bin" >/dev/null 2>&1 || die "'$python_bin' not found on PATH: the Python peer tests need CPython >= 3.10 (set PYTHON=...)"
    local py_version
    py_version="$("$python_bin" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"
    "$python_bin" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
        || die "Python $py_version is too old: $package needs >= 3.10 (set PYTHON=...)"

    local dest="$peers_dir/$name" stamp want
    stamp="$peers_dir/$name.stamp"
    want="$(fingerprint "python $py_version $(command -v "$python_bin")" "$requirements")"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$dest/bin/python" ]]; then
        log "$name: up to date ($dest, requirements ${want:0:12})"
        return
    fi
    log "$name: creating venv $dest (python $py_version) and installing $2"
    rm -f "$stamp"
    rm -rf "$dest"
    "$python_bin" -m venv "$dest" || die "python -m venv failed (Debian: apt-get install python3-venv)"
    # --no-deps: the requirements file is the complete, frozen tree; nothing unpinned may slip in.
    "$dest/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$requirements" >&2 \
        || die "pip install -r tests/peers/$2 failed (is PyPI reachable?)"
    "$dest/bin/python" -m pip check >&2 \
        || die "pip check failed: tests/peers/$2 is not a complete dependency tree; regenerate it with pip freeze"
    printf '%s\n' "$want" > "$stamp"
    log "$name: installed $("$dest/bin/python" -c "import importlib.metadata as m; print('$package==' + m.version('$package'))")"
}

install_python() { install_venv py requirements.txt mcp; }
install_fastmcp() { install_venv fastmcp requirements-fastmcp.txt fastmcp-tasks; }
install_langchain() { install_venv langchain requirements-langchain.txt langchain-mcp-adapters; }

what="${1:-all}"
mkdir -p "$peers_dir"
# One installer at a time per PEERS_DIR (parallel test processes, two terminals).
exec 9>"$peers_dir/.install.lock"
flock 9
case "$what" in
    node) install_node ;;
    python) install_python ;;
    fastmcp) install_fastmcp ;;
    langchain) install_langchain ;;
    all) install_node; install_python; install_fastmcp; install_langchain ;;
    *) die "unknown argument '$what' (expected node, python, fastmcp, langchain or all)" ;;
esac
