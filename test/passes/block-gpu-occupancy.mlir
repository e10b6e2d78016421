// The occupancy hint (GpuPlan::minBlocksPerSm, one rule for both
// lowerings): where the plan's shared memory lets more than 2 blocks share
// an SM and leaves >= 96 registers per thread (sm_90a wgmma without the
// overlap), the kernel asks ptxas for that many blocks. The block program
// states it on its kernel (attn_block.min_blocks_per_sm), attn-block-to-gpu
// turns it into nvvm.minctasm, as the direct builder sets it.
//
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=block chip=sm_90a" | FileCheck %s --check-prefix=FORM
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=block chip=sm_90a" --attn-block-to-gpu | FileCheck %s --check-prefix=LOWER
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a" | FileCheck %s --check-prefix=LOWER
// RUN: attn-opt %s --attn-to-gpu="lowering=block chip=sm_90a" --attn-dump-ptx=%t.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// Two warpgroups with 128-key tiles (82 KB: 2 blocks) and mma.sync: no hint.
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=block chip=sm_90a warps=8 block-n=128" --attn-block-to-gpu | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=block chip=sm_90" --attn-block-to-gpu | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90" | FileCheck %s --check-prefix=NONE
// FoX: the direct kernel's key term is in the S wgmma, the block
// program's is S's initial value (GpuPlan::gateKeyTermInS; 112 registers
// unhinted): both fit 96 without spills and take the hint.
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-attention-to-gpu="lowering=direct chip=sm_90a" | FileCheck %s --check-prefix=LOWER
// RUN: attn-opt %attn_examples/fox_bf16.mlir --attn-fuse --attn-attention-to-gpu="lowering=block chip=sm_90a" --attn-block-to-gpu | FileCheck %s --check-prefix=LOWER

// D = 64, 4 warps, 64-key tiles: 41984 + 1024 bytes per block, 5 blocks.
// FORM: func.func private @attention(
// FORM-SAME: attn_block.min_blocks_per_sm = 5 : i64
// LOWER: gpu.func @attention(
// LOWER-SAME: nvvm.minctasm = 5 : i32
// PTX: .entry attention(
// PTX: .minnctapersm 5
// NONE-NOT: minctasm
// NONE-NOT: min_blocks_per_sm
func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
