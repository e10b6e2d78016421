// Verifier errors of the attn_block ops added for MTA (attn_block.stencil).
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @stencil_shapes(%s: tensor<69x74xf32>, %k: tensor<6x11xf32>) {
  // expected-error @+1 {{'attn_block.stencil' op input 'tensor<69x74xf32>' must be the result 'tensor<64x63xf32>' plus the kernel 'tensor<6x11xf32>' minus one in each dim}}
  %c = attn_block.stencil %s, %k : tensor<69x74xf32>, tensor<6x11xf32> -> tensor<64x63xf32>
  return
}

// -----

func.func @stencil_rows(%s: tensor<64x74xf32>, %k: tensor<6x11xf32>) {
  // expected-error @+1 {{must be the result 'tensor<64x64xf32>' plus the kernel}}
  %c = attn_block.stencil %s, %k : tensor<64x74xf32>, tensor<6x11xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @stencil_dynamic(%s: tensor<?x74xf32>, %k: tensor<6x11xf32>) {
  // expected-error @+1 {{'attn_block.stencil' op tiles must have a static shape}}
  %c = attn_block.stencil %s, %k : tensor<?x74xf32>, tensor<6x11xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @stencil_f16(%s: tensor<69x74xf16>, %k: tensor<6x11xf32>) {
  // expected-error @+1 {{'attn_block.stencil' op operand #0 must be 2D tensor of 32-bit float values}}
  %c = attn_block.stencil %s, %k : tensor<69x74xf16>, tensor<6x11xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @stencil_rank(%s: tensor<69xf32>, %k: tensor<6x11xf32>) {
  // expected-error @+1 {{'attn_block.stencil' op operand #0 must be 2D tensor of 32-bit float values}}
  %c = attn_block.stencil %s, %k : tensor<69xf32>, tensor<6x11xf32> -> tensor<64x64xf32>
  return
}
