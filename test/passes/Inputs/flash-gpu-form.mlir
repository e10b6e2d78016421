// A FlashAttention kernel of the block program in GPU form, written by
// hand as an sm_80 kernel would state it: causal attention, bf16, D = 64,
// GQA, T <= S; 64-row query tiles over 4 warps with mma.sync m16n8k16
// layouts, Q staged through shared memory into the A-operand registers, K
// and V in a two-stage cp.async pipeline (tile j + 1 in flight while tile j
// is used; the wait names the group of the tile it waits for), P rounded
// to bf16 and converted into the A-operand layout for P V, the output
// stored from a blocked layout. `attn-to-cpu` strips it
// (attn-block-strip-gpu) and runs it; GpuFormCpuTest.cpp checks the result
// against the fp64 oracle of `attn.attention` (causal, scale 1/8) and
// pipeline-attn-to-cpu-gpu-form.mlir that it lowers.

#blocked = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#row = #attn_block.slice<dim = 1, parent = #mma>
#col = #attn_block.slice<dim = 0, parent = #mma>
#swz = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>

func.func private @main_attention_kernel(%q: memref<?x?x?x64xbf16>, %k: memref<?x?x?x64xbf16>,
                                         %v: memref<?x?x?x64xbf16>, %o: memref<?x?x?x64xbf16>)
    attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
  %pm = attn_block.program_id 0
  %pbh = attn_block.program_id 1
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %hq = memref.dim %q, %c1 : memref<?x?x?x64xbf16>
  %hk = memref.dim %k, %c1 : memref<?x?x?x64xbf16>
  %t = memref.dim %q, %c2 : memref<?x?x?x64xbf16>
  %s = memref.dim %k, %c2 : memref<?x?x?x64xbf16>
  %b = arith.divui %pbh, %hq : index
  %h = arith.remui %pbh, %hq : index
  %group = arith.divui %hq, %hk : index
  %kh = arith.divui %h, %group : index
  %smt = arith.subi %s, %t : index
  %row0 = arith.muli %pm, %c64 : index
  %qpos0 = arith.addi %smt, %row0 : index
  %qbuf = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #swz>
  %kbuf = attn_block.local_alloc : !attn_block.smem<2x64x64xbf16, #swz>
  %vbuf = attn_block.local_alloc : !attn_block.smem<2x64x64xbf16, #swz>

  // Q: global memory -> registers (blocked) -> shared -> A operand.
  %qg = attn_block.load %q[%b, %h, %row0, %c0] dims [2, 3] padding 0.0 : memref<?x?x?x64xbf16> -> tensor<64x64xbf16, #blocked>
  attn_block.local_store %qg, %qbuf : tensor<64x64xbf16, #blocked> -> !attn_block.smem<64x64xbf16, #swz>
  // The first K/V tile in flight into stage 0.
  %k0 = attn_block.local_index %kbuf[%c0] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
  %v0 = attn_block.local_index %vbuf[%c0] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
  %tk0 = attn_block.async_copy %k[%b, %kh, %c0, %c0] dims [2, 3] padding 0.0 into %k0 : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
  %tv0 = attn_block.async_copy %v[%b, %kh, %c0, %c0] dims [2, 3] padding 0.0 into %v0 : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
  %g0 = attn_block.async_commit_group %tk0, %tv0
  attn_block.barrier
  %qa = attn_block.local_load %qbuf : !attn_block.smem<64x64xbf16, #swz> -> tensor<64x64xbf16, #opA>

  %rows = attn_block.iota %qpos0 : tensor<64xi64, #row>
  %diag = arith.addi %qpos0, %c64 : index
  %end = arith.minsi %s, %diag : index
  %s64 = arith.index_cast %s : index to i64
  %sempty = tensor.empty() : tensor<64x64xi64, #mma>
  %sfull = linalg.fill ins(%s64 : i64) outs(%sempty : tensor<64x64xi64, #mma>) -> tensor<64x64xi64, #mma>
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32, #row>
  %ninf2 = arith.constant dense<0xFF800000> : tensor<64x64xf32, #mma>
  %zrow = arith.constant dense<0.0> : tensor<64xf32, #row>
  %zacc = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  // scale * log2(e) = 1/8 * 1.4427
  %scale = arith.constant dense<0.180336878> : tensor<64x64xf32, #mma>

  %r:4 = scf.for %j = %c0 to %end step %c64
      iter_args(%m = %ninf, %l = %zrow, %acc = %zacc, %g = %g0)
      -> (tensor<64xf32, #row>, tensor<64xf32, #row>, tensor<64x64xf32, #mma>, !attn_block.async_token) {
    %n = arith.divui %j, %c64 : index
    %cur = arith.remui %n, %c2 : index
    %n1 = arith.addi %n, %c1 : index
    %nxt = arith.remui %n1, %c2 : index
    %j1 = arith.addi %j, %c64 : index
    // Tile j + 1 into the other stage (past the end: padding, never read).
    %kn = attn_block.local_index %kbuf[%nxt] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
    %vn = attn_block.local_index %vbuf[%nxt] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
    %tk = attn_block.async_copy %k[%b, %kh, %j1, %c0] dims [2, 3] padding 0.0 into %kn : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
    %tv = attn_block.async_copy %v[%b, %kh, %j1, %c0] dims [2, 3] padding 0.0 into %vn : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
    %gn = attn_block.async_commit_group %tk, %tv
    // Tile j has landed (one group, tile j + 1's, may still be in flight).
    attn_block.async_wait %g pending 1
    attn_block.barrier
    %kc = attn_block.local_index %kbuf[%cur] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
    %vc = attn_block.local_index %vbuf[%cur] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
    %kt = attn_block.local_load %kc : !attn_block.smem<64x64xbf16, #swz> -> tensor<64x64xbf16, #opB>
    %qk = attn_block.dot %qa, %kt, %zacc transpose_b : tensor<64x64xbf16, #opA>, tensor<64x64xbf16, #opB> -> tensor<64x64xf32, #mma>
    %sc = arith.mulf %qk, %scale : tensor<64x64xf32, #mma>
    // Masks: key < S and key <= query position.
    %cols = attn_block.iota %j : tensor<64xi64, #col>
    %colb = attn_block.broadcast %cols axis 0 : tensor<64xi64, #col> -> tensor<64x64xi64, #mma>
    %rowb = attn_block.broadcast %rows axis 1 : tensor<64xi64, #row> -> tensor<64x64xi64, #mma>
    %inside = arith.cmpi slt, %colb, %sfull : tensor<64x64xi64, #mma>
    %causal = arith.cmpi sle, %colb, %rowb : tensor<64x64xi64, #mma>
    %ok = arith.andi %inside, %causal : tensor<64x64xi1, #mma>
    %sm = arith.select %ok, %sc, %ninf2 : tensor<64x64xi1, #mma>, tensor<64x64xf32, #mma>
    // Online softmax in base 2.
    %mx = attn_block.reduce max %sm axis 1 : tensor<64x64xf32, #mma> -> tensor<64xf32, #row>
    %mn = arith.maximumf %m, %mx : tensor<64xf32, #row>
    %dead = arith.cmpf oeq, %mn, %ninf : tensor<64xf32, #row>
    %mu = arith.select %dead, %zrow, %mn : tensor<64xi1, #row>, tensor<64xf32, #row>
    %dm = arith.subf %m, %mu : tensor<64xf32, #row>
    %alpha = math.exp2 %dm : tensor<64xf32, #row>
    %mub = attn_block.broadcast %mu axis 1 : tensor<64xf32, #row> -> tensor<64x64xf32, #mma>
    %ds = arith.subf %sm, %mub : tensor<64x64xf32, #mma>
    %p = math.exp2 %ds : tensor<64x64xf32, #mma>
    %ps = attn_block.reduce sum %p axis 1 : tensor<64x64xf32, #mma> -> tensor<64xf32, #row>
    %la = arith.mulf %l, %alpha : tensor<64xf32, #row>
    %ln = arith.addf %la, %ps : tensor<64xf32, #row>
    %alphab = attn_block.broadcast %alpha axis 1 : tensor<64xf32, #row> -> tensor<64x64xf32, #mma>
    %accs = arith.mulf %acc, %alphab : tensor<64x64xf32, #mma>
    // P V: P in bf16 as the A operand, V from shared memory as B.
    %pb = arith.truncf %p : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
    %pa = attn_block.convert_layout %pb : tensor<64x64xbf16, #mma> -> tensor<64x64xbf16, #opA>
    %vt = attn_block.local_load %vc : !attn_block.smem<64x64xbf16, #swz> -> tensor<64x64xbf16, #opB>
    %accn = attn_block.dot %pa, %vt, %accs : tensor<64x64xbf16, #opA>, tensor<64x64xbf16, #opB> -> tensor<64x64xf32, #mma>
    // Every warp is done with stage `cur` before the next step refills it.
    attn_block.barrier
    scf.yield %mn, %ln, %accn, %gn : tensor<64xf32, #row>, tensor<64xf32, #row>, tensor<64x64xf32, #mma>, !attn_block.async_token
  }
  attn_block.async_wait pending 0

  // o = acc / l, 0 for a row without a visible key.
  %empty = arith.cmpf oeq, %r#1, %zrow : tensor<64xf32, #row>
  %ones = arith.constant dense<1.0> : tensor<64xf32, #row>
  %inv0 = arith.divf %ones, %r#1 : tensor<64xf32, #row>
  %inv = arith.select %empty, %zrow, %inv0 : tensor<64xi1, #row>, tensor<64xf32, #row>
  %invb = attn_block.broadcast %inv axis 1 : tensor<64xf32, #row> -> tensor<64x64xf32, #mma>
  %of = arith.mulf %r#2, %invb : tensor<64x64xf32, #mma>
  %oh = arith.truncf %of : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
  %ob = attn_block.convert_layout %oh : tensor<64x64xbf16, #mma> -> tensor<64x64xbf16, #blocked>
  attn_block.store %ob, %o[%b, %h, %row0, %c0] dims [2, 3] : tensor<64x64xbf16, #blocked> -> memref<?x?x?x64xbf16>
  return
}

func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %qm = bufferization.to_buffer %q read_only : tensor<?x?x?x64xbf16> to memref<?x?x?x64xbf16>
  %km = bufferization.to_buffer %k read_only : tensor<?x?x?x64xbf16> to memref<?x?x?x64xbf16>
  %vm = bufferization.to_buffer %v read_only : tensor<?x?x?x64xbf16> to memref<?x?x?x64xbf16>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x?x64xbf16>
  %h = tensor.dim %q, %c1 : tensor<?x?x?x64xbf16>
  %t = tensor.dim %q, %c2 : tensor<?x?x?x64xbf16>
  %out = memref.alloc(%b, %h, %t) : memref<?x?x?x64xbf16>
  %tiles = arith.ceildivui %t, %c64 : index
  %bh = arith.muli %b, %h : index
  attn_block.launch @main_attention_kernel grid(%tiles, %bh) args(%qm, %km, %vm, %out) : memref<?x?x?x64xbf16>, memref<?x?x?x64xbf16>, memref<?x?x?x64xbf16>, memref<?x?x?x64xbf16>
  %o = bufferization.to_tensor %out restrict writable : memref<?x?x?x64xbf16> to tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
