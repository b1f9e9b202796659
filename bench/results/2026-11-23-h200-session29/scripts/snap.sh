#!/usr/bin/env bash
# snap.sh DIR: copies the working tree (tracked + untracked, not ignored, no bench/results) to DIR
set -euo pipefail
rm -rf "$1"; mkdir -p "$1"
cd /work/main && git ls-files -co --exclude-standard | grep -v ^bench/results | tar -cf - -T - | tar -xf - -C "$1"
