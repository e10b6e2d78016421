// A launch plan parses, verifies and prints back the same
// (dialect/include/attn/Dialect/AttnLaunch.td, docs/launch-plan.md).
// RUN: attn-opt %s | attn-opt | FileCheck %s

// CHECK-LABEL: func.func private @main
// CHECK-SAME: attn_launch.plan = #attn_launch.plan<device = cuda
// CHECK-SAME: dims = [#attn_launch.dim<"B", input = 0, dim = 0>, #attn_launch.dim<"T", input = 0, dim = 2>]
// CHECK-SAME: values = [#map]
// CHECK-SAME: buffers = [#attn_launch.buffer<"table", bytes = ()[s0, s1, s2] -> (s2 * 4)>]
// CHECK-SAME: #attn_launch.kernel<name = @m::@fill, grid = ()[s0, s1, s2] -> (s2 ceildiv 256, 1, 1), block = [256, 1, 1], smem = 0
// CHECK-SAME: args = [#attn_launch.arg<scratch 0, elements = ()[s0, s1, s2] -> (s2)>, #attn_launch.arg<scalar ()[s0, s1, s2] -> (s2)>]>
// CHECK-SAME: #attn_launch.kernel<name = @m::@main, grid = ()[s0, s1, s2] -> (s1 ceildiv 64, s0, 1), block = [128, 1, 1], smem = 1024
// CHECK-SAME: args = [#attn_launch.arg<input 0>, #attn_launch.arg<output, elements = ()[s0, s1, s2] -> (0)>, #attn_launch.arg<output 1>, #attn_launch.arg<scratch 0, elements = ()[s0, s1, s2] -> (s2)>]
// CHECK-SAME: dependent = true>
func.func private @main(tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> attributes {attn_launch.plan = #attn_launch.plan<device = cuda,
  dims = [#attn_launch.dim<"B", input = 0, dim = 0>, #attn_launch.dim<"T", input = 0, dim = 2>],
  values = [affine_map<()[s0, s1] -> (s1, 128)>],
  buffers = [#attn_launch.buffer<"table", bytes = ()[s0, s1, s2] -> (s2 * 4)>],
  kernels = [
    #attn_launch.kernel<name = @m::@fill, grid = ()[s0, s1, s2] -> (s2 ceildiv 256, 1, 1), block = [256, 1, 1], smem = 0,
      args = [#attn_launch.arg<scratch 0, elements = ()[s0, s1, s2] -> (s2)>, #attn_launch.arg<scalar ()[s0, s1, s2] -> (s2)>]>,
    #attn_launch.kernel<name = @m::@main, grid = ()[s0, s1, s2] -> (s1 ceildiv 64, s0, 1), block = [128, 1, 1], smem = 1024,
      args = [#attn_launch.arg<input 0>, #attn_launch.arg<output, elements = ()[s0, s1, s2] -> (0)>, #attn_launch.arg<output 1>, #attn_launch.arg<scratch 0, elements = ()[s0, s1, s2] -> (s2)>], dependent = true>]>}
