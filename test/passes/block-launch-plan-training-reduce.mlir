// The flash backward with dQ by reducing stores (grad-dq=reduce) in PTX:
// no dq walk; the dkdv walk stores dS^T into shared memory and reads it back
// as the transposed A of dQ = dS K (sm_90a: wgmma with the transpose bit for
// A; sm_80: ldmatrix.trans) and adds each tile into dQ's f32 sums:
// from sm_90 on the tile staged in shared memory and added by one bulk
// reduction per row (waited for before the buffer is written again and
// before the program ends), on sm_80 by atomics; grad_dq_cast writes the
// sums in q's type. By default (grad-dq=walk) the dq walk is there and
// nothing adds.
// RUN: attn-opt %s --attn-grad --attn-to-gpu="chip=sm_90a format=isa grad-dq=reduce" --attn-dump-ptx=%t90a.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=WG < %t90a.ptx
// RUN: attn-opt %s --attn-grad --attn-to-gpu="chip=sm_90 format=isa grad-dq=reduce" --attn-dump-ptx=%t90.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=SM90 < %t90.ptx
// RUN: attn-opt %s --attn-grad --attn-to-gpu="chip=sm_80 format=isa grad-dq=reduce" --attn-dump-ptx=%t80.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=MMA < %t80.ptx
// RUN: attn-opt %s --attn-grad --attn-to-gpu="chip=sm_90a format=isa" --attn-dump-ptx=%twalk.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=WALK < %twalk.ptx
// RUN: not attn-opt %s --attn-grad --attn-to-gpu="chip=sm_90a grad-dq=twice" 2>&1 | FileCheck %s --check-prefix=BAD

// WG-NOT: .entry f_grad_grad_dq(
// WG: .entry f_grad_grad_dkdv(
// WG-NOT: .entry
// WG-NOT: atom.global.add.f32
// WG: cp.async.bulk.wait_group.read{{[[:space:]]+}}0;
// WG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1, 1;
// WG: fence.proxy.async.shared::cta
// WG: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// WG: cp.async.bulk.wait_group{{[[:space:]]+}}0;
// WG: .entry f_grad_grad_dq_cast(
// SM90: .version 8.0
// SM90: .entry f_grad_grad_dkdv(
// SM90-NOT: .entry
// SM90: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SM90-NOT: atom.global.add.f32
// SM90: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32
// SM90: .entry f_grad_grad_dq_cast(
// MMA: .entry f_grad_grad_dkdv(
// MMA-NOT: .entry
// MMA: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// MMA: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MMA: atom.global.add.f32
// MMA: .entry f_grad_grad_dq_cast(
// WALK: .entry f_grad_grad_dq(
// WALK-NOT: atom.global.add.f32
// WALK-NOT: .entry f_grad_grad_dq_cast(
// BAD: option grad-dq must be walk (a second walk, deterministic) or reduce (reducing stores), got 'twice'
func.func @f(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v mask causal
      : (tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}
