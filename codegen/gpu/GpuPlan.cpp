//===- GpuPlan.cpp - the launch plan as an attribute ----------------------===//
//
// GpuPlan (attn/Codegen/GpuPlan.h) <-> the dictionary attribute that
// attn-attention-to-gpu stores on its gpu.module (`attn.plan`) and the
// runtime reads back.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/GpuPlan.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

DictionaryAttr GpuPlan::toAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  SmallVector<NamedAttribute> a;
  auto i = [&](StringRef n, int64_t v) {
    a.push_back(b.getNamedAttr(n, b.getI64IntegerAttr(v)));
  };
  auto f = [&](StringRef n, double v) {
    a.push_back(b.getNamedAttr(n, b.getF64FloatAttr(v)));
  };
  i("wgmma", wgmma);
  i("overlap", overlap);
  i("warps", warps);
  i("m_tiles", mTiles);
  i("block_m", blockM());
  i("block_n", blockN);
  i("stages", stages);
  i("threads", threads());
  i("smem_bytes", smemBytes());
  i("head_dim", headDim);
  i("value_dim", valueDim);
  i("f16", half);
  i("rope", rope);
  i("rope_dim", ropeDim);
  i("rope_interleaved", ropeInterleaved);
  f("rope_theta", ropeTheta);
  i("rope_offset", ropeOffset);
  i("has_rope_q_offset", ropeQOffset);
  i("rope_q_offset", ropeQOffsetValue);
  i("gate", gate);
  f("gate_scale", gateScale);
  i("mask", mask);
  i("window", window);
  f("scale", scale);
  i("dependent_launch", dependentLaunch);
  i("block_program", blockProgram);
  return b.getDictionaryAttr(a);
}

FailureOr<GpuPlan> GpuPlan::fromAttr(DictionaryAttr attr) {
  if (!attr)
    return failure();
  GpuPlan p;
  bool ok = true;
  auto i = [&](StringRef n) -> int64_t {
    auto v = dyn_cast_or_null<IntegerAttr>(attr.get(n));
    ok &= static_cast<bool>(v);
    return v ? v.getInt() : 0;
  };
  auto f = [&](StringRef n) -> double {
    auto v = dyn_cast_or_null<FloatAttr>(attr.get(n));
    ok &= static_cast<bool>(v);
    return v ? v.getValueAsDouble() : 0;
  };
  p.wgmma = i("wgmma");
  p.overlap = i("overlap");
  p.warps = i("warps");
  p.mTiles = i("m_tiles");
  p.blockN = i("block_n");
  p.stages = i("stages");
  p.headDim = i("head_dim");
  p.valueDim = i("value_dim");
  p.half = i("f16");
  p.rope = i("rope");
  p.ropeDim = i("rope_dim");
  p.ropeInterleaved = i("rope_interleaved");
  p.ropeTheta = f("rope_theta");
  p.ropeOffset = i("rope_offset");
  p.ropeQOffset = i("has_rope_q_offset");
  p.ropeQOffsetValue = i("rope_q_offset");
  p.gate = i("gate");
  p.gateScale = f("gate_scale");
  p.mask = i("mask");
  p.window = i("window");
  p.scale = f("scale");
  p.dependentLaunch = i("dependent_launch");
  p.blockProgram = i("block_program");
  if (!ok)
    return failure();
  return p;
}
