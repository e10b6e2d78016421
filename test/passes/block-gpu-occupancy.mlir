// The flash kernel's occupancy hint (gpu_occupancy::occupancyHint,
// attn_block.min_blocks_per_sm, nvvm.minctasm): on sm_90a where its shared
// memory lets more than 2 blocks share an SM and leaves >= 96 registers a
// thread (D = 64: 41984 bytes, 5 blocks), none at D = 128 (2 blocks) and
// none on mma.sync, where 4 blocks (128 registers) measured slower for FoX
// (bench/history/runs-to-05a9f8e.md, "GPU: FoX's key records in 16
// bytes"). FoX's records cap it at 4
// (block-gpu-fox-records.mlir).
// RUN: attn-opt %s --attn-fuse --attn-to-block="target=sm_90a" | FileCheck %s --check-prefix=HINT
// RUN: sed 's/x64x/x128x/g' %s | attn-opt --attn-fuse --attn-to-block="target=sm_90a" | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s --attn-fuse --attn-to-block="target=sm_90" | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s --attn-to-gpu="chip=sm_90a format=none" --attn-dump-ptx=%t.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// HINT: func.func private @main_attention_kernel({{.*}} attributes {attn_block.kernel, attn_block.min_blocks_per_sm = 5 : i64, attn_block.num_warps = 4 : i64}
// NONE: func.func private @main_attention_kernel({{.*}} attributes {attn_block.kernel, attn_block.num_warps = 4 : i64}
// PTX: .entry main_attention_kernel(
// PTX: .minnctapersm 5

func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
