#!/usr/bin/env python3
# Reads call a's per-instruction table (ncu --page source --csv --print-source sass) and the worker kernel's
# symbol table (prof_spawn-symbols.txt: readelf -sW of the cubin's weft_worker_kernel section, made as in session
# 42's kernel_sizes.sh) and prints, per function: bytes, bytes executed at least once, share of executed warp
# instructions and of stall samples, entries and lanes per entry; then the hot-code footprint, the local-memory
# and fence counts, and (with --blocks LO HI) the basic blocks of an address range with their counts.
# Usage: sass_profile.py s43a/source-sass.csv s43a/prof_spawn-symbols.txt [--blocks 7070 17000]
import csv, lzma, re, subprocess, sys, collections
opener = lzma.open if sys.argv[1].endswith('.xz') else open
rows = list(csv.reader(opener(sys.argv[1], 'rt')))
hdr, data = rows[1], rows[2:]
col = {h: i for i, h in enumerate(hdr)}
base = int(data[0][0], 16)
syms = sorted((int(a, 16), int(n), name) for a, n, name in (l.split() for l in open(sys.argv[2])))
def num(r, h): return float(r[col[h]].replace(',', '') or 0)
def fn_of(off):
    for a, n, s in syms:
        if a <= off < a + n: return s
    return '(kernel entry)'
def pretty(n):
    n = re.sub(r'^\$.*?weft_worker_kernel.*?\$', '', n)
    return subprocess.run(['c++filt'], input=n, capture_output=True, text=True).stdout.strip()[:60]
EX, TH, SA, NI = 'Instructions Executed', 'Thread Instructions Executed', 'Warp Stall Sampling (All Samples)', 'stall_no_inst'
if len(sys.argv) > 3 and sys.argv[3] == '--blocks':
    lo, hi = int(sys.argv[4], 16), int(sys.argv[5], 16)
    blk = None  # [start, executions, thread instructions, samples, opcodes]
    def flush(b):
        if b: print(f"{b[0]:6x} n={len(b[4]):3d} ex={b[1]:10.0f} lanes={b[2] / max(b[1] * len(b[4]), 1):5.1f} "
                    f"samples={b[3]:6.0f} | {' '.join(b[4])[:140]}")
    for r in data:
        off = int(r[0], 16) - base
        if not lo <= off < hi: continue
        ex = num(r, EX)
        if blk is None or ex != blk[1]:
            flush(blk); blk = [off, ex, 0.0, 0.0, []]
        words = r[1].split()
        blk[2] += num(r, TH); blk[3] += num(r, SA); blk[4].append(words[1] if words[0].startswith('@') else words[0])
    flush(blk)
    sys.exit()
agg = collections.defaultdict(lambda: [0, 0, 0.0, 0.0, 0.0, None])
tot_ex = tot_sa = tot_ni = 0.0
per_instr, kinds = [], collections.Counter()
for r in data:
    off = int(r[0], 16) - base
    f = fn_of(off); a = agg[f]
    ex, sa, ni = num(r, EX), num(r, SA), num(r, NI)
    if a[5] is None: a[5] = (ex, num(r, TH))
    a[0] += 16; a[1] += 16 * (ex > 0); a[2] += ex; a[3] += sa; a[4] += ni
    tot_ex += ex; tot_sa += sa; tot_ni += ni
    per_instr.append(ex)
    for k in ('CCTL.IVALL', 'MEMBAR.ALL.GPU', 'LDL', 'STL'):
        if k in r[1]: kinds[k] += ex
print(f"{len(data)} instructions; {tot_ex:.3g} warp instructions executed; {tot_sa:.0f} stall samples, "
      f"{100 * tot_ni / tot_sa:.1f} % of them waiting for an instruction")
print(f"{'function':60s} {'bytes':>6s} {'run':>6s} {'instr%':>6s} {'samp%':>6s} {'entries':>8s} {'lanes':>5s}")
for f, a in sorted(agg.items(), key=lambda kv: -kv[1][2]):
    if a[2] < 1e6: continue
    e, t = a[5]
    print(f"{pretty(f):60s} {a[0]:6d} {a[1]:6d} {100 * a[2] / tot_ex:6.2f} {100 * a[3] / tot_sa:6.2f} {e / 1e6:7.2f}M {t / max(e, 1):5.1f}")
per_instr.sort(reverse=True)
c, k, marks = 0.0, 0, [0.5, 0.9, 0.99]
for i, ex in enumerate(per_instr):
    c += ex
    while k < len(marks) and c >= marks[k] * tot_ex:
        print(f"{100 * marks[k]:.0f} % of executed warp instructions lie in the {i + 1} hottest instructions ({(i + 1) * 16 / 1024:.1f} KB)"); k += 1
for kname, v in kinds.items(): print(f"{kname}: {v / 1e6:.1f}M warp executions")
