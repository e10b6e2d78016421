// RUN: attn-opt %s --attn-caller-buffers=entry=main -split-input-file -verify-diagnostics

// expected-error @+1 {{attn-caller-buffers: @main must have one block and return at least one tensor}}
func.func @main(%a: tensor<?xf32>) {
  return
}

// -----

// expected-error @+1 {{attn-caller-buffers: result 1 must be a ranked tensor}}
func.func @main(%a: tensor<?xf32>, %b: tensor<*xf32>) -> (tensor<?xf32>, tensor<*xf32>) {
  return %a, %b : tensor<?xf32>, tensor<*xf32>
}

// -----

// expected-error @+1 {{attn-caller-buffers: no function @main}}
module {
  func.func @other(%a: tensor<?xf32>) -> tensor<?xf32> {
    return %a : tensor<?xf32>
  }
}
