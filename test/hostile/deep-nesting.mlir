// Text nested thousands deep overflowed the parser's stack and killed
// attn-opt, attn-run and a host program through attn_compile (test/unit/
// HostileInputTest.cpp: Parse.DeepNesting); brackets nested deeper than 256
// levels are refused before parsing (attn/Dialect/SourceLimits.h), and a
// program at the limit (127 regions: 255 brackets with the function's)
// still parses.
// RUN: %python %S/Inputs/deep-nesting.py regions 30000 > %t.regions.mlir
// RUN: not attn-opt --allow-unregistered-dialect %t.regions.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: not attn-run --device=cpu --random=1x1x1 %t.regions.mlir 2>&1 | FileCheck %s --check-prefix=TOOL
// RUN: %python %S/Inputs/deep-nesting.py types 30000 > %t.types.mlir
// RUN: not attn-opt %t.types.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: %python %S/Inputs/deep-nesting.py attrs 30000 > %t.attrs.mlir
// RUN: not attn-opt %t.attrs.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: %python %S/Inputs/deep-nesting.py regions 127 > %t.ok.mlir
// RUN: attn-opt --allow-unregistered-dialect %t.ok.mlir | FileCheck %s --check-prefix=OK

// DEEP: deep-nesting.mlir.tmp.{{[a-z]+}}.mlir:{{[0-9]+}}:{{[0-9]+}}: brackets nested deeper than 256 levels: refused before parsing
// TOOL: attn-run: error: cannot parse {{.*}}regions.mlir:
// TOOL-NEXT: {{.*}}regions.mlir:{{[0-9]+}}:{{[0-9]+}}: brackets nested deeper than 256 levels
// OK: "t.end"() : () -> ()
