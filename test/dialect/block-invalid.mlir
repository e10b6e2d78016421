// attn_block verifier errors (dialect/lib/AttnBlockDialect.cpp and the ODS
// constraints on program_id/reduce/broadcast axes and on rope's cos/sin tiles).
//
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @load_index_count(%m: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.load' op needs 4 indices for 'memref<?x?x?x64xf32>', got 3}}
  %t = attn_block.load %m[%i, %i, %i] dims [2, 3] padding 0.0 : memref<?x?x?x64xf32> -> tensor<16x64xf32>
  return
}

// -----

func.func @store_index_count(%m: memref<?x?x?xf32>, %i: index, %t: tensor<16xf32>) {
  // expected-error @+1 {{'attn_block.store' op needs 3 indices for 'memref<?x?x?xf32>', got 4}}
  attn_block.store %t, %m[%i, %i, %i, %i] dims [2] : tensor<16xf32> -> memref<?x?x?xf32>
  return
}

// -----

func.func @load_dims_count(%m: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.load' op 'dims' must name one memref dim per tile dim (2), got 1}}
  %t = attn_block.load %m[%i, %i, %i, %i] dims [2] padding 0.0 : memref<?x?x?x64xf32> -> tensor<16x64xf32>
  return
}

// -----

func.func @store_dims_count(%m: memref<?x?x?xf32>, %i: index, %t: tensor<16xf32>) {
  // expected-error @+1 {{'attn_block.store' op 'dims' must name one memref dim per tile dim (1), got 2}}
  attn_block.store %t, %m[%i, %i, %i] dims [1, 2] : tensor<16xf32> -> memref<?x?x?xf32>
  return
}

// -----

func.func @load_dims_decreasing(%m: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.load' op 'dims' must be increasing memref dims}}
  %t = attn_block.load %m[%i, %i, %i, %i] dims [3, 2] padding 0.0 : memref<?x?x?x64xf32> -> tensor<64x16xf32>
  return
}

// -----

func.func @load_dims_repeated(%m: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.load' op 'dims' must be increasing memref dims}}
  %t = attn_block.load %m[%i, %i, %i, %i] dims [2, 2] padding 0.0 : memref<?x?x?x64xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @load_dims_out_of_range(%m: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.load' op 'dims' must be increasing memref dims}}
  %t = attn_block.load %m[%i, %i, %i, %i] dims [2, 4] padding 0.0 : memref<?x?x?x64xf32> -> tensor<16x64xf32>
  return
}

// -----

func.func @store_dims_negative(%m: memref<?x?x?xf32>, %i: index, %t: tensor<16xf32>) {
  // expected-error @+1 {{'attn_block.store' op 'dims' must be increasing memref dims}}
  attn_block.store %t, %m[%i, %i, %i] dims [-1] : tensor<16xf32> -> memref<?x?x?xf32>
  return
}

// -----

func.func @load_dynamic_tile(%m: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.load' op tiles must have a static shape}}
  %t = attn_block.load %m[%i, %i, %i, %i] dims [2, 3] padding 0.0 : memref<?x?x?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @load_element_type(%m: memref<?x?x?x64xf32>, %i: index) {
  // expected-error @+1 {{'attn_block.load' op tile element type 'f16' must match the memref's 'f32'}}
  %t = attn_block.load %m[%i, %i, %i, %i] dims [2, 3] padding 0.0 : memref<?x?x?x64xf32> -> tensor<16x64xf16>
  return
}

// -----

func.func @store_element_type(%m: memref<?x?x?x64xbf16>, %i: index, %t: tensor<16x64xf32>) {
  // expected-error @+1 {{'attn_block.store' op tile element type 'f32' must match the memref's 'bf16'}}
  attn_block.store %t, %m[%i, %i, %i, %i] dims [2, 3] : tensor<16x64xf32> -> memref<?x?x?x64xbf16>
  return
}

// -----

func.func @store_add_bf16(%m: memref<?x?x?x64xbf16>, %i: index, %t: tensor<16x64xbf16>) {
  // expected-error @+1 {{'attn_block.store' op a reducing store ('add') takes f32 tiles, got 'bf16'}}
  attn_block.store %t, %m[%i, %i, %i, %i] dims [2, 3] add : tensor<16x64xbf16> -> memref<?x?x?x64xbf16>
  return
}

// -----

func.func @dot_transposed_a_inner_dim(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<8x16xf32>) {
  // expected-error @+1 {{'attn_block.dot' op shapes do not compose: a 'tensor<4x8xf32>' (transposed), b 'tensor<8x16xf32>', acc 'tensor<8x16xf32>'}}
  %r = attn_block.dot %a, %b, %c transpose_a : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @dot_rank(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn_block.dot' op operands must be 2-D tiles}}
  %r = attn_block.dot %a, %b, %c : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @dot_inner_dim(%a: tensor<4x8xf32>, %b: tensor<16x4xf32>, %c: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn_block.dot' op shapes do not compose: a 'tensor<4x8xf32>', b 'tensor<16x4xf32>', acc 'tensor<4x4xf32>'}}
  %r = attn_block.dot %a, %b, %c : tensor<4x8xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// With transpose_b, b is [N, K]: [8, 16] has K = 16, not a's 8.
func.func @dot_transposed_inner_dim(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn_block.dot' op shapes do not compose: a 'tensor<4x8xf32>', b 'tensor<8x16xf32>' (transposed), acc 'tensor<4x8xf32>'}}
  %r = attn_block.dot %a, %b, %c transpose_b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @dot_acc_shape(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn_block.dot' op shapes do not compose: a 'tensor<4x8xf32>', b 'tensor<8x16xf32>', acc 'tensor<4x8xf32>'}}
  %r = attn_block.dot %a, %b, %c : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @dot_acc_rows(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %c: tensor<8x16xf32>) {
  // expected-error @+1 {{'attn_block.dot' op shapes do not compose: a 'tensor<4x8xf32>', b 'tensor<16x8xf32>' (transposed), acc 'tensor<8x16xf32>'}}
  %r = attn_block.dot %a, %b, %c transpose_b : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<8x16xf32>
  return
}

// -----

// Reducing axis 1 of [4, 8] leaves the 4 rows.
func.func @reduce_size(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn_block.reduce' op reducing axis 1 of 'tensor<4x8xf32>' cannot give 'tensor<8xf32>'}}
  %r = attn_block.reduce max %t axis 1 : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_input_rank(%t: tensor<4x8x2xf32>) {
  // expected-error @+1 {{'attn_block.reduce' op reducing axis 0 of 'tensor<4x8x2xf32>' cannot give 'tensor<8xf32>'}}
  %r = attn_block.reduce sum %t axis 0 : tensor<4x8x2xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_result_rank(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn_block.reduce' op reducing axis 0 of 'tensor<4x8xf32>' cannot give 'tensor<1x8xf32>'}}
  %r = attn_block.reduce sum %t axis 0 : tensor<4x8xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @reduce_element_type(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn_block.reduce' op reducing axis 0 of 'tensor<4x8xf32>' cannot give 'tensor<8xf64>'}}
  %r = attn_block.reduce sum %t axis 0 : tensor<4x8xf32> -> tensor<8xf64>
  return
}

// -----

func.func @reduce_axis(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'attn_block.reduce' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0 whose maximum value is 1}}
  %r = attn_block.reduce sum %t axis 2 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// axis 0 spreads a per-column vector over rows: [8] -> [R, 8].
func.func @broadcast_size(%v: tensor<8xf32>) {
  // expected-error @+1 {{'attn_block.broadcast' op broadcasting 'tensor<8xf32>' along axis 0 cannot give 'tensor<8x4xf32>'}}
  %r = attn_block.broadcast %v axis 0 : tensor<8xf32> -> tensor<8x4xf32>
  return
}

// -----

// axis 1 spreads a per-row vector over columns: [8] -> [8, C].
func.func @broadcast_size_axis1(%v: tensor<8xf32>) {
  // expected-error @+1 {{'attn_block.broadcast' op broadcasting 'tensor<8xf32>' along axis 1 cannot give 'tensor<4x8xf32>'}}
  %r = attn_block.broadcast %v axis 1 : tensor<8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_input_rank(%v: tensor<8x1xf32>) {
  // expected-error @+1 {{'attn_block.broadcast' op broadcasting 'tensor<8x1xf32>' along axis 1 cannot give 'tensor<8x4xf32>'}}
  %r = attn_block.broadcast %v axis 1 : tensor<8x1xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @broadcast_result_rank(%v: tensor<8xf32>) {
  // expected-error @+1 {{'attn_block.broadcast' op broadcasting 'tensor<8xf32>' along axis 0 cannot give 'tensor<2x4x8xf32>'}}
  %r = attn_block.broadcast %v axis 0 : tensor<8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @broadcast_element_type(%v: tensor<8xi64>) {
  // expected-error @+1 {{'attn_block.broadcast' op broadcasting 'tensor<8xi64>' along axis 0 cannot give 'tensor<4x8xi32>'}}
  %r = attn_block.broadcast %v axis 0 : tensor<8xi64> -> tensor<4x8xi32>
  return
}

// -----

func.func @broadcast_axis(%v: tensor<8xf32>) {
  // expected-error @+1 {{'attn_block.broadcast' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0 whose maximum value is 1}}
  %r = attn_block.broadcast %v axis 2 : tensor<8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @program_id_axis() {
  // expected-error @+1 {{'attn_block.program_id' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %p = attn_block.program_id 3
  return
}

// -----

func.func @program_id_negative_axis() {
  // expected-error @+1 {{'attn_block.program_id' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %p = attn_block.program_id -1
  return
}

// -----

// attn_block.rope: cos/sin tiles are [rows, R/2] with the input's rows.
func.func @rope_table_rows(%x: tensor<16x64xf32>, %c: tensor<8x32xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'attn_block.rope' op cos/sin tiles 'tensor<8x32xf32>' must be [rows, R/2] with rows and R <= D of the input 'tensor<16x64xf32>'}}
  %r = attn_block.rope %x, %c, %c style half : tensor<16x64xf32>, tensor<8x32xf32>
  return %r : tensor<16x64xf32>
}

// -----

// R = 2 * 40 = 80 rotated features do not fit in D = 64.
func.func @rope_table_too_wide(%x: tensor<16x64xf32>, %c: tensor<16x40xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'attn_block.rope' op cos/sin tiles 'tensor<16x40xf32>' must be [rows, R/2] with rows and R <= D of the input 'tensor<16x64xf32>'}}
  %r = attn_block.rope %x, %c, %c style interleaved : tensor<16x64xf32>, tensor<16x40xf32>
  return %r : tensor<16x64xf32>
}

// -----

// Only the generic form can give sin another type than cos; the
// AllTypesMatch<cos, sin> constraint rejects it before RopeOp::verify.
func.func @rope_table_types_differ(%x: tensor<16x64xf32>, %c: tensor<16x32xf32>, %s: tensor<16x16xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'attn_block.rope' op failed to verify that all of {cos, sin} have same type}}
  %r = "attn_block.rope"(%x, %c, %s) <{style = 0 : i32}> : (tensor<16x64xf32>, tensor<16x32xf32>, tensor<16x16xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

func.func @rope_table_element_type(%x: tensor<16x64xf32>, %c: tensor<16x32xf16>) -> tensor<16x64xf32> {
  // expected-error @+1 {{'attn_block.rope' op operand #1 must be 2D tensor of 32-bit float values, but got 'tensor<16x32xf16>'}}
  %r = attn_block.rope %x, %c, %c style half : tensor<16x64xf32>, tensor<16x32xf16>
  return %r : tensor<16x64xf32>
}

// -----

func.func @fold_width(%t: tensor<4x12xf32>) {
  // expected-error @+1 {{'attn_block.fold' op folding 'tensor<4x12xf32>' into blocks of 8 columns cannot give 'tensor<4x8xf32>'}}
  %r = attn_block.fold %t width 8 : tensor<4x12xf32> -> tensor<4x8xf32>
  return
}

// -----

#mma = #attn_block.mma<version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]>
func.func @fold_layout(%t: tensor<64x16xf32, #mma>) {
  // expected-error @+1 {{'attn_block.fold' op input and result must have the same layout}}
  %r = attn_block.fold %t width 8 : tensor<64x16xf32, #mma> -> tensor<64x8xf32>
  return
}
