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
// A file that is not a .npy (here an endless one) is refused from its first
// bytes, not read whole.
// RUN: not attn-run %attn_examples/fox.mlir --device=cpu --inputs=/dev/zero,/dev/zero,/dev/zero,/dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO

// WRAP: attn-run: error: --random={{.*}}: argument 0 would be tensor<{{.*}}xf32>, more than 2^62 bytes
// SYNTAX: attn-run: error: --random must be BxHxT with positive integers
// BETA: attn-run: error: --beta-range must be lo,hi (finite) with lo <= hi
// ZERO: attn-run: error: /dev/zero: not a .npy file (bad magic string)
