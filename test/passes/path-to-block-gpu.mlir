// attn-to-block{target=sm_90} lowers PaTH-FoX into the GPU form
// (PathToBlock.cpp): the gate-prefix kernel, a chunk kernel and an
// attention kernel, 4 warps, every tile in an mma.sync layout, 16-bit
// operands through swizzled shared buffers, the chunk kernel's f32 operands
// as hi/lo pairs, the walk's transport in f16 (path-transport=f16, the
// default) or as hi/lo pairs (split, the SPLIT lines); the host function
// allocates the scratch and launches the three in order.
// attn-block-to-gpu lowers both GPU kernels op by op, and the NVVM
// pipeline takes them to PTX. Their numbers are checked against the fp64
// oracle on the CPU in test/unit/PathGpuFormCpuTest.cpp.
//
// RUN: attn-opt %s --attn-to-block="target=sm_90" | FileCheck %s
// RUN: attn-opt %s --attn-to-block="target=sm_90 path-transport=split" | FileCheck %s --check-prefix=SPLIT
// RUN: attn-opt %s --attn-to-block="target=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --attn-to-block="target=sm_90" \
// RUN:   | %python %S/Inputs/gpu-module-of-kernels.py \
// RUN:   | attn-opt --attn-block-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --attn-to-block="target=sm_90" \
// RUN:   | %python %S/Inputs/gpu-module-of-kernels.py \
// RUN:   | attn-opt \
// RUN:     --pass-pipeline="builtin.module(attn-block-to-gpu,nvvm-attach-target{chip=sm_90 features=+ptx80},gpu.module(expand-strided-metadata,convert-nvgpu-to-nvvm,convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})" \
// RUN:   | FileCheck %s --check-prefix=PTX

// CHECK-DAG: #[[MMA:.*]] = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
// CHECK-DAG: #[[SW:.*]] = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-DAG: #[[A:.*]] = #attn_block.dot_operand<opIdx = 0, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[B:.*]] = #attn_block.dot_operand<opIdx = 1, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[ROW:.*]] = #attn_block.slice<dim = 1, parent = #[[MMA]]>
// CHECK-DAG: #[[COL:.*]] = #attn_block.slice<dim = 0, parent = #[[MMA]]>

// CHECK: func.func private @main_gate_prefix(

// The chunk kernel: w (f32) split into a bf16 hi/lo pair through global
// memory into shared, A = stril(beta W W^T) to its f32 scratch, the
// inverse column by column (a column-slice load of A, a row reduction, a
// select on the column), T and U = T W as hi/lo pairs, KC = stril'(K W^T)
// T^T with T back through shared memory, Khat = K - KC W.
// CHECK-LABEL: func.func private @main_path_chunk_kernel(
// CHECK-SAME: attn_block.kernel, attn_block.num_warps = 4 : i64
// CHECK: %[[WIN:.*]] = attn_block.load %arg1{{.*}} -> tensor<64x64xf32, #[[MMA]]>
// A non-finite row of w or beta is marked (%arg12) and read as 0.
// CHECK: attn_block.load %arg2{{.*}} dims [2] {{.*}} -> tensor<64xf32, #[[ROW]]>
// CHECK: attn_block.store %{{.*}}, %arg12
// CHECK: %[[W:.*]] = arith.select %{{.*}}, %{{.*}}, %[[WIN]]
// CHECK: %[[WHI:.*]] = arith.truncf %[[W]] : tensor<64x64xf32, #[[MMA]]> to tensor<64x64xbf16, #[[MMA]]>
// CHECK: arith.extf %[[WHI]]
// CHECK: %[[WLO:.*]] = arith.truncf
// CHECK: attn_block.store %[[WHI]], %arg6
// CHECK: attn_block.store %[[WLO]], %arg7
// W rounded once to f16 for the attention kernel's transport, NaN at the
// marks.
// CHECK: %[[WP:.*]] = arith.select %{{.*}}, %{{.*}}, %[[W]]
// CHECK: %[[W16:.*]] = arith.truncf %[[WP]] : tensor<64x64xf32, #[[MMA]]> to tensor<64x64xf16, #[[MMA]]>
// CHECK: attn_block.store %[[W16]], %arg8
// CHECK: attn_block.barrier
// CHECK: attn_block.local_alloc : !attn_block.smem<64x64xbf16, #[[SW]]>
// CHECK: attn_block.async_copy %arg6
// CHECK: attn_block.async_copy %arg7
// CHECK: attn_block.async_copy %arg0
// CHECK: attn_block.async_wait pending 0
// CHECK-NEXT: attn_block.barrier
// W's hi half as the A operand; each B operand read right before its dot.
// CHECK: attn_block.convert_layout {{.*}} : tensor<64x64xbf16, #[[MMA]]> -> tensor<64x64xbf16, #[[A]]>
// CHECK: attn_block.local_load {{.*}} -> tensor<64x64xbf16, #[[B]]>
// CHECK-NEXT: attn_block.dot {{.*}} transpose_b : tensor<64x64xbf16, #[[A]]>, tensor<64x64xbf16, #[[B]]> -> tensor<64x64xf32, #[[MMA]]>
// CHECK: arith.cmpi slt
// CHECK: attn_block.store {{.*}}, %arg3{{.*}} : tensor<64x64xf32, #[[MMA]]> -> memref<?x?x?x64xf32>
// CHECK-NEXT: attn_block.barrier
// The inverse by blocks of 16 rows: the four diagonal blocks' columns
// 15 - n, 31 - n, 47 - n, 63 - n in one step of 16, then the blocks below
// the diagonal by three rounds X <- D - (D A_off) X, A_off and X as B
// operands through the T scratch (%arg4, %arg5) into shared memory.
// CHECK: %[[D:.*]] = scf.for {{.*}} to %c16 {{.*}} -> (tensor<64x64xf32, #[[MMA]]>)
// CHECK:   %[[C0:.*]] = arith.subi %c15
// CHECK:   attn_block.load %arg3[{{.*}}, %[[C0]]] dims [2] {{.*}} -> tensor<64xf32, #[[COL]]>
// CHECK:   %[[C3:.*]] = arith.subi %c63
// CHECK:   attn_block.load %arg3[{{.*}}, %[[C3]]] dims [2] {{.*}} -> tensor<64xf32, #[[COL]]>
// CHECK:   attn_block.reduce sum {{.*}} axis 1 : tensor<64x64xf32, #[[MMA]]> -> tensor<64xf32, #[[ROW]]>
// CHECK:   arith.select {{.*}} : tensor<64x64xi1, #[[MMA]]>, tensor<64x64xf32, #[[MMA]]>
// CHECK:   scf.yield
// CHECK: attn_block.load %arg3{{.*}} dims [2, 3] {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CHECK: attn_block.store {{.*}}, %arg4
// CHECK: attn_block.async_copy %arg4
// CHECK: attn_block.dot %{{.*}}, %{{.*}}, %splat{{[_0-9]*}} : tensor<64x64xbf16
// CHECK-COUNT-3: attn_block.dot %{{[0-9]+}}, %{{[0-9]+}}, %[[D]] :
// CHECK: attn_block.load %arg2{{.*}} dims [2] {{.*}} -> tensor<64xf32, #[[COL]]>
// CHECK: attn_block.store {{.*}}, %arg4
// CHECK: attn_block.store {{.*}}, %arg5
// CHECK: attn_block.store {{.*}}, %arg9{{.*}} : tensor<64x64xf16, #[[MMA]]>
// CHECK: arith.cmpi sgt
// CHECK: attn_block.async_copy %arg4
// CHECK: attn_block.async_copy %arg5
// CHECK: attn_block.store {{.*}}, %arg10{{.*}} : tensor<64x64xf16, #[[MMA]]>
// CHECK: attn_block.store {{.*}}, %arg11{{.*}} : tensor<64x64xbf16, #[[MMA]]>
// CHECK: return
// With the split transport U and KC leave as hi/lo pairs (W's pair is
// already in %arg6, %arg7).
// SPLIT-LABEL: func.func private @main_path_chunk_kernel(
// SPLIT-NOT: xf16
// SPLIT: attn_block.store {{.*}}, %arg8
// SPLIT: attn_block.store {{.*}}, %arg9
// SPLIT: attn_block.store {{.*}}, %arg10
// SPLIT: attn_block.store {{.*}}, %arg11
// SPLIT: attn_block.store {{.*}}, %arg12{{.*}} : tensor<64x64xbf16, #{{.*}}>
// SPLIT: return

// The attention kernel: the diagonal block (q c at its row scale max |q c|,
// q^ through the f16 W and U, the in-chunk logits with KC^T, the FoX bias
// from G' in the row and column slices), then the walk right to left
// carrying q~ (f32, #mma, at the row scale) and the softmax state: q~
// rounded once to bf16 for the scores (then times the row scale), the
// transport as two f16 dots; the copies of the next chunk in two groups
// (Khat, V issued after P V, W, U after the transport), each waited for
// half a step later with the other group in flight.
// CHECK-LABEL: func.func private @main_path_attention_kernel(
// CHECK-SAME: attn_block.kernel, attn_block.num_warps = 4 : i64
// CHECK-COUNT-3: attn_block.local_alloc : !attn_block.smem<64x64xbf16
// CHECK-COUNT-3: attn_block.local_alloc : !attn_block.smem<64x64xf16
// CHECK-NOT: local_alloc
// CHECK-COUNT-6: attn_block.async_copy
// CHECK: attn_block.async_wait pending 0
// CHECK: attn_block.load %arg0{{.*}} -> tensor<64x64xbf16, #[[MMA]]>
// CHECK: %[[MX:.*]] = attn_block.reduce max {{.*}} axis 1
// CHECK: arith.divf {{.*}}, %{{.*}} : tensor<64xf32, #[[ROW]]>
// CHECK: attn_block.dot {{.*}} transpose_b : tensor<64x64xf16, #[[A]]>, tensor<64x64xf16, #[[B]]> -> tensor<64x64xf32, #[[MMA]]>
// CHECK: attn_block.load %arg3{{.*}} dims [2] {{.*}} -> tensor<64xf32, #[[ROW]]>
// CHECK: attn_block.load %arg3{{.*}} dims [2] {{.*}} -> tensor<64xf32, #[[COL]]>
// CHECK: attn_block.reduce max
// CHECK: math.exp2
// CHECK: attn_block.reduce sum
// CHECK: attn_block.barrier
// CHECK: attn_block.async_copy %arg7
// CHECK-NEXT: attn_block.async_copy %arg2
// CHECK-NEXT: attn_block.async_commit_group
// CHECK: attn_block.async_copy %arg4
// CHECK-NEXT: attn_block.async_copy %arg5
// CHECK-NEXT: attn_block.async_commit_group
// CHECK: scf.for {{.*}} -> (tensor<64x64xf32, #[[MMA]]>, tensor<64xf32, #[[ROW]]>, tensor<64xf32, #[[ROW]]>, tensor<64x64xf32, #[[MMA]]>)
// CHECK:   arith.maxsi
// CHECK-NEXT:   attn_block.async_wait pending 1
// CHECK-NEXT:   attn_block.barrier
// CHECK:   arith.truncf %arg{{.*}} : tensor<64x64xf32, #[[MMA]]> to tensor<64x64xbf16, #[[MMA]]>
// CHECK:   attn_block.dot {{.*}} transpose_b
// CHECK:   arith.mulf
// CHECK:   attn_block.load %arg3{{.*}} -> tensor<64xf32, #[[COL]]>
// CHECK:   attn_block.dot {{.*}} : tensor<64x64xbf16, #[[A]]>, tensor<64x64xbf16, #[[B]]>
// CHECK-NEXT:   attn_block.barrier
// CHECK:   attn_block.async_copy %arg7
// CHECK-NEXT:   attn_block.async_copy %arg2
// CHECK-NEXT:   attn_block.async_commit_group
// CHECK-NEXT:   attn_block.async_wait pending 1
// CHECK-NEXT:   attn_block.barrier
// CHECK:   arith.truncf %arg{{.*}} : tensor<64x64xf32, #[[MMA]]> to tensor<64x64xf16, #[[MMA]]>
// CHECK:   attn_block.dot {{.*}} transpose_b : tensor<64x64xf16, #[[A]]>, tensor<64x64xf16, #[[B]]>
// CHECK:   arith.truncf {{.*}} to tensor<64x64xf16, #[[MMA]]>
// CHECK:   attn_block.dot {{.*}} : tensor<64x64xf16, #[[A]]>, tensor<64x64xf16, #[[B]]>
// CHECK-NEXT:   attn_block.barrier
// CHECK:   attn_block.async_copy %arg4
// CHECK-NEXT:   attn_block.async_copy %arg5
// CHECK-NEXT:   attn_block.async_commit_group
// CHECK-NEXT:   scf.yield
// CHECK: attn_block.async_wait pending 0
// CHECK: attn_block.store {{.*}}, %arg10{{.*}} : tensor<64x64xbf16, #[[MMA]]> -> memref<?x?x?x64xbf16>
// The split transport: nine tiles, six copies a step, three products per
// transport dot.
// SPLIT-LABEL: func.func private @main_path_attention_kernel(
// SPLIT-COUNT-9: attn_block.local_alloc : !attn_block.smem<64x64xbf16
// SPLIT-COUNT-9: attn_block.async_copy
// SPLIT-COUNT-6: attn_block.async_copy
// SPLIT: scf.for
// SPLIT-COUNT-8: attn_block.dot
// SPLIT-NOT: attn_block.dot
// SPLIT-COUNT-4: attn_block.async_copy
// SPLIT-NEXT: attn_block.async_commit_group
// SPLIT-NEXT: scf.yield
// SPLIT: attn_block.store {{.*}}, %arg13{{.*}} : tensor<64x64xbf16, #{{.*}}> -> memref<?x?x?x64xbf16>

// The host: G' first, then the scratch, the chunk kernel over
// (chunks, B * Hk) and the attention kernel over (query chunks, B * Hq).
// CHECK-LABEL: func.func @main(
// CHECK: attn_block.launch @main_gate_prefix
// CHECK: memref.alloc({{.*}}) : memref<?x?x?x64xf32>
// CHECK-COUNT-5: memref.alloc({{.*}}) : memref<?x?x?x64xbf16>
// CHECK-COUNT-3: memref.alloc({{.*}}) : memref<?x?x?x64xf16>
// CHECK: attn_block.launch @main_path_chunk_kernel
// CHECK: attn_block.launch @main_path_attention_kernel

// sm_80 is the same mma.sync form.
// SM80: func.func private @main_path_chunk_kernel({{.*}}attn_block.num_warps = 4
// SM80: func.func private @main_path_attention_kernel({{.*}}attn_block.num_warps = 4

// GPU: gpu.module @kernels
// GPU: gpu.func @main_path_chunk_kernel({{.*}}) kernel
// GPU-SAME: attn_block.shared_bytes = 40960
// GPU-SAME: known_block_size = array<i32: 128, 1, 1>
// GPU: nvgpu.device_async_copy
// GPU: nvgpu.ldmatrix
// GPU: nvvm.mma.sync
// GPU: gpu.shuffle xor
// GPU: gpu.func @main_path_attention_kernel({{.*}}) kernel
// GPU-SAME: attn_block.shared_bytes = 49152
// GPU: nvvm.mma.sync
// GPU: scf.for

// PTX: .visible .entry main_path_chunk_kernel(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: .visible .entry main_path_attention_kernel(
// PTX: cp.async.cg.shared.global
// PTX: ldmatrix.sync.aligned

func.func @main(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>,
                %w: tensor<?x?x?x64xf32>, %beta: tensor<?x?x?xf32>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v path(%w, %beta) gate(%g) scaled
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>)
      -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
