// attn-block-to-cpu rewrites f32 math.exp2 inside block kernels
// (attn_block.kernel) into element-wise arithmetic that LLVM vectorizes
// (codegen/cpu/Exp2ToCPU.cpp): clamp to [-127, 127], k = roundeven(x),
// Cephes' polynomial in x - k by FMAs, 2^k from the exponent bits, NaN kept.
// Other functions (the reference lowering) and f64 keep math.exp2.
// RUN: attn-opt %s --attn-block-to-cpu | FileCheck %s

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-NOT: math.exp2
// CHECK: %[[LO:.*]] = arith.maximumf %[[X]], %{{.*}} : tensor<4x8xf32>
// CHECK: %[[C:.*]] = arith.minimumf %[[LO]], %{{.*}} : tensor<4x8xf32>
// CHECK: %[[K:.*]] = math.roundeven %[[C]] : tensor<4x8xf32>
// CHECK: %[[F:.*]] = arith.subf %[[C]], %[[K]] : tensor<4x8xf32>
// CHECK-COUNT-6: math.fma
// CHECK: %[[KI:.*]] = arith.fptosi %[[K]] : tensor<4x8xf32> to tensor<4x8xi32>
// CHECK: %[[E:.*]] = arith.addi %[[KI]], %{{.*}} : tensor<4x8xi32>
// CHECK: %[[BITS:.*]] = arith.shli %[[E]], %{{.*}} : tensor<4x8xi32>
// CHECK: %[[S:.*]] = arith.bitcast %[[BITS]] : tensor<4x8xi32> to tensor<4x8xf32>
// CHECK: %[[Y:.*]] = arith.mulf %{{.*}}, %[[S]] : tensor<4x8xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : tensor<4x8xf32>
// CHECK: %[[R:.*]] = arith.select %[[NAN]], %[[X]], %[[Y]]
// CHECK: vector.transfer_read %[[R]]
// Kernels return nothing: results go to memory.
func.func @kernel(%x: tensor<4x8xf32>, %m: memref<4x8xf32>) attributes {attn_block.kernel} {
  %y = math.exp2 %x : tensor<4x8xf32>
  %c0 = arith.constant 0 : index
  attn_block.store %y, %m[%c0, %c0] dims [0, 1] in_bounds : tensor<4x8xf32> -> memref<4x8xf32>
  return
}

// Scalars too.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT: math.exp2
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: arith.bitcast %{{.*}} : i32 to f32
func.func @scalar(%x: f32, %m: memref<f32>) attributes {attn_block.kernel} {
  %y = math.exp2 %x : f32
  memref.store %y, %m[] : memref<f32>
  return
}

// CHECK-LABEL: func.func @not_a_kernel
// CHECK: math.exp2 %{{.*}} : tensor<4x8xf32>
// CHECK: math.exp2 %{{.*}} : f64
func.func @not_a_kernel(%x: tensor<4x8xf32>, %d: f64) -> (tensor<4x8xf32>, f64) {
  %y = math.exp2 %x : tensor<4x8xf32>
  %e = math.exp2 %d : f64
  return %y, %e : tensor<4x8xf32>, f64
}

// CHECK-LABEL: func.func @f64_kernel
// CHECK: math.exp2 %{{.*}} : f64
func.func @f64_kernel(%d: f64, %m: memref<f64>) attributes {attn_block.kernel} {
  %e = math.exp2 %d : f64
  memref.store %e, %m[] : memref<f64>
  return
}
