// attn-block-strip-gpu: the sequential meaning of each GPU op of the block
// program, the form attn-block-to-cpu lowers. Layouts leave every tile type
// (signatures, loop-carried values, constants, every op), shared buffers
// become memrefs, copies happen when issued, waits and barriers vanish.
// RUN: attn-opt %s --attn-block-strip-gpu | FileCheck %s \
// RUN:   --implicit-check-not=#attn_block --implicit-check-not=attn_block.local \
// RUN:   --implicit-check-not=attn_block.async --implicit-check-not=attn_block.barrier \
// RUN:   --implicit-check-not=attn_block.convert_layout \
// RUN:   --implicit-check-not=attn_block.num_warps --implicit-check-not=attn_block.min_blocks \
// RUN:   --implicit-check-not=!attn_block
// The output verifies (attn-opt verifies after the pass); a whole GPU-form
// flash kernel runs through attn-to-cpu in pipeline-attn-to-cpu-gpu-form.mlir
// and against the fp64 oracle in test/unit/GpuFormCpuTest.cpp.

#blocked = #attn_block.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#opA = #attn_block.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#opB = #attn_block.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#row = #attn_block.slice<dim = 1, parent = #mma>
#swz = #attn_block.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>

// CHECK-LABEL: func.func @cp_async_pipeline
// The signature loses its layouts and the kernel its warp count.
// CHECK-SAME: (%[[K:.*]]: memref<?x64xbf16>, %[[Q:.*]]: tensor<64x64xbf16>, %[[N:.*]]: index) -> (tensor<64x64xf32>, tensor<64xf32>)
// CHECK-SAME: attributes {attn_block.kernel}
func.func @cp_async_pipeline(%k: memref<?x64xbf16>, %q: tensor<64x64xbf16, #opA>, %n: index)
    -> (tensor<64x64xf32, #mma>, tensor<64xf32, #row>)
    attributes {attn_block.kernel, attn_block.num_warps = 4 : i64, attn_block.min_blocks_per_sm = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  // local_alloc: a dense buffer of the same shape, seen through a view with
  // a dynamic offset (the type of its stages too).
  // CHECK: %[[ALLOC:.*]] = memref.alloc() : memref<2x64x64xbf16>
  // CHECK-NEXT: %[[BUF:.*]] = memref.cast %[[ALLOC]] : memref<2x64x64xbf16> to memref<2x64x64xbf16, strided<[4096, 64, 1], offset: ?>>
  %buf = attn_block.local_alloc : !attn_block.smem<2x64x64xbf16, #swz>
  // local_index: the stage as a subview.
  // CHECK: %[[S0:.*]] = memref.subview %[[BUF]][%{{.*}}, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xbf16, strided<[4096, 64, 1], offset: ?>> to memref<64x64xbf16, strided<[64, 1], offset: ?>>
  %s0 = attn_block.local_index %buf[%c0] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
  // async_copy: the load it stands for (bounds mask and padding kept) and
  // an in-bounds store of the tile into the stage, done at once.
  // CHECK: %[[T0:.*]] = attn_block.load %[[K]][%{{.*}}, %{{.*}}] dims [0, 1] padding 0.000000e+00 : memref<?x64xbf16> -> tensor<64x64xbf16>
  // CHECK: attn_block.store %[[T0]], %[[S0]][%[[Z:.*]], %[[Z]]] dims [0, 1] in_bounds : tensor<64x64xbf16> -> memref<64x64xbf16, strided<[64, 1], offset: ?>>
  %t0 = attn_block.async_copy %k[%c0, %c0] dims [0, 1] padding 0.0 into %s0 : memref<?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
  // The copy's token and the committed group are complete: the constant
  // true (an i1 the loop carries).
  // CHECK: arith.constant true
  // CHECK: %[[DONE:.*]] = arith.constant true
  %g0 = attn_block.async_commit_group %t0
  // A constant tile loses its layout in its value too.
  // CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  // CHECK: %[[LOOP:.*]]:3 = scf.for %[[J:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]], %[[G:.*]] = %[[DONE]], %[[CUR:.*]] = %[[S0]]) -> (tensor<64x64xf32>, i1, memref<64x64xbf16, strided<[64, 1], offset: ?>>)
  %r:3 = scf.for %j = %c0 to %n step %c1
      iter_args(%acc = %zero, %g = %g0, %cur = %s0)
      -> (tensor<64x64xf32, #mma>, !attn_block.async_token, !attn_block.smem<64x64xbf16, #swz>) {
    %j1 = arith.addi %j, %c1 : index
    %nxt = arith.remui %j1, %c2 : index
    %sn = attn_block.local_index %buf[%nxt] : !attn_block.smem<2x64x64xbf16, #swz> -> !attn_block.smem<64x64xbf16, #swz>
    %row = arith.muli %j1, %c64 : index
    // CHECK: %[[TN:.*]] = attn_block.load %[[K]][%{{.*}}, %{{.*}}] dims [0, 1] padding 0.000000e+00
    // CHECK: attn_block.store %[[TN]], %[[SN:.*]][%{{.*}}, %{{.*}}] dims [0, 1] in_bounds
    %tn = attn_block.async_copy %k[%row, %c0] dims [0, 1] padding 0.0 into %sn : memref<?x64xbf16> -> !attn_block.smem<64x64xbf16, #swz>
    %gn = attn_block.async_commit_group %tn
    // wait and barrier: nothing left to wait for.
    attn_block.async_wait %g pending 1
    attn_block.barrier
    // local_load: an in-bounds load of the whole stage.
    // CHECK: %[[KT:.*]] = attn_block.load %[[CUR]][%{{.*}}, %{{.*}}] dims [0, 1] padding 0.000000e+00 in_bounds : memref<64x64xbf16, strided<[64, 1], offset: ?>> -> tensor<64x64xbf16>
    %kt = attn_block.local_load %cur : !attn_block.smem<64x64xbf16, #swz> -> tensor<64x64xbf16, #opB>
    // CHECK: %[[S:.*]] = attn_block.dot %[[Q]], %[[KT]], %[[ACC]] transpose_b : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %s = attn_block.dot %q, %kt, %acc transpose_b : tensor<64x64xbf16, #opA>, tensor<64x64xbf16, #opB> -> tensor<64x64xf32, #mma>
    // CHECK: scf.yield %[[S]], %[[DONE2:.*]], %[[SN]] : tensor<64x64xf32>, i1, memref<64x64xbf16, strided<[64, 1], offset: ?>>
    scf.yield %s, %gn, %sn : tensor<64x64xf32, #mma>, !attn_block.async_token, !attn_block.smem<64x64xbf16, #swz>
  }
  attn_block.async_wait pending 0
  // convert_layout: its operand; local_store: an in-bounds store.
  // CHECK: %[[H:.*]] = arith.truncf %[[LOOP]]#0 : tensor<64x64xf32> to tensor<64x64xbf16>
  // CHECK: attn_block.store %[[H]], %[[S0]][%{{.*}}, %{{.*}}] dims [0, 1] in_bounds : tensor<64x64xbf16> -> memref<64x64xbf16, strided<[64, 1], offset: ?>>
  %sb = attn_block.convert_layout %r#0 : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>
  %sh = arith.truncf %sb : tensor<64x64xf32, #blocked> to tensor<64x64xbf16, #blocked>
  attn_block.local_store %sh, %s0 : tensor<64x64xbf16, #blocked> -> !attn_block.smem<64x64xbf16, #swz>
  // CHECK: %[[M:.*]] = attn_block.reduce max %[[LOOP]]#0 axis 1 : tensor<64x64xf32> -> tensor<64xf32>
  %m = attn_block.reduce max %r#0 axis 1 : tensor<64x64xf32, #mma> -> tensor<64xf32, #row>
  // CHECK: return %[[LOOP]]#0, %[[M]] : tensor<64x64xf32>, tensor<64xf32>
  return %r#0, %m : tensor<64x64xf32, #mma>, tensor<64xf32, #row>
}

#wg = #attn_block.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64, 16]>
#wgA = #attn_block.dot_operand<opIdx = 0, parent = #wg, kWidth = 2>
#nv = #attn_block.nvmma_shared<swizzleBytes = 128, transposed = false>

// CHECK-LABEL: func.func @wgmma_shared
// CHECK-SAME: (%[[K:.*]]: memref<?x?x?x64xbf16>, %[[Q:.*]]: tensor<64x64xbf16>, %[[ACC:.*]]: tensor<64x64xf32>) -> tensor<64x64xf32>
// A buffer nothing reads vanishes; the staged one stays.
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ALLOC:.*]] = memref.alloc() : memref<2x64x64xbf16>
// CHECK-NEXT: %[[BUF:.*]] = memref.cast %[[ALLOC]]
// CHECK-NEXT: %[[STAGE:.*]] = memref.subview %[[BUF]][%[[Z]], 0, 0] [1, 64, 64] [1, 1, 1]
// The copy: the load with its padding, stored at once.
// CHECK-NEXT: %[[T:.*]] = attn_block.load %[[K]][%[[Z]], %[[Z]], %[[Z]], %[[Z]]] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xbf16> -> tensor<64x64xbf16>
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: attn_block.store %[[T]], %[[STAGE]]
// A tile wgmma reads from shared memory: an in-bounds load of the stage.
// CHECK: %[[KT:.*]] = attn_block.load %[[STAGE]]{{.*}} in_bounds
// CHECK-NEXT: %[[S:.*]] = attn_block.dot %[[Q]], %[[KT]], %[[ACC]] transpose_b : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
// CHECK-NEXT: return %[[S]]
func.func @wgmma_shared(%k: memref<?x?x?x64xbf16>, %q: tensor<64x64xbf16, #wgA>,
                        %acc: tensor<64x64xf32, #wg>) -> tensor<64x64xf32, #wg>
    attributes {attn_block.kernel, attn_block.num_warps = 4 : i64, attn_block.min_blocks_per_sm = 2 : i64} {
  %c0 = arith.constant 0 : index
  %kb = attn_block.local_alloc : !attn_block.smem<2x64x64xbf16, #nv>
  %unused = attn_block.local_alloc : !attn_block.smem<64x64xbf16, #nv>
  %stage = attn_block.local_index %kb[%c0] : !attn_block.smem<2x64x64xbf16, #nv> -> !attn_block.smem<64x64xbf16, #nv>
  %t = attn_block.async_copy %k[%c0, %c0, %c0, %c0] dims [2, 3] padding 0.0 into %stage : memref<?x?x?x64xbf16> -> !attn_block.smem<64x64xbf16, #nv>
  %g = attn_block.async_commit_group %t
  attn_block.async_wait %g pending 0
  attn_block.fence_async_shared
  attn_block.barrier
  %kt = attn_block.local_load %stage : !attn_block.smem<64x64xbf16, #nv> -> tensor<64x64xbf16, #nv>
  %s = attn_block.dot %q, %kt, %acc transpose_b : tensor<64x64xbf16, #wgA>, tensor<64x64xbf16, #nv> -> tensor<64x64xf32, #wg>
  return %s : tensor<64x64xf32, #wg>
}

// A kernel in CPU form is left as it is.
// CHECK-LABEL: func.func @cpu_form
// CHECK-NEXT: %[[T:.*]] = attn_block.load %{{.*}}[%{{.*}}, %{{.*}}] dims [0, 1] padding 0.000000e+00 : memref<?x64xf32> -> tensor<64x64xf32>
// CHECK-NEXT: attn_block.store %[[T]], %{{.*}}[%{{.*}}, %{{.*}}] dims [0, 1] : tensor<64x64xf32> -> memref<?x64xf32>
// CHECK-NEXT: return
func.func @cpu_form(%a: memref<?x64xf32>, %b: memref<?x64xf32>, %i: index)
    attributes {attn_block.kernel} {
  %t = attn_block.load %a[%i, %i] dims [0, 1] padding 0.0 : memref<?x64xf32> -> tensor<64x64xf32>
  attn_block.store %t, %b[%i, %i] dims [0, 1] : tensor<64x64xf32> -> memref<?x64xf32>
  return
}
