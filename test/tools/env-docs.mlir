// Every ATTN_* variable the sources read is documented (README.md, docs/).
// RUN: python3 %S/Inputs/env-docs.py %attn_examples/.. | FileCheck %s
// CHECK: {{[1-9][0-9]*}} ATTN_* variables, 0 undocumented
