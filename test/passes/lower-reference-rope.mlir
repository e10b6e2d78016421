// attn-lower-reference of attn.rope: angles in f64 from the position and
// inv_freq = exp(-2i/rot * ln theta), pairs rotated in f32, features from
// rotary_dim on copied through.
// RUN: attn-opt %s --attn-lower-reference | FileCheck %s

// Positions operand, interleaved pairs (2i, 2i+1), rotary_dim 32 of 64,
// bf16 storage. -2 ln(1e4) / 32 = -0.5756...
// CHECK-LABEL: func.func @rope_positions_interleaved
// CHECK-SAME: (%[[XA:[^:]*]]: tensor<?x?x?x64xbf16>, %[[PA:[^:]*]]: tensor<?xi64>)
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[FREQ:.*]] = arith.constant -0.575646273248511{{[0-9]*}} : f64
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[X:.*]] = bufferization.to_buffer %[[XA]] read_only : tensor<?x?x?x64xbf16> to memref<?x?x?x64xbf16>
// CHECK: %[[POS:.*]] = bufferization.to_buffer %[[PA]] read_only : tensor<?xi64> to memref<?xi64>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x64xbf16>
// CHECK: scf.for %[[B:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[T:[^ ]*]] =
// CHECK: %[[P64:.*]] = memref.load %[[POS]][%[[T]]] : memref<?xi64>
// CHECK: %[[P:.*]] = arith.sitofp %[[P64]] : i64 to f64
// CHECK: scf.for %[[I:[^ ]*]] = %{{.*}} to %[[C16]] step
// CHECK: arith.mulf %{{.*}}, %[[FREQ]] : f64
// CHECK: %[[INV:.*]] = math.exp %{{.*}} : f64
// CHECK: %[[ANG:.*]] = arith.mulf %[[P]], %[[INV]] : f64
// CHECK: math.cos %[[ANG]] : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: math.sin %[[ANG]] : f64
// CHECK: %[[IA:.*]] = arith.muli %[[I]], %[[C2]] : index
// CHECK: %[[IB:.*]] = arith.addi %[[IA]], %[[C1]] : index
// CHECK: memref.load %[[X]][%[[B]], %[[H]], %[[T]], %[[IA]]]
// CHECK: memref.load %[[X]][%[[B]], %[[H]], %[[T]], %[[IB]]]
// CHECK: arith.subf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %[[T]], %[[IA]]]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %[[T]], %[[IB]]]
// Pass-through of features [32, 64).
// CHECK: scf.for %[[E:[^ ]*]] = %[[C32]] to %[[C64]] step
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[B]], %[[H]], %[[T]], %[[E]]]
// CHECK: memref.store %[[V]], %[[OUT]][%[[B]], %[[H]], %[[T]], %[[E]]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<?x?x?x64xbf16> to tensor<?x?x?x64xbf16>
// CHECK-NOT: attn.rope
func.func @rope_positions_interleaved(%x: tensor<?x?x?x64xbf16>, %pos: tensor<?xi64>) -> tensor<?x?x?x64xbf16> {
  %0 = attn.rope %x positions(%pos) style interleaved rotary_dim 32 : tensor<?x?x?x64xbf16>, tensor<?xi64>
  return %0 : tensor<?x?x?x64xbf16>
}

// No positions: position = t + offset; half style pairs (i, i + rot/2).
// CHECK-LABEL: func.func @rope_offset_half
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1x2x5x8xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[T:[^ ]*]] =
// CHECK: %[[PT:.*]] = arith.addi %[[T]], %[[C3]] : index
// CHECK: %[[PI:.*]] = arith.index_cast %[[PT]] : index to i64
// CHECK: arith.sitofp %[[PI]] : i64 to f64
// CHECK: scf.for %[[I:[^ ]*]] = %{{.*}} to %[[C4]] step
// CHECK: math.cos
// CHECK: math.sin
// CHECK: %[[IB:.*]] = arith.addi %[[I]], %[[C4]] : index
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[T]], %[[I]]]
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[T]], %[[IB]]]
// CHECK-NOT: attn.rope
func.func @rope_offset_half(%x: tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32> {
  %0 = attn.rope %x offset 3 : tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}
