// Round trip of every attn_block op: the custom form is printed, re-parsed,
// and also goes through the generic form and back, giving the same custom
// form. attn-to-block's real output re-parses too, byte for byte, and can be
// fed to the CPU backend in a second attn-opt.
//
//
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: attn-opt %S/../../examples/rope.mlir --attn-fuse --attn-to-block > %t.rope.mlir
// RUN: attn-opt %t.rope.mlir > %t.rope2.mlir
// RUN: diff %t.rope.mlir %t.rope2.mlir
// RUN: attn-opt %t.rope.mlir --mlir-print-op-generic | attn-opt > %t.rope3.mlir
// RUN: diff %t.rope.mlir %t.rope3.mlir
// RUN: attn-opt %S/../../examples/fox.mlir --attn-fuse --attn-to-block > %t.fox.mlir
// RUN: attn-opt %t.fox.mlir > %t.fox2.mlir
// RUN: diff %t.fox.mlir %t.fox2.mlir
// RUN: attn-opt %t.rope.mlir --attn-block-strip-gpu --attn-block-to-cpu | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func private @kernel
// CHECK-SAME: (%[[Q:[^:]*]]: memref<?x?x?x64xf32>, %[[G:[^:]*]]: memref<?x?x?xf32>, %[[COS:[^:]*]]: memref<?x32xf32>, %[[SIN:[^:]*]]: memref<?x32xf32>, %[[O:[^:]*]]: memref<?x?x?x64xf16>)
// CHECK-SAME: attributes {attn_block.kernel}
// CHECK-NEXT: %[[P0:.*]] = attn_block.program_id 0
// CHECK-NEXT: %[[P1:.*]] = attn_block.program_id 1
// CHECK-NEXT: %[[P2:.*]] = attn_block.program_id 2
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[QT:.*]] = attn_block.load %[[Q]][%[[P2]], %[[P1]], %[[P0]], %[[C0]]] dims [2, 3] padding 0.000000e+00 : memref<?x?x?x64xf32> -> tensor<16x64xf32>
// CHECK-NEXT: %[[GT:.*]] = attn_block.load %[[G]][%[[P2]], %[[P1]], %[[P0]]] dims [2] padding -1.500000e+00 : memref<?x?x?xf32> -> tensor<16xf32>
// rope takes [rows, R/2] cos/sin tiles: R = 64 (all of D) for the half
// style, R = 32 (features 32.. pass through) for the interleaved one.
// CHECK-NEXT: %[[CT:.*]] = attn_block.load %[[COS]][%[[P0]], %[[C0]]] dims [0, 1] padding 1.000000e+00 : memref<?x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[ST:.*]] = attn_block.load %[[SIN]][%[[P0]], %[[C0]]] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[CT2:.*]] = attn_block.load %[[COS]][%[[C0]], %[[C0]]] dims [0, 1] padding 1.000000e+00 : memref<?x32xf32> -> tensor<16x16xf32>
// CHECK-NEXT: %[[ST2:.*]] = attn_block.load %[[SIN]][%[[C0]], %[[C0]]] dims [0, 1] padding 0.000000e+00 : memref<?x32xf32> -> tensor<16x16xf32>
// CHECK-NEXT: %[[R:.*]] = attn_block.rope %[[QT]], %[[CT]], %[[ST]] style half : tensor<16x64xf32>, tensor<16x32xf32>
// CHECK-NEXT: %[[RI:.*]] = attn_block.rope %[[R]], %[[CT2]], %[[ST2]] style interleaved : tensor<16x64xf32>, tensor<16x16xf32>
// CHECK-NEXT: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
// CHECK-NEXT: %[[S:.*]] = attn_block.dot %[[RI]], %[[QT]], %[[Z]] transpose_b : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x16xf32>
// CHECK-NEXT: %[[ZA:.*]] = arith.constant dense<0.000000e+00> : tensor<16x64xf32>
// CHECK-NEXT: %[[A:.*]] = attn_block.dot %[[S]], %[[QT]], %[[ZA]] : tensor<16x16xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
// CHECK-NEXT: %[[M:.*]] = attn_block.reduce max %[[S]] axis 1 : tensor<16x16xf32> -> tensor<16xf32>
// CHECK-NEXT: %[[L:.*]] = attn_block.reduce sum %[[A]] axis 0 : tensor<16x64xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[MB:.*]] = attn_block.broadcast %[[M]] axis 1 : tensor<16xf32> -> tensor<16x64xf32>
// CHECK-NEXT: %[[LB:.*]] = attn_block.broadcast %[[L]] axis 0 : tensor<64xf32> -> tensor<16x64xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[MB]], %[[LB]] : tensor<16x64xf32>
// CHECK-NEXT: %[[CS:.*]] = attn_block.scan %[[GT]] : tensor<16xf32>
// CHECK-NEXT: %[[IO:.*]] = attn_block.iota %[[P0]] : tensor<16xi64>
// CHECK-NEXT: %[[IOB:.*]] = attn_block.broadcast %[[IO]] axis 0 : tensor<16xi64> -> tensor<4x16xi64>
// CHECK-NEXT: %[[G64:.*]] = arith.extf %[[CS]] : tensor<16xf32> to tensor<16xf64>
// CHECK-NEXT: %[[S64:.*]] = attn_block.scan %[[G64]] : tensor<16xf64>
// CHECK-NEXT: %[[B64:.*]] = attn_block.broadcast %[[S64]] axis 0 : tensor<16xf64> -> tensor<1x16xf64>
// CHECK-NEXT: %[[R64:.*]] = attn_block.reduce sum %[[B64]] axis 1 : tensor<1x16xf64> -> tensor<1xf64>
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[SUM]] : tensor<16x64xf32> to tensor<16x64xf16>
// CHECK-NEXT: attn_block.store %[[H]], %[[O]][%[[P2]], %[[P1]], %[[P0]], %[[C0]]] dims [2, 3] : tensor<16x64xf16> -> memref<?x?x?x64xf16>
// CHECK-NEXT: attn_block.store %[[CS]], %[[G]][%[[P2]], %[[P1]], %[[P0]]] dims [2] : tensor<16xf32> -> memref<?x?x?xf32>
// CHECK-NEXT: return
// GENERIC-LABEL: sym_name = "kernel"
// GENERIC: "attn_block.program_id"() <{axis = 0 : i64}> : () -> index
// GENERIC-NEXT: "attn_block.program_id"() <{axis = 1 : i64}> : () -> index
// GENERIC-NEXT: "attn_block.program_id"() <{axis = 2 : i64}> : () -> index
// GENERIC: "attn_block.load"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dims = array<i64: 2, 3>, padding = 0.000000e+00 : f64}> : (memref<?x?x?x64xf32>, index, index, index, index) -> tensor<16x64xf32>
// GENERIC-NEXT: "attn_block.load"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dims = array<i64: 2>, padding = -1.500000e+00 : f64}> : (memref<?x?x?xf32>, index, index, index) -> tensor<16xf32>
// GENERIC-NEXT: "attn_block.load"(%{{.*}}, %{{.*}}, %{{.*}}) <{dims = array<i64: 0, 1>, padding = 1.000000e+00 : f64}> : (memref<?x32xf32>, index, index) -> tensor<16x32xf32>
// GENERIC-NEXT: "attn_block.load"(%{{.*}}, %{{.*}}, %{{.*}}) <{dims = array<i64: 0, 1>, padding = 0.000000e+00 : f64}> : (memref<?x32xf32>, index, index) -> tensor<16x32xf32>
// GENERIC-NEXT: "attn_block.load"(%{{.*}}, %{{.*}}, %{{.*}}) <{dims = array<i64: 0, 1>, padding = 1.000000e+00 : f64}> : (memref<?x32xf32>, index, index) -> tensor<16x16xf32>
// GENERIC-NEXT: "attn_block.load"(%{{.*}}, %{{.*}}, %{{.*}}) <{dims = array<i64: 0, 1>, padding = 0.000000e+00 : f64}> : (memref<?x32xf32>, index, index) -> tensor<16x16xf32>
// GENERIC-NEXT: "attn_block.rope"(%{{.*}}, %{{.*}}, %{{.*}}) <{style = 0 : i32}> : (tensor<16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x64xf32>
// GENERIC-NEXT: "attn_block.rope"(%{{.*}}, %{{.*}}, %{{.*}}) <{style = 1 : i32}> : (tensor<16x64xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x64xf32>
// GENERIC: "attn_block.dot"(%{{.*}}, %{{.*}}, %{{.*}}) <{transpose_b}> : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
// GENERIC: "attn_block.dot"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x16xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
// GENERIC-NEXT: "attn_block.reduce"(%{{.*}}) <{axis = 1 : i64, kind = 0 : i32}> : (tensor<16x16xf32>) -> tensor<16xf32>
// GENERIC-NEXT: "attn_block.reduce"(%{{.*}}) <{axis = 0 : i64, kind = 1 : i32}> : (tensor<16x64xf32>) -> tensor<64xf32>
// GENERIC-NEXT: "attn_block.broadcast"(%{{.*}}) <{axis = 1 : i64}> : (tensor<16xf32>) -> tensor<16x64xf32>
// GENERIC-NEXT: "attn_block.broadcast"(%{{.*}}) <{axis = 0 : i64}> : (tensor<64xf32>) -> tensor<16x64xf32>
// GENERIC: "attn_block.scan"(%{{.*}}) : (tensor<16xf32>) -> tensor<16xf32>
// GENERIC-NEXT: "attn_block.iota"(%{{.*}}) : (index) -> tensor<16xi64>
// GENERIC: "attn_block.store"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dims = array<i64: 2, 3>}> : (tensor<16x64xf16>, memref<?x?x?x64xf16>, index, index, index, index) -> ()
// GENERIC-NEXT: "attn_block.store"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{dims = array<i64: 2>}> : (tensor<16xf32>, memref<?x?x?xf32>, index, index, index) -> ()
func.func private @kernel(%q: memref<?x?x?x64xf32>, %g: memref<?x?x?xf32>, %cos: memref<?x32xf32>, %sin: memref<?x32xf32>, %o: memref<?x?x?x64xf16>) attributes {attn_block.kernel} {
  %p0 = attn_block.program_id 0
  %p1 = attn_block.program_id 1
  %p2 = attn_block.program_id 2
  %c0 = arith.constant 0 : index
  %qt = attn_block.load %q[%p2, %p1, %p0, %c0] dims [2, 3] padding 0.0 : memref<?x?x?x64xf32> -> tensor<16x64xf32>
  %gt = attn_block.load %g[%p2, %p1, %p0] dims [2] padding -1.5 : memref<?x?x?xf32> -> tensor<16xf32>
  %ct = attn_block.load %cos[%p0, %c0] dims [0, 1] padding 1.0 : memref<?x32xf32> -> tensor<16x32xf32>
  %st = attn_block.load %sin[%p0, %c0] dims [0, 1] padding 0.0 : memref<?x32xf32> -> tensor<16x32xf32>
  %ct2 = attn_block.load %cos[%c0, %c0] dims [0, 1] padding 1.0 : memref<?x32xf32> -> tensor<16x16xf32>
  %st2 = attn_block.load %sin[%c0, %c0] dims [0, 1] padding 0.0 : memref<?x32xf32> -> tensor<16x16xf32>
  %r = attn_block.rope %qt, %ct, %st style half : tensor<16x64xf32>, tensor<16x32xf32>
  %ri = attn_block.rope %r, %ct2, %st2 style interleaved : tensor<16x64xf32>, tensor<16x16xf32>
  %z = arith.constant dense<0.0> : tensor<16x16xf32>
  %s = attn_block.dot %ri, %qt, %z transpose_b : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x16xf32>
  %za = arith.constant dense<0.0> : tensor<16x64xf32>
  %a = attn_block.dot %s, %qt, %za : tensor<16x16xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
  %m = attn_block.reduce max %s axis 1 : tensor<16x16xf32> -> tensor<16xf32>
  %l = attn_block.reduce sum %a axis 0 : tensor<16x64xf32> -> tensor<64xf32>
  %mb = attn_block.broadcast %m axis 1 : tensor<16xf32> -> tensor<16x64xf32>
  %lb = attn_block.broadcast %l axis 0 : tensor<64xf32> -> tensor<16x64xf32>
  %sum = arith.addf %mb, %lb : tensor<16x64xf32>
  %cs = attn_block.scan %gt : tensor<16xf32>
  %io = attn_block.iota %p0 : tensor<16xi64>
  %iob = attn_block.broadcast %io axis 0 : tensor<16xi64> -> tensor<4x16xi64>
  %g64 = arith.extf %cs : tensor<16xf32> to tensor<16xf64>
  %s64 = attn_block.scan %g64 : tensor<16xf64>
  %b64 = attn_block.broadcast %s64 axis 0 : tensor<16xf64> -> tensor<1x16xf64>
  %r64 = attn_block.reduce sum %b64 axis 1 : tensor<1x16xf64> -> tensor<1xf64>
  %h = arith.truncf %sum : tensor<16x64xf32> to tensor<16x64xf16>
  attn_block.store %h, %o[%p2, %p1, %p0, %c0] dims [2, 3] : tensor<16x64xf16> -> memref<?x?x?x64xf16>
  attn_block.store %cs, %g[%p2, %p1, %p0] dims [2] : tensor<16xf32> -> memref<?x?x?xf32>
  return
}

// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[Q:[^:]*]]: memref<?x?x?x64xf32>, %[[G:[^:]*]]: memref<?x?x?xf32>, %[[COS:[^:]*]]: memref<?x32xf32>, %[[SIN:[^:]*]]: memref<?x32xf32>, %[[O:[^:]*]]: memref<?x?x?x64xf16>, %[[X:[^:]*]]: index, %[[Y:[^:]*]]: index)
// CHECK-NEXT: attn_block.launch @kernel grid(%[[X]], %[[Y]]) args(%[[Q]], %[[G]], %[[COS]], %[[SIN]], %[[O]]) : memref<?x?x?x64xf32>, memref<?x?x?xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x?x?x64xf16>
// CHECK-NEXT: return
// GENERIC-LABEL: sym_name = "host"
// GENERIC: "attn_block.launch"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{kernel = @kernel}> : (index, index, memref<?x?x?x64xf32>, memref<?x?x?xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x?x?x64xf16>) -> ()
func.func @host(%q: memref<?x?x?x64xf32>, %g: memref<?x?x?xf32>, %cos: memref<?x32xf32>, %sin: memref<?x32xf32>, %o: memref<?x?x?x64xf16>, %x: index, %y: index) {
  attn_block.launch @kernel grid(%x, %y) args(%q, %g, %cos, %sin, %o) : memref<?x?x?x64xf32>, memref<?x?x?xf32>, memref<?x32xf32>, memref<?x32xf32>, memref<?x?x?x64xf16>
  return
}

// The re-parsed attn-to-block output lowers like the one-process pipeline:
// the attention kernel reads q and k rotated and computes no angle; the
// table kernel computes the angles in f64, the rotation kernels read its
// tables, and the host launches them before the attention kernel.
// CPU-LABEL: func.func private @main_attention_kernel
// CPU-NOT: math.{{(cos|sin)}}
// CPU-LABEL: func.func private @main_rope_table
// CPU: math.cos %{{.*}} : tensor<{{.*}}xf64>
// CPU: math.sin %{{.*}} : tensor<{{.*}}xf64>
// CPU-LABEL: func.func @main
// CPU: func.call @main_rope_table(
// CPU: func.call @main_rope_q(
// CPU: func.call @main_rope_k(
// CPU: scf.parallel
// CPU-NEXT: func.call @main_attention_kernel(
