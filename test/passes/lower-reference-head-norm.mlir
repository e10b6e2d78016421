// attn-lower-reference of attn.head_norm: per row, rms = sqrt(mean(o^2) +
// eps), y = o / rms * gamma, then with a gate y *= sigmoid(w . y + b).
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// CHECK-LABEL: func.func @head_norm_gate
// CHECK-SAME: (%[[XA:[^:]*]]: {{[^,]*}}, %[[GA:[^:]*]]: {{[^,]*}}, %[[WA:[^:]*]]: {{[^,]*}}, %[[BA:[^:]*]]: {{[^)]*}})
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[DV:.*]] = arith.constant 6.400000e+01 : f32
// CHECK-DAG: %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK: %[[X:.*]] = bufferization.to_buffer %[[XA]] read_only : tensor<?x?x?x64xf16> to memref<?x?x?x64xf16>
// CHECK: %[[GAMMA:.*]] = bufferization.to_buffer %[[GA]] read_only : tensor<64xf32> to memref<64xf32>
// CHECK: %[[GW:.*]] = bufferization.to_buffer %[[WA]] read_only : tensor<64xf32> to memref<64xf32>
// CHECK: %[[GB:.*]] = bufferization.to_buffer %[[BA]] read_only : tensor<1xf32> to memref<1xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x64xf16>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[SS:.*]] = scf.for
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[MEAN:.*]] = arith.divf %[[SS]], %[[DV]] : f32
// CHECK: %[[SUM:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
// CHECK: %[[RMS:.*]] = math.sqrt %[[SUM]] : f32
// CHECK: %[[BIAS:.*]] = memref.load %[[GB]][%{{.*}}] : memref<1xf32>
// CHECK: %[[Z:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[BIAS]]) -> (f32)
// CHECK: memref.load %[[GAMMA]]
// CHECK: arith.divf %{{.*}}, %[[RMS]] : f32
// CHECK: memref.load %[[GW]]
// CHECK: %[[NZ:.*]] = arith.negf %[[Z]] : f32
// CHECK: %[[EZ:.*]] = math.exp %[[NZ]] : f32
// CHECK: %[[DEN:.*]] = arith.addf %[[EZ]], %[[ONE]] : f32
// CHECK: %[[GATE:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK: scf.for
// CHECK: %[[Y:.*]] = arith.mulf %{{.*}}, %[[GATE]] : f32
// CHECK: %[[YN:.*]] = arith.truncf %[[Y]] : f32 to f16
// CHECK: memref.store %[[YN]], %[[OUT]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: attn.head_norm
func.func @head_norm_gate(%x: tensor<?x?x?x64xf16>, %g: tensor<64xf32>, %w: tensor<64xf32>, %b: tensor<1xf32>) -> tensor<?x?x?x64xf16> {
  %0 = attn.head_norm %x, %g gate(%w, %b) eps 1.0e-3
      : (tensor<?x?x?x64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<1xf32>) -> tensor<?x?x?x64xf16>
  return %0 : tensor<?x?x?x64xf16>
}

// Without the gate there is no sigmoid; default eps 1e-5.
// CHECK-LABEL: func.func @head_norm_plain
// CHECK-DAG: arith.constant 9.99999974E-6 : f32
// CHECK: math.sqrt
// CHECK-NOT: math.exp
// CHECK: bufferization.to_tensor
func.func @head_norm_plain(%x: tensor<1x2x3x8xf32>, %g: tensor<8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = attn.head_norm %x, %g : (tensor<1x2x3x8xf32>, tensor<8xf32>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}
