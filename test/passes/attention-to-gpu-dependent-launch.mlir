// RUN: attn-opt %s --split-input-file --attn-attention-to-gpu="lowering=direct chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-attention-to-gpu="lowering=direct chip=sm_80" | FileCheck %s --check-prefix=SM80

// Programmatic dependent launch (GpuPlan::dependentLaunch, sm_90 and
// later): the kernel before attention lets it start early, and attention
// copies its inputs, then waits for that kernel before it first reads what
// the kernel wrote. sm_80 has no griddepcontrol.

// RoPE with 8-pair chunks: the attention kernel rotates Q itself, so Q is
// an input (copied before the wait); K comes rotated from the rope kernel.
// CHECK-LABEL: gpu.module @rope_in_kernel_gpu
// CHECK-SAME: dependent_launch = 1 : i64
// CHECK: gpu.func @rope(
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK: gpu.func @attention(
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: nvgpu.device_async_copy %arg0
// CHECK: nvgpu.device_async_create_group
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.griddepcontrol wait
// CHECK-NEXT: arith.constant
// CHECK: nvgpu.device_async_copy %arg1
// CHECK-NOT: nvvm.griddepcontrol
// SM80-LABEL: gpu.module @rope_in_kernel_gpu
// SM80-SAME: dependent_launch = 0 : i64
// SM80-NOT: nvvm.griddepcontrol
func.func @rope_in_kernel(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v rope(1.0e+04) : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// RoPE on 8 dims (no 8-pair chunks): the rope kernel rotates q too, so the
// wait comes before the Q copy.
// CHECK-LABEL: gpu.module @rope_pass_gpu
// CHECK: gpu.func @attention(
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.griddepcontrol wait
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: nvgpu.device_async_copy %arg0
// CHECK-NOT: nvvm.griddepcontrol
func.func @rope_pass(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v rope(1.0e+04) rope_dim 8 : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Plain attention runs alone: nothing to wait for.
// CHECK-LABEL: gpu.module @plain_gpu
// CHECK-SAME: dependent_launch = 1 : i64
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: gpu.func @attention(
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: gpu.return
func.func @plain(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
