// Sizes that overflow are errors, not empty arrays or exceptions:
// 2^32 x 2^32 x 2 used to exit 0 without computing, T = 2^63 - 1 to throw
// std::length_error.
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=4294967296x4294967296x2 2>&1 | FileCheck %s --check-prefix=WRAP
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=1x4x9223372036854775807 2>&1 | FileCheck %s --check-prefix=WRAP
// RUN: not attn-run %attn_examples/mta.mlir --device=cpu --random=1x9223372036854775807x4 2>&1 | FileCheck %s --check-prefix=WRAP
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=1x4x99999999999999999999 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=0x4x8 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --random=-1x4x8 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not attn-run %attn_examples/path.mlir --device=cpu --random=1x2x8 --beta-range=nan,1 2>&1 | FileCheck %s --check-prefix=BETA
// RUN: not attn-run %attn_examples/path.mlir --device=cpu --random=1x2x8 --beta-range=0,inf 2>&1 | FileCheck %s --check-prefix=BETA
// Inputs must be regular files: a device (here an endless one) is refused
// without reading, and a FIFO with no writer (which blocked attn-run in
// open) at once.
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --inputs=/dev/zero,/dev/zero,/dev/zero,/dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: rm -f %t.fifo && mkfifo %t.fifo
// RUN: not timeout 60 attn-run %attn_examples/fox.mlir --device=cpu --inputs=%t.fifo,%t.fifo,%t.fifo,%t.fifo 2>&1 | FileCheck %s --check-prefix=FIFO

// WRAP: attn-run: error: --random={{.*}}: argument 0 would be tensor<{{.*}}xf32>, more than 2^62 bytes
// SYNTAX: attn-run: error: --random must be BxHxT with positive integers
// BETA: attn-run: error: --beta-range must be lo,hi (finite) with lo <= hi
// ZERO: attn-run: error: /dev/zero: not a regular file (a character device)
// FIFO: attn-run: error: {{.*}}.fifo: not a regular file (a FIFO)
