#!/usr/bin/env python3
"""Every ATTN_* environment variable the sources name is documented in
README.md or docs/ (the table is docs/reference/environment.md): prints
each one that is not, and exits 1 if any (test/docs/check_docs.py checks
the same and more without a build)."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1])
readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
for dirpath, _, files in os.walk(os.path.join(root, "docs")):
    for f in files:
        if f.endswith(".md"):
            readme += open(os.path.join(dirpath, f), encoding="utf-8").read()
names = set()
for top in ("dialect", "passes", "codegen", "runtime", "tools", "python"):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if not f.endswith((".cpp", ".h", ".py", ".td")):
                continue
            text = open(os.path.join(dirpath, f), encoding="utf-8",
                        errors="replace").read()
            names.update(re.findall(r'"(ATTN_[A-Z0-9_]+)"', text))
missing = sorted(n for n in names if n not in readme)
for n in missing:
    print("undocumented environment variable: " + n)
print("%d ATTN_* variables, %d undocumented" % (len(names), len(missing)))
sys.exit(1 if missing else 0)
