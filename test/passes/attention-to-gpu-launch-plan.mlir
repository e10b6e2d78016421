// The launch plan attn-attention-to-gpu puts on the entry: the kernel ABI
// of GpuPlan.h as data, executed by runtime/lib/LaunchPlan.cpp
// (docs/launch-plan.md). Symbols: s0..s4 = B, Hq, Hk, T, S, s5 = value 0.
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_80" | FileCheck %s
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a" | FileCheck %s --check-prefix=PDL
// RUN: attn-opt %s --attn-attention-to-gpu="lowering=direct chip=sm_90a" --split-input-file | FileCheck %s --check-prefix=PLAIN

// FoX + RoPE, GQA (4 query heads on 2 kv heads), D = 128, bf16.
// Value 0: max(T - S, 0), the query positions below the keys' first one.
// CHECK: #[[V:map[0-9]*]] = affine_map<()[s0, s1, s2, s3, s4] -> (s3 - s4, 0)>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: attn_launch.plan = #attn_launch.plan<device = cuda,
// CHECK-SAME: dims = [#attn_launch.dim<"B", input = 0, dim = 0>, #attn_launch.dim<"Hq", input = 0, dim = 1>, #attn_launch.dim<"Hk", input = 1, dim = 1>, #attn_launch.dim<"T", input = 0, dim = 2>, #attn_launch.dim<"S", input = 1, dim = 2>]
// CHECK-SAME: values = [#[[V]]]
// Tables of S + max(T - S, 0) rows of 64 f32 pairs.
// CHECK-SAME: #attn_launch.buffer<"rope_cos", bytes = ()[s0, s1, s2, s3, s4, s5] -> ((s4 + s5) * 256)>
// CHECK-SAME: #attn_launch.buffer<"rope_sin"
// The attention kernel rotates q itself: only k gets a rotated copy.
// CHECK-NOT: q_rotated
// CHECK-SAME: #attn_launch.buffer<"k_rotated", bytes = ()[s0, s1, s2, s3, s4, s5] -> (((s0 * s2) * s4) * 256)>
// FoX records: ceil(S/64) + 2 tiles of 4 + 64 floats, then G, per row.
// CHECK-SAME: #attn_launch.buffer<"gate_prefix", bytes = ()[s0, s1, s2, s3, s4, s5] -> (((s0 * s1) * ((s4 ceildiv 64 + 2) * 68 + (s4 ceildiv 4) * 4)) * 4)>
// Kernels in launch order.
// CHECK-SAME: #attn_launch.kernel<name = @main_gpu::@rope_table, grid = ()[s0, s1, s2, s3, s4, s5] -> (((s4 + s5) * 64) ceildiv 256, 1, 1), block = [256, 1, 1], smem = 0
// CHECK-SAME: #attn_launch.arg<scalar ()[s0, s1, s2, s3, s4, s5] -> (-s5)>]>
// CHECK-SAME: #attn_launch.kernel<name = @main_gpu::@rope, grid = ()[s0, s1, s2, s3, s4, s5] -> ((((s0 * s2) * s4) * 8) ceildiv 256, 1, 1)
// CHECK-SAME: args = [#attn_launch.arg<input 1, {{[^#]*}}, #attn_launch.arg<scratch 2,
// CHECK-SAME: #attn_launch.kernel<name = @main_gpu::@gate, grid = ()[s0, s1, s2, s3, s4, s5] -> (s0 * s1, 1, 1), block = [256, 1, 1], smem = 0, args = [#attn_launch.arg<input 3,
// CHECK-SAME: #attn_launch.kernel<name = @main_gpu::@attention, grid = ()[s0, s1, s2, s3, s4, s5] -> (s3 ceildiv 64, s0 * s1, 1), block = [128, 1, 1], smem = 83008, args = [#attn_launch.arg<input 0, {{[^#]*}}, #attn_launch.arg<scratch 2, {{[^#]*}}, #attn_launch.arg<input 2, {{[^#]*}}, #attn_launch.arg<output, {{[^#]*}}, #attn_launch.arg<scratch 3,
// Query i at table row S - T + max(T - S, 0) + i.
// CHECK-SAME: #attn_launch.arg<scalar ()[s0, s1, s2, s3, s4, s5] -> (s4 - s3 + s5)>]>]>
// sm_80 has no griddepcontrol.
// CHECK-NOT: dependent = true

// PDL-LABEL: func.func @main(
// PDL-SAME: @main_gpu::@attention, {{.*}} dependent = true>]>

// Plain attention: one kernel, no values or buffers; the unused gate
// argument is the output with no elements.
// PLAIN-LABEL: func.func @plain(
// PLAIN-SAME: attn_launch.plan = #attn_launch.plan<device = cuda, dims = [{{.*}}], values = [], buffers = [], kernels = [#attn_launch.kernel<name = @plain_gpu::@attention,
// PLAIN-SAME: #attn_launch.arg<output, elements = ()[s0, s1, s2, s3, s4] -> (((s0 * s1) * s3) * 64)>, #attn_launch.arg<output, elements = ()[s0, s1, s2, s3, s4] -> (0)>
// PLAIN-NOT: dependent = true
func.func @main(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %g: tensor<?x4x?xf32>) -> tensor<?x4x?x128xbf16> {
  %o = attn.attention %q, %k, %v rope(1.000000e+04) gate(%g) : (tensor<?x4x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x128xbf16>
  return %o : tensor<?x4x?x128xbf16>
}

// -----

func.func @plain(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
