// Programmatic dependent launch of the block program's attention kernel
// (GpuPlan::attentionOverlapsPrologue, one rule for both lowerings and the
// runtime): the launch plan marks attention dependent, the GPU form waits
// (attn_block.griddep_wait) right before its first read of a prologue
// kernel's output, and attn-block-to-gpu lowers that to griddepcontrol.wait.
// sm_80 has no griddepcontrol: no wait, no dependent launch.
//
// RUN: attn-opt %s --split-input-file --attn-attention-to-gpu="lowering=block chip=sm_90" | FileCheck %s --check-prefix=FORM
// RUN: attn-opt %s --split-input-file --attn-attention-to-gpu="lowering=block chip=sm_90a" --attn-block-to-gpu | FileCheck %s --check-prefix=LOWER
// RUN: attn-opt %s --split-input-file --attn-attention-to-gpu="lowering=block chip=sm_80" | FileCheck %s --check-prefix=SM80

// FoX: Q and the first K/V tile are copied while the gate kernel may still
// run; the wait comes before G' is read at the query rows.
// FORM-LABEL: func.func @fox(
// FORM: #attn_launch.kernel<name = @fox_gpu::@attention, {{.*}}, dependent = true>
// FORM: attn.plan = {{{.*}}dependent_launch = 1 : i64
// FORM: func.func private @attention(
// FORM-NOT: attn_block.griddep_wait
// FORM: attn_block.async_copy %arg0
// FORM: attn_block.async_copy %arg1
// FORM: attn_block.async_copy %arg2
// FORM-NOT: attn_block.load
// FORM: attn_block.griddep_wait
// FORM-NEXT: attn_block.load %arg3
// FORM-NOT: attn_block.griddep_wait
// FORM: return
// LOWER-LABEL: gpu.module @fox_gpu
// LOWER: gpu.func @gate(
// LOWER-NEXT: nvvm.griddepcontrol launch_dependents
// LOWER: gpu.func @attention(
// LOWER-NOT: nvvm.griddepcontrol
// LOWER: nvgpu.device_async_copy
// LOWER: nvvm.griddepcontrol wait
// LOWER-NOT: nvvm.griddepcontrol
// LOWER: gpu.return
// SM80-LABEL: func.func @fox(
// SM80-NOT: dependent = true
// SM80-NOT: griddep
func.func @fox(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %g: tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v gate(%g) : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// RoPE: the rope kernels rotate q and k, so the wait precedes every copy.
// FORM-LABEL: func.func @rope(
// FORM: #attn_launch.kernel<name = @rope_gpu::@attention, {{.*}}, dependent = true>
// FORM: func.func private @attention(
// FORM-NOT: attn_block.async_copy
// FORM: attn_block.griddep_wait
// FORM-NEXT: attn_block.async_copy %arg0
// FORM-NOT: attn_block.griddep_wait
// FORM: return
// SM80-LABEL: func.func @rope(
// SM80-NOT: griddep
func.func @rope(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v rope(1.0e+04) : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Plain attention runs alone: nothing to wait for.
// FORM-LABEL: func.func @plain(
// FORM-NOT: dependent = true
// FORM-NOT: griddep_wait
// FORM: return
func.func @plain(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
