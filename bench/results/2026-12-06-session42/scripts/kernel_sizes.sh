#!/usr/bin/env bash
# Sizes of the functions placed in the worker kernel's SASS section of a CUDA binary built here (no cuobjdump
# needed): the cubin is cut out of the binary's .nv_fatbin, and its symbol table lists each function's bytes.
# Usage: kernel_sizes.sh [binary] (default build/cuda/bench/weft_bench_device); prints "bytes name", largest last.
set -euo pipefail
bin=${1:-build/cuda/bench/weft_bench_device}
tmp=$(mktemp -d)
objcopy -O binary --only-section=.nv_fatbin "$bin" "$tmp/fb.bin"
python3 - "$tmp" <<'PY'
import struct, sys
d = open(sys.argv[1] + '/fb.bin', 'rb').read()
j = d.find(b'\x7fELF')  # the first (sm_90) cubin
shoff = struct.unpack_from('<Q', d, j + 0x28)[0]
shentsize, shnum = struct.unpack_from('<HH', d, j + 0x3A)
open(sys.argv[1] + '/cubin.o', 'wb').write(d[j:j + shoff + shnum * shentsize])
PY
sec=$(readelf -SW "$tmp/cubin.o" 2>/dev/null | sed 's/\[ */[/' |
  awk '$2 ~ /^\.text\..*weft_worker_kernel/ {gsub(/[][]/, "", $1); print $1; exit}')
readelf -sW "$tmp/cubin.o" 2>/dev/null | awk -v s="$sec" '$3 > 0 && $7 == s {n = $8; sub(/.*weft_worker_kernelEPNS0_12device_schedE\$/, "", n); print $3, n}' |
  sort -n | c++filt
rm -rf "$tmp"
