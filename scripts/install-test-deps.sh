#!/usr/bin/env bash
# System packages the tests use (Debian, as root): bubblewrap for the Bash sandbox.
# Idempotent: installs only what is missing.
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v git >/dev/null 2>&1 || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "install these packages first: ${need[*]}" >&2
    exit 1
  fi
fi

# Node.js for the npm MCP server the tests run (@modelcontextprotocol/server-everything).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "install Node.js (node and npm) first" >&2
    exit 1
  fi
fi

# npm MCP servers, into .cache/npm (gitignored); tests find them there.
REPO="$(cd "$(dirname "$0")/.." && pwd)"
EVERYTHING_VERSION=2026.8.31
pkg="$REPO/.cache/npm/node_modules/@modelcontextprotocol/server-everything/package.json"
if [ ! -f "$pkg" ] || ! grep -q "\"version\": \"$EVERYTHING_VERSION\"" "$pkg"; then
  npm install --prefix "$REPO/.cache/npm" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >/dev/null
fi
