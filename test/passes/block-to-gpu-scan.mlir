// attn-block-to-gpu lowers attn_block.scan of a 1-D #attn_block.blocked
// tile (codegen/gpu/ScanToGPU.cpp): each thread's running sums, an
// inclusive warp scan by gpu.shuffle up 1..16 (f64 as two i32 halves), the
// warps' totals through the scan's scratch buffer (lane 31 writes, a
// barrier, W broadcast reads, a barrier before the scratch is reused), and
// tensor.extract of the last element as the total every thread holds.
// Invalid layouts are refused with an error naming the layout and the op.
//
// RUN: attn-opt %s --split-input-file --attn-block-to-gpu --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-block-strip-gpu | FileCheck %s --check-prefix=CPU

#b8 = #attn_block.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
#flat = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [0]>
gpu.module @m {
  func.func private @scan(%g: memref<?xf32>, %o: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 8 : i64} {
    %c0 = arith.constant 0 : index
    %c1023 = arith.constant 1023 : index
    %buf = attn_block.local_alloc : !attn_block.smem<8xf64, #flat>
    %x = attn_block.load %g[%c0] dims [0] padding 0.0 : memref<?xf32> -> tensor<1024xf32, #b8>
    %xd = arith.extf %x : tensor<1024xf32, #b8> to tensor<1024xf64, #b8>
    %s = attn_block.scan %xd scratch(%buf : !attn_block.smem<8xf64, #flat>) : tensor<1024xf64, #b8>
    %t = tensor.extract %s[%c1023] : tensor<1024xf64, #b8>
    %ts = tensor.splat %t : tensor<1024xf64, #b8>
    %y = arith.addf %s, %ts : tensor<1024xf64, #b8>
    %yf = arith.truncf %y : tensor<1024xf64, #b8> to tensor<1024xf32, #b8>
    attn_block.store %yf, %o[%c0] dims [0] : tensor<1024xf32, #b8> -> memref<?xf32>
    return
  }
}

// The scratch is the kernel's shared buffer (8 f64 totals, 64 bytes).
// CHECK-LABEL: gpu.func @scan(
// CHECK-SAME: attn_block.shared_bytes = 64
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// Thread t's 4 keys from 4 t (guarded loads), their running sums.
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.muli %[[TID]], %c4
// CHECK-COUNT-4: memref.load %{{.*}} : memref<?xf32>
// CHECK-COUNT-3: arith.addf %{{.*}} : f64
// The warp scan: 64-bit values as two 32-bit shuffles up by 1, 2, 4, 8, 16,
// lanes below the offset keeping their own value.
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: gpu.shuffle up %{{.*}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : i32
// CHECK: gpu.shuffle up %{{.*}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : i32
// CHECK: arith.cmpi uge, %{{.*}}, %c1{{[_0-9]*}} :
// CHECK: gpu.shuffle up %{{.*}}, %c2_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : i32
// CHECK: gpu.shuffle up %{{.*}}, %c4_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : i32
// CHECK: gpu.shuffle up %{{.*}}, %c8_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : i32
// CHECK: gpu.shuffle up %{{.*}}, %c16_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : i32
// The exclusive in-warp prefix: one more shuffle up 1.
// CHECK: gpu.shuffle up %{{.*}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : i32
// CHECK: arith.cmpi ugt
// Lane 31 writes its warp's total into the scratch; a barrier publishes it.
// CHECK: arith.cmpi eq, %{{.*}}, %c31 :
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<?xf64, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// The 8 totals, read by every thread; a barrier before the scratch is
// written again.
// CHECK-COUNT-8: memref.load %{{.*}} : memref<?xf64, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// The extract is the total (no load, no shuffle between), added to each
// of the thread's registers.
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-4: memref.store %{{.*}} : memref<?xf32>
// CHECK-NOT: attn_block.
// CHECK-NOT: tensor.extract
// CHECK-NOT: unrealized_conversion_cast

// On the CPU the scan drops its scratch (one thread of control).
// CPU-LABEL: func.func private @scan(
// CPU-NOT: memref.alloc
// CPU: attn_block.scan %{{.*}} : tensor<1024xf64>
// CPU: tensor.extract

// -----

// One warp: no scratch, the total from lane 31 by an index shuffle.
#b1 = #attn_block.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
gpu.module @m {
  func.func private @scan1(%g: memref<?xf32>, %o: memref<?xf32>) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c63 = arith.constant 63 : index
    %x = attn_block.load %g[%c0] dims [0] padding 0.0 : memref<?xf32> -> tensor<64xf32, #b1>
    %s = attn_block.scan %x : tensor<64xf32, #b1>
    %t = tensor.extract %s[%c63] : tensor<64xf32, #b1>
    %ts = tensor.splat %t : tensor<64xf32, #b1>
    %y = arith.addf %s, %ts : tensor<64xf32, #b1>
    attn_block.store %y, %o[%c0] dims [0] : tensor<64xf32, #b1> -> memref<?xf32>
    return
  }
}

// CHECK-LABEL: gpu.func @scan1(
// CHECK-SAME: attn_block.shared_bytes = 0
// CHECK: gpu.shuffle up %{{.*}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK: gpu.shuffle up %{{.*}}, %c16_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK: gpu.shuffle up %{{.*}}, %c1_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK: gpu.shuffle idx %{{.*}}, %c31_i32{{[_0-9]*}}, %c32_i32{{[_0-9]*}} : f32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// -----

// A tile larger than one run per thread (two repeats) is refused.
#b = #attn_block.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#flat = #attn_block.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [0]>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %buf = attn_block.local_alloc : !attn_block.smem<4xf32, #flat>
    %t = tensor.splat %x : tensor<1024xf32, #b>
    // expected-error @+1 {{attn-block-to-gpu cannot lower 'attn_block.scan': layout #attn_block.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>: a scan is lowered for tiles of exactly sizePerThread * 32 * warpsPerCTA = 512 elements}}
    %s = attn_block.scan %t scratch(%buf : !attn_block.smem<4xf32, #flat>) : tensor<1024xf32, #b>
    return
  }
}

// -----

// A scan of a row slice of an mma tile has no GPU lowering.
#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
#row = #attn_block.slice<dim = 1, parent = #mma>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 4 : i64} {
    %t = tensor.splat %x : tensor<64xf32, #row>
    // expected-error @+1 {{attn-block-to-gpu cannot lower 'attn_block.scan': scans are lowered for 1-D tiles in a #attn_block.blocked layout, got tensor<64xf32, #attn_block.slice<}}
    %s = attn_block.scan %t : tensor<64xf32, #row>
    return
  }
}

// -----

// An element other than a scan's last one would need an exchange.
#b = #attn_block.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
gpu.module @m {
  func.func private @k(%x: f32) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
    %c5 = arith.constant 5 : index
    %t = tensor.splat %x : tensor<128xf32, #b>
    %s = attn_block.scan %t : tensor<128xf32, #b>
    // expected-error @+1 {{attn-block-to-gpu cannot lower 'tensor.extract': an element of a tile in a register layout (tensor<128xf32, #attn_block.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>>) is lowered for the last element of an attn_block.scan only}}
    %e = tensor.extract %s[%c5] : tensor<128xf32, #b>
    return
  }
}

// -----

// f16 scans are refused (the shuffles take 32- and 64-bit values).
#b = #attn_block.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
gpu.module @m {
  func.func private @k(%x: f16) attributes {attn_block.kernel, attn_block.num_warps = 1 : i64} {
    %t = tensor.splat %x : tensor<128xf16, #b>
    // expected-error @+1 {{attn-block-to-gpu cannot lower 'attn_block.scan': scans are lowered for f32 and f64 tiles, got tensor<128xf16}}
    %s = attn_block.scan %t : tensor<128xf16, #b>
    return
  }
}
