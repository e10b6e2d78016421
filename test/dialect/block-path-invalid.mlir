// Verifier errors of the attn_block ops added for PaTH (extract_row,
// insert_row: AttnBlockDialect.cpp's verifyRowAccess and the ODS types).
//
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @extract_row_length(%a: tensor<64x32xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.extract_row' op a row of 'tensor<64x32xf32>' must be 'tensor<32xf32>', got 'tensor<64xf32>'}}
  %x = attn_block.extract_row %a[%i] : tensor<64x32xf32> -> tensor<64xf32>
  return
}

// -----

func.func @extract_row_element_type(%a: tensor<64x32xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.extract_row' op a row of 'tensor<64x32xf32>' must be 'tensor<32xf32>', got 'tensor<32xf64>'}}
  %x = attn_block.extract_row %a[%i] : tensor<64x32xf32> -> tensor<32xf64>
  return
}

// -----

func.func @extract_row_of_a_vector(%a: tensor<64xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.extract_row' op a row of 'tensor<64xf32>' must be}}
  %x = attn_block.extract_row %a[%i] : tensor<64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @extract_row_out_of_range(%a: tensor<64x32xf32>) {
  %c = arith.constant 64 : index
  // expected-error @+1 {{'attn_block.extract_row' op row index 64 is outside the 64 rows of 'tensor<64x32xf32>'}}
  %x = attn_block.extract_row %a[%c] : tensor<64x32xf32> -> tensor<32xf32>
  return
}

// -----

func.func @insert_row_negative(%a: tensor<64x32xf32>, %r: tensor<32xf32>) {
  %c = arith.constant -1 : index
  // expected-error @+1 {{'attn_block.insert_row' op row index -1 is outside the 64 rows of 'tensor<64x32xf32>'}}
  %b = attn_block.insert_row %r, %a[%c] : tensor<32xf32> -> tensor<64x32xf32>
  return
}

// -----

func.func @insert_row_length(%a: tensor<64x32xf32>, %r: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.insert_row' op a row of 'tensor<64x32xf32>' must be 'tensor<32xf32>', got 'tensor<16xf32>'}}
  %b = attn_block.insert_row %r, %a[%i] : tensor<16xf32> -> tensor<64x32xf32>
  return
}

// -----

// Only the generic form can give the result another type than dest.
func.func @insert_row_result_type(%a: tensor<64x32xf32>, %r: tensor<32xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.insert_row' op failed to verify that all of {dest, result} have same type}}
  %b = "attn_block.insert_row"(%r, %a, %i) : (tensor<32xf32>, tensor<64x32xf32>, index) -> tensor<32x32xf32>
  return
}

// -----

func.func @extract_row_integer(%a: tensor<4x8xi64>, %i: index) {
  // expected-error @+1 {{'attn_block.extract_row' op operand #0 must be ranked tensor of floating-point values}}
  %x = attn_block.extract_row %a[%i] : tensor<4x8xi64> -> tensor<8xi64>
  return
}
