// A training pair's launch plans (attn-grad, then the GPU form): each result
// of an entry is an output view, `output i` the i-th. The forward writes
// its output and the per-row LSE; the backward's kernels write dq, dk, dv
// and FoX's dg (RoPE's dq and dk through f32 scratch, inversely rotated
// into outputs 0 and 1).
// RUN: attn-opt %s --attn-grad --attn-to-block="target=sm_90" --attn-block-launch-plan="chip=sm_90" | FileCheck %s
// The kernels lower to PTX with mma.sync (sm_80) and, on sm_90a, with
// wgmma: the dq and dkdv walks' dots among them.
// RUN: attn-opt %s --attn-grad --attn-to-gpu="chip=sm_80 format=isa" --attn-dump-ptx=%t80.ptx -o /dev/null
// RUN: FileCheck %s --check-prefixes=PTX,MMA < %t80.ptx
// RUN: attn-opt %s --attn-grad --attn-to-gpu="chip=sm_90a format=isa" --attn-dump-ptx=%t90a.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t90a.ptx
// RUN: FileCheck %s --check-prefix=DKDV < %t90a.ptx
// RUN: FileCheck %s --check-prefix=DQ < %t90a.ptx

// CHECK-LABEL: func.func @f_fwd(
// CHECK-SAME: -> (tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>)
// CHECK-SAME: name = @f_fwd_gpu::@f_fwd_attention_kernel
// CHECK-SAME: #attn_launch.arg<output>
// CHECK-SAME: #attn_launch.arg<output 1>
// CHECK-LABEL: func.func @f_grad(
// CHECK-SAME: name = @f_grad_gpu::@f_grad_grad_delta
// CHECK-SAME: name = @f_grad_gpu::@f_grad_grad_dq
// CHECK-SAME: name = @f_grad_gpu::@f_grad_grad_dkdv
// CHECK-SAME: #attn_launch.arg<output 2>
// CHECK-SAME: name = @f_grad_gpu::@f_grad_grad_dg
// CHECK-SAME: #attn_launch.arg<output 3>
// CHECK-SAME: name = @f_grad_gpu::@f_grad_rope_q_inverse
// CHECK-SAME: #attn_launch.arg<output>
// CHECK-SAME: name = @f_grad_gpu::@f_grad_rope_k_inverse
// CHECK-SAME: #attn_launch.arg<output 1>

// PTX-DAG: .entry f_grad_grad_delta(
// PTX-DAG: .entry f_grad_grad_dq(
// PTX-DAG: .entry f_grad_grad_dkdv(
// PTX-DAG: .entry f_grad_grad_dg(
// MMA-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// DKDV: .entry f_grad_grad_dkdv(
// DKDV-NOT: .entry
// DKDV: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// DQ: .entry f_grad_grad_dq(
// DQ-NOT: .entry
// DQ: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
func.func @f(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %g: tensor<?x4x?xf32>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v rope(10000.0) gate(%g) mask causal
      : (tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}
