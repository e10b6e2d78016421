#!/usr/bin/env python3
"""SASS of an attention kernel's key loop: instruction counts per step.

Usage: bench/sass_loop.py [--fun attention[,NAME_IN_B]] A.cubin [B.cubin]

Disassembles each cubin (cuobjdump -sass, or nvdisasm; CUOBJDUMP / NVDISASM
name the tools, else PATH), finds the key loop (the backward branch whose
body holds the most HMMA / HGMMA instructions) and counts:

  body: every instruction of the loop body;
  step: the shortest path from the loop head to its back edge, i.e. a key
        tile that takes no optional branch (the masked-tile scf.if and any
        other skipped region): what an unmasked key tile executes.

Prints both totals and the step's opcodes by class; with two cubins, the
step's per-opcode counts side by side (A - B), the largest differences
first. Used for the block-program vs direct kernel comparison in
docs/gpu-backend.md ("Per key tile: block program against direct").
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

LINE = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;')


def disassemble(path, fun):
    tool = os.environ.get('CUOBJDUMP') or shutil.which('cuobjdump')
    if tool:
        cmd = [tool, '-sass', '-fun', fun, path]
    else:
        tool = os.environ.get('NVDISASM') or shutil.which('nvdisasm')
        if not tool:
            sys.exit('sass_loop.py: neither cuobjdump nor nvdisasm found '
                     '(set CUOBJDUMP or NVDISASM, or pip install '
                     'nvidia-cuda-cuobjdump)')
        cmd = [tool, '-c', path]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    insts = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            insts.append((int(m.group(1), 16), m.group(2)))
    if not insts:
        sys.exit(f'sass_loop.py: no SASS for function {fun} in {path}')
    return insts


def parse(text):
    """(predicate or None, opcode, operand text)."""
    pred = None
    if text.startswith('@'):
        pred, text = text.split(None, 1)
    parts = text.split(None, 1)
    return pred, parts[0], parts[1] if len(parts) > 1 else ''


def branch_target(ops):
    m = re.search(r'(0x[0-9a-f]+)\s*$', ops)
    return int(m.group(1), 16) if m else None


def is_mma(op):
    return op.startswith('HMMA') or op.startswith('HGMMA')


def key_loop(insts):
    """(head index, back-edge index) of the loop with the most MMAs."""
    at = {a: i for i, (a, _) in enumerate(insts)}
    best = None
    for i, (a, text) in enumerate(insts):
        _, op, ops = parse(text)
        if not op.startswith('BRA'):
            continue
        t = branch_target(ops)
        if t is None or t >= a or t not in at:
            continue
        h = at[t]
        mmas = sum(is_mma(parse(x)[1]) for _, x in insts[h:i + 1])
        if best is None or mmas > best[0]:
            best = (mmas, h, i)
    if not best or best[0] == 0:
        sys.exit('sass_loop.py: no loop with MMA instructions')
    return best[1], best[2]


def shortest_step(insts, h, e):
    """Indices on the shortest path from h to e (forward edges in [h, e])."""
    at = {a: i for i, (a, _) in enumerate(insts)}
    inf = float('inf')
    dist = {h: 1}
    prev = {}
    for i in range(h, e + 1):
        if i not in dist:
            continue
        pred, op, ops = parse(insts[i][1])
        succ = []
        if op.startswith('BRA') or op.startswith('JMP'):
            t = branch_target(ops)
            if t is not None and t in at and h <= at[t] <= e and at[t] > i:
                succ.append(at[t])
            if pred is not None and i < e:
                succ.append(i + 1)
        elif not op.startswith('EXIT') or pred is not None:
            if i < e:
                succ.append(i + 1)
        for s in succ:
            if dist[i] + 1 < dist.get(s, inf):
                dist[s] = dist[i] + 1
                prev[s] = i
    if e not in dist:
        sys.exit('sass_loop.py: the back edge is not reachable from the head')
    path, i = [e], e
    while i != h:
        i = prev[i]
        path.append(i)
    return path[::-1]


CLASSES = [
    ('mma', r'^(HMMA|HGMMA)'),
    ('ldmatrix', r'^LDSM'),
    ('cp.async', r'^LDGSTS'),
    ('shared ld/st', r'^(LDS|STS)'),
    ('global ld/st', r'^(LDG|STG)'),
    ('exp2 (MUFU)', r'^MUFU'),
    ('float fma/mul/add', r'^(FFMA|FMUL|FADD|HFMA2|HMUL2|HADD2)'),
    ('float max/sel/cmp', r'^(FMNMX|FSEL|FSETP|FCHK)'),
    ('convert', r'^(F2F|F2FP|I2F|F2I)'),
    ('shuffle', r'^SHFL'),
    ('barrier/fence/dep', r'^(BAR|MEMBAR|FENCE|DEPBAR|LDGDEPBAR|WARPGROUP|'
                          r'ARRIVES|SYNCS|WARPSYNC|CCTL)'),
    ('predicates', r'^(ISETP|PLOP3|P2R|R2P|UISETP|UPLOP3|VOTE)'),
    ('moves', r'^(MOV|IMAD\.MOV|UMOV|R2UR|S2R|S2UR|CS2R|PRMT|SEL|USEL)'),
    ('int address math', r'^(IMAD|IADD|LEA|LOP|SHF|IABS|UIMAD|UIADD|ULEA|'
                         r'ULOP|USHF|VIADD|UIADD3|IMNMX|VIMNMX|POPC|FLO|'
                         r'BMSK|SGXT|BREV)'),
    ('branch', r'^(BRA|JMP|BSSY|BSYNC|EXIT|CALL|RET)'),
]


def klass(op):
    for name, rx in CLASSES:
        if re.match(rx, op):
            return name
    return 'other'


def mnemonic(op):
    # HGMMA.64x64x16.F32.BF16 -> HGMMA; IMAD.WIDE.U32 -> IMAD.WIDE
    parts = op.split('.')
    keep = parts[:1]
    if len(parts) > 1 and parts[1] in ('WIDE', 'MOV', 'HI', 'SHL', 'X',
                                       'U32', 'IADD', 'SHL'):
        keep.append(parts[1])
    return '.'.join(keep)


def analyse(path, fun):
    insts = disassemble(path, fun)
    h, e = key_loop(insts)
    step = shortest_step(insts, h, e)
    ops = [parse(insts[i][1])[1] for i in step]
    return {
        'body': e - h + 1,
        'step': len(step),
        'range': (insts[h][0], insts[e][0]),
        'classes': collections.Counter(klass(o) for o in ops),
        'ops': collections.Counter(mnemonic(o) for o in ops),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--fun', default='attention')
    ap.add_argument('cubins', nargs='+')
    a = ap.parse_args()
    # --fun A,B: function A in the first cubin, B in the second (the two
    # lowerings name their kernels differently).
    funs = a.fun.split(',')
    res = [analyse(p, funs[min(i, len(funs) - 1)])
           for i, p in enumerate(a.cubins[:2])]
    for p, r in zip(a.cubins, res):
        print(f'{p}: loop 0x{r["range"][0]:x}-0x{r["range"][1]:x}, '
              f'body {r["body"]}, step {r["step"]}')
    names = [n for n, _ in CLASSES] + ['other']
    print('| class | ' + ' | '.join(os.path.basename(p) for p in a.cubins[:2])
          + (' | diff |' if len(res) == 2 else ' |'))
    print('| --- ' * (len(res) + (2 if len(res) == 2 else 1)) + '|')
    for n in names:
        v = [r['classes'].get(n, 0) for r in res]
        if any(v):
            row = f'| {n} | ' + ' | '.join(map(str, v))
            if len(v) == 2:
                row += f' | {v[0] - v[1]:+d}'
            print(row + ' |')
    if len(res) == 2:
        keys = set(res[0]['ops']) | set(res[1]['ops'])
        diff = sorted(keys, key=lambda k: -abs(res[0]['ops'].get(k, 0) -
                                               res[1]['ops'].get(k, 0)))
        print('opcodes (A B A-B):', ', '.join(
            f'{k} {res[0]["ops"].get(k, 0)} {res[1]["ops"].get(k, 0)} '
            f'{res[0]["ops"].get(k, 0) - res[1]["ops"].get(k, 0):+d}'
            for k in diff if res[0]['ops'].get(k, 0) != res[1]['ops'].get(k, 0)))


if __name__ == '__main__':
    main()
