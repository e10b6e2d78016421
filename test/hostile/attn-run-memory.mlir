// A run that cannot fit is refused up front, naming what it needs, instead
// of crashing in JIT code (the reference pipeline at T = 200000 materializes
// 1.5e11-byte score maps) or aborting with `LLVM ERROR: out of memory`.
// The address space is bounded with ulimit -v so the test means the same on
// any machine; ASan reserves terabytes of shadow memory, hence not there.
// UNSUPPORTED: asan
// RUN: (ulimit -v 16000000; not attn-run %attn_examples/fox.mlir --device=cpu --pipeline=reference --random=1x1x200000 2>&1) | FileCheck %s --check-prefix=FIT
// RUN: (ulimit -v 16000000; not attn-run %attn_examples/path.mlir --device=cpu --pipeline=reference --random=1x1x100000 2>&1) | FileCheck %s --check-prefix=FIT
// RUN: (ulimit -v 16000000; not attn-run %attn_examples/mta.mlir --device=cpu --pipeline=reference --random=1x1x50000 2>&1) | FileCheck %s --check-prefix=FIT
// RUN: (ulimit -v 8000000; not attn-run %attn_examples/fox.mlir --device=cpu --random=1x64x200000 2>&1) | FileCheck %s --check-prefix=DRAW
// The fused path itself needs only O(T) memory: T = 200000 on one head fits;
// the oracle (--check, in doubles, score maps included) cannot, which is
// found before the kernel runs.
// RUN: (ulimit -v 16000000; not attn-run %attn_examples/fox.mlir --device=cpu --random=1x1x200000 --check 2>&1) | FileCheck %s --check-prefix=ORACLE

// FIT: attn-run: error: running @main on the CPU needs about {{[0-9.]+}} GiB but only {{[0-9.]+}} GiB can be allocated
// DRAW: attn-run: error: --random=1x64x200000: drawing the inputs needs about {{[0-9.]+}} GiB but only
// ORACLE: attn-run: error: --check: the fp64 oracle (every op's result in doubles) needs about {{[0-9.]+}} GiB
