// REQUIRES: ptxas
// FoX's gate-prefix block kernel (launchGatePrefix: 8 warps, rounds of 2048
// keys scanned by attn_block.scan) in PTX: the warp scan's shuffles up
// (f64 as two 32-bit halves: 5 steps and the exclusive shift, twice each)
// and the two barriers of the warps' totals each round; ptxas compiles it
// for sm_90 and sm_80 without spills.
//
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-to-gpu="chip=sm_90 format=isa" --attn-dump-ptx=%t.90.ptx > /dev/null
// RUN: FileCheck %s < %t.90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.90.ptx -o %t.90.cubin 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-to-gpu="chip=sm_80 format=isa" --attn-dump-ptx=%t.80.ptx > /dev/null
// RUN: FileCheck %s < %t.80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.80.ptx -o %t.80.cubin 2>&1 | FileCheck %s --check-prefix=REGS

// CHECK: .entry main_gate_prefix(
// CHECK-COUNT-12: shfl.sync.up.b32
// CHECK-NOT: shfl.sync
// CHECK: bar.sync
// CHECK-NOT: shfl.sync
// CHECK: bar.sync
// CHECK-NOT: bar.sync
// CHECK: ret;

// REGS: Compiling entry function 'main_gate_prefix'
// REGS-NEXT: Function properties for main_gate_prefix
// REGS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
