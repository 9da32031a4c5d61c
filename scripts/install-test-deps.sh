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
