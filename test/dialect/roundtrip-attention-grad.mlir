// Round trip of attn.attention's row-LSE result and of attn.attention_grad,
// which takes attn.attention's operands and syntax, then the output, the
// LSE and the cotangent, and returns one gradient per float operand.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @attention_lse
// CHECK: %{{.*}}, %{{.*}} = attn.attention %{{.*}}, %{{.*}}, %{{.*}} gate(%{{.*}}) mask sliding_window window 16 : ({{.*}}) -> (tensor<1x4x9x32xbf16>, tensor<1x4x9xf32>)
func.func @attention_lse(%q: tensor<1x4x9x32xbf16>, %k: tensor<1x2x9x32xbf16>, %v: tensor<1x2x9x32xbf16>, %g: tensor<1x4x9xf32>)
    -> (tensor<1x4x9x32xbf16>, tensor<1x4x9xf32>) {
  %o, %lse = attn.attention %q, %k, %v gate(%g) mask sliding_window window 16
      : (tensor<1x4x9x32xbf16>, tensor<1x2x9x32xbf16>, tensor<1x2x9x32xbf16>, tensor<1x4x9xf32>)
      -> (tensor<1x4x9x32xbf16>, tensor<1x4x9xf32>)
  return %o, %lse : tensor<1x4x9x32xbf16>, tensor<1x4x9xf32>
}

// CHECK-LABEL: func.func @fox_grad
// CHECK: %{{.*}}:4 = attn.attention_grad %{{.*}}, %{{.*}}, %{{.*}} gate(%{{.*}}) scaled, %{{.*}}, %{{.*}}, %{{.*}} : ({{.*}}) -> (tensor<1x4x9x32xbf16>, tensor<1x2x9x32xbf16>, tensor<1x2x9x16xbf16>, tensor<1x4x9xf32>)
func.func @fox_grad(%q: tensor<1x4x9x32xbf16>, %k: tensor<1x2x9x32xbf16>, %v: tensor<1x2x9x16xbf16>, %g: tensor<1x4x9xf32>,
                    %o: tensor<1x4x9x16xbf16>, %lse: tensor<1x4x9xf32>, %do: tensor<1x4x9x16xbf16>) {
  %0:4 = attn.attention_grad %q, %k, %v gate(%g) scaled, %o, %lse, %do
      : (tensor<1x4x9x32xbf16>, tensor<1x2x9x32xbf16>, tensor<1x2x9x16xbf16>, tensor<1x4x9xf32>,
         tensor<1x4x9x16xbf16>, tensor<1x4x9xf32>, tensor<1x4x9x16xbf16>)
      -> (tensor<1x4x9x32xbf16>, tensor<1x2x9x32xbf16>, tensor<1x2x9x16xbf16>, tensor<1x4x9xf32>)
  return
}

// CHECK-LABEL: func.func @path_grad
// CHECK: attn.attention_grad %{{.*}}, %{{.*}}, %{{.*}} path(%{{.*}}, %{{.*}}), %{{.*}}, %{{.*}}, %{{.*}} : ({{.*}}) -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>)
func.func @path_grad(%q: tensor<?x?x?x64xf32>, %w: tensor<?x?x?x64xf32>, %beta: tensor<?x?x?xf32>,
                     %lse: tensor<?x?x?xf32>) {
  %0:5 = attn.attention_grad %q, %q, %q path(%w, %beta), %q, %lse, %q
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?x64xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>)
  return
}
