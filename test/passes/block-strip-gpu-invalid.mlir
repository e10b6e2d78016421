// attn-block-strip-gpu refuses warp_specialize: its warp roles run
// concurrently and have no sequential meaning for the CPU.
// RUN: attn-opt %s --attn-block-strip-gpu --verify-diagnostics

#nv = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>
#bar = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [0]>

func.func @roles(%k: memref<?x?x?x64xbf16>) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %kb = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #nv>
  %full = attn_block.local_alloc : !attn_block.smem<1xi64, #bar>
  // expected-error @below {{'attn_block.warp_specialize' op has no sequential meaning (its warp roles run concurrently): attn-block-strip-gpu cannot give it to the CPU backend}}
  attn_block.warp_specialize num_warps [1] {
    attn_block.mbarrier_wait %full[%c0] phase %true : !attn_block.smem<1xi64, #bar>
    attn_block.warp_yield
  } partitions {
    attn_block.tma_load %k[%c0, %c0, %c0, %c0] dims [2, 3] into %kb, %full[%c0] : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #nv>, !attn_block.smem<1xi64, #bar>
    attn_block.warp_yield
  }
  return
}
