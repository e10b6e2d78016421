//===- AttentionKernels.cpp - attn.attention as tensor-core GPU kernels ---===//
//
// Builds the kernels of a GpuPlan (GpuPlan.h) in the gpu/nvgpu/nvvm
// dialects. The attention kernel is FlashAttention-2 shaped:
//
//  * a block of `warps` warps owns blockM = 16*mTiles*warps query rows of
//    one (batch, query head); warp w owns mTiles m16 row tiles, which share
//    every K/V fragment the warp loads; every row statistic (max, sum)
//    lives in the 4 lanes that share a row of the mma accumulator and
//    reduces with two xor shuffles;
//  * Q, then K/V tiles, go global -> shared with 16-byte cp.async
//    (nvgpu.device_async_copy, zero fill past the end), `stages` K/V tiles
//    in flight; shared rows are XOR-swizzled in 16-byte chunks so the
//    ldmatrix row reads of 8 rows hit 8 different bank groups;
//  * S = Q K^T and O += P V are m16n8k16 mma.sync (bf16/f16 in, f32
//    accumulate) fed by ldmatrix (.trans for V); P never leaves registers:
//    the accumulator layout of S is the A-operand layout of P V;
//  * online softmax in base 2 (scale * log2(e) folded into one multiply),
//    FoX bias G_i - G_j from the gate kernel's prefix sums, masks applied
//    only on tiles that cross the causal/window/sequence edge, causal tiles
//    past the block's last query never loaded.
//
// On sm_90a (plan.wgmma) the products are warpgroup MMA instead (Wgmma.h):
// warpgroups of 4 warps own 64 rows, Q/K/V tiles are stored in wgmma's
// 128-byte swizzled panels and read by descriptors, P goes from registers;
// optionally (plan.overlap) the next S and this P V are in flight together.
// With RoPE (R % 16 == 0) the kernel rotates its Q tile in shared memory.
//
// Every loop over fragments is unrolled here (C++ loops): fragment arrays
// must stay in registers, which dynamic indexing would defeat.
//
//===----------------------------------------------------------------------===//

#include "Wgmma.h"
#include "attn/Codegen/GpuKernels.h"
#include "attn/Codegen/GpuPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <cassert>
#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {

using P = arith::CmpIPredicate;

/// Small arithmetic helpers over `index` values (64-bit on the device).
struct KB {
  OpBuilder &b;
  Location loc;
  Value ci(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cf(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value ci32(int32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value xori(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
  Value mins(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxs(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmp(P p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value sel(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fmax(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value exp2(Value x) { return math::Exp2Op::create(b, loc, x); }
  /// blockIdx.x * blockSize + threadIdx.x.
  Value globalThreadId(int64_t blockSize) {
    return add(
        mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), ci(blockSize)),
        gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  }
  Value shuffleXor(Value x, int32_t offset) {
    return gpu::ShuffleOp::create(b, loc, x, offset, 32, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }
};

constexpr int64_t kPrologueThreads = 256;

/// Element offset of (row, col) in a shared tile of `rows` x `width`
/// elements: 16-byte chunks XOR-swizzled by row % 8 (width is a multiple of
/// 64). The mma.sync kernel stores rows whole; the wgmma kernel stores
/// `width / 64` panels of [rows][64], which is wgmma's 128-byte swizzle
/// (chunk ^ (address / 128) % 8 on 1024-byte aligned panels).
Value swizzled(KB &k, Value row, Value col, int64_t rows, int64_t width,
               bool panels) {
  if (panels) {
    Value panel = k.div(col, k.ci(64));
    Value in = k.rem(col, k.ci(64));
    Value phys = k.xori(k.div(in, k.ci(8)), k.rem(row, k.ci(8)));
    return k.add(k.add(k.mul(panel, k.ci(rows * 64)), k.mul(row, k.ci(64))),
                 k.add(k.mul(phys, k.ci(8)), k.rem(in, k.ci(8))));
  }
  Value chunk = k.div(col, k.ci(8));
  Value phys = k.xori(chunk, k.rem(row, k.ci(8)));
  return k.add(k.add(k.mul(row, k.ci(width)), k.mul(phys, k.ci(8))),
               k.rem(col, k.ci(8)));
}

/// Issues the cp.async copies of rows [row0, row0 + rows) of a row-major
/// [*, width] matrix starting at element `base` of `src` into the shared
/// tile at element `dst0` of `smem`; rows at or past `limit` read nothing
/// and zero-fill. Returns the copies' tokens.
///
/// A thread's chunks sit a constant number of rows apart (threads is a
/// multiple of width / 8): the source offsets are one per-thread base plus
/// a constant, as are the destinations when that distance is a multiple of
/// 8 rows (the swizzle phase repeats), and a row's bound check is a 32-bit
/// compare of a constant with the rows left. Rows past `limit` keep their
/// (unread) address: cp.async reads nothing with a source size of 0.
SmallVector<Value> copyTile(KB &k, Value tid, int64_t threads, Value src,
                            Value base, Value row0, Value limit, Value smem,
                            Value dst0, int64_t rows, int64_t width,
                            bool panels) {
  int64_t perRow = width / 8, total = rows * perRow;
  int64_t rowsPerIt = threads / perRow;
  assert(threads % perRow == 0 && "a thread's chunks must share a column");
  Value r0 = k.div(tid, k.ci(perRow));
  Value cc = k.rem(tid, k.ci(perRow));
  Value srcBase = k.add(
      base, k.add(k.mul(k.add(row0, r0), k.ci(width)), k.mul(cc, k.ci(8))));
  Value dstBase =
      k.add(dst0, swizzled(k, r0, k.mul(cc, k.ci(8)), rows, width, panels));
  // Rows left for this thread's first chunk, clamped into i32.
  Value left =
      k.maxs(k.mins(k.sub(k.sub(limit, row0), r0), k.ci(rows)), k.ci(0));
  Value leftI32 =
      arith::IndexCastOp::create(k.b, k.loc, k.b.getI32Type(), left);
  SmallVector<Value> tokens;
  for (int64_t it = 0; it < total / threads; ++it) {
    int64_t dr = it * rowsPerIt;
    Value valid = k.cmp(P::slt, k.ci32(dr), leftI32);
    Value srcIdx = k.add(srcBase, k.ci(dr * width));
    // The swizzle depends on row % 8 only.
    Value dstIdx =
        rowsPerIt % 8 == 0
            ? k.add(dstBase, k.ci(panels ? dr * 64 : dr * width))
            : k.add(dst0, swizzled(k, k.add(r0, k.ci(dr)), k.mul(cc, k.ci(8)),
                                   rows, width, panels));
    Value n = k.sel(valid, k.ci(8), k.ci(0));
    auto copy = nvgpu::DeviceAsyncCopyOp::create(
        k.b, k.loc, nvgpu::DeviceAsyncTokenType::get(k.b.getContext()), smem,
        ValueRange{dstIdx}, src, ValueRange{srcIdx}, k.b.getIndexAttr(8), n,
        k.b.getUnitAttr());
    tokens.push_back(copy.getAsyncToken());
  }
  return tokens;
}

/// RoPE on 8 pairs: `lo` and `hi` are the two 8-element f32 vectors that
/// hold them (half style: the x_a and the x_b halves; interleaved: elements
/// 2 p0 .. 2 p0 + 15, pairs (even, odd)), `c` / `sn` their cos / sin.
/// Returns the rotated vectors in the same arrangement.
std::pair<Value, Value> rotate8(KB &k, bool interleaved, Value lo, Value hi,
                                Value c, Value sn) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  Value xa = lo, xb = hi;
  if (interleaved) {
    xa = vector::ShuffleOp::create(
        b, loc, lo, hi, ArrayRef<int64_t>{0, 2, 4, 6, 8, 10, 12, 14});
    xb = vector::ShuffleOp::create(
        b, loc, lo, hi, ArrayRef<int64_t>{1, 3, 5, 7, 9, 11, 13, 15});
  }
  Value ya = k.fsub(k.fmul(xa, c), k.fmul(xb, sn));
  Value yb = k.fadd(k.fmul(xa, sn), k.fmul(xb, c));
  if (!interleaved)
    return {ya, yb};
  return {vector::ShuffleOp::create(
              b, loc, ya, yb, ArrayRef<int64_t>{0, 8, 1, 9, 2, 10, 3, 11}),
          vector::ShuffleOp::create(
              b, loc, ya, yb, ArrayRef<int64_t>{4, 12, 5, 13, 6, 14, 7, 15})};
}

/// Where (batch, query head) row `row` of the gate kernel's output starts,
/// and where its G starts (floats; GpuPlan::gateRowFloats).
std::pair<Value, Value> gateRow(KB &k, const GpuPlan &plan, Value row,
                                Value S) {
  if (!plan.gateInAcc()) {
    Value start = k.mul(row, S);
    return {start, start};
  }
  // GpuPlan::gateRowFloats: uTiles(S) records, then G (S padded to 4).
  const int64_t BN = plan.blockN;
  Value records = k.mul(k.add(k.div(k.add(S, k.ci(BN - 1)), k.ci(BN)), k.ci(2)),
                        k.ci(plan.uTileFloats()));
  Value padded = k.mul(k.div(k.add(S, k.ci(3)), k.ci(4)), k.ci(4));
  Value start = k.mul(row, k.add(records, padded));
  return {start, k.add(start, records)};
}

/// A new kernel `name(args)` at the end of `module`, with `workgroup`
/// shared-memory attributions.
gpu::GPUFuncOp newKernel(OpBuilder &mb, gpu::GPUModuleOp module, StringRef name,
                         ArrayRef<Type> args, ArrayRef<Type> workgroup = {}) {
  OpBuilder::InsertionGuard guard(mb);
  mb.setInsertionPointToEnd(module.getBody());
  auto fn = gpu::GPUFuncOp::create(mb, module.getLoc(), name,
                                   FunctionType::get(mb.getContext(), args, {}),
                                   TypeRange(workgroup));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), mb.getUnitAttr());
  return fn;
}

/// The attention kernel (see the file comment).
struct AttentionBuilder {
  const GpuPlan &plan;
  KB &k;
  Type elem;
  Value smem; // 1-D view of the dynamic shared memory, element type `elem`

  /// ldmatrix x4 at element `idx` of the shared view: four 8x8 fragments,
  /// each a pair of 16-bit values per lane (packed as mma operands).
  std::array<Value, 4> ldmatrix(Value idx, bool trans) {
    auto vt = VectorType::get({4, 2}, elem);
    Value m = nvgpu::LdMatrixOp::create(k.b, k.loc, vt, smem, ValueRange{idx},
                                        trans, 4);
    std::array<Value, 4> regs;
    for (int i = 0; i < 4; ++i)
      regs[i] = operand(vector::ExtractOp::create(k.b, k.loc, m, i));
    return regs;
  }

  /// A pair of 16-bit values as nvvm.mma.sync wants it: vector<2xf16>, or
  /// bf16 pairs bit-cast to i32.
  Value operand(Value pair) {
    if (plan.half)
      return pair;
    auto i32v = VectorType::get({1}, k.b.getI32Type());
    Value cast = vector::BitCastOp::create(k.b, k.loc, i32v, pair);
    return vector::ExtractOp::create(k.b, k.loc, cast, 0);
  }

  /// Two f32 values rounded to a vector<2x16-bit>.
  Value roundPair(Value x, Value y) {
    auto f2 = VectorType::get({2}, k.b.getF32Type());
    Value v = vector::FromElementsOp::create(k.b, k.loc, f2, ValueRange{x, y});
    return arith::TruncFOp::create(k.b, k.loc, VectorType::get({2}, elem), v);
  }

  /// Two f32 values rounded to 16 bits and packed in an i32 (wgmma's
  /// register A operand).
  Value packI32(Value x, Value y) {
    auto i32v = VectorType::get({1}, k.b.getI32Type());
    Value cast = vector::BitCastOp::create(k.b, k.loc, i32v, roundPair(x, y));
    return vector::ExtractOp::create(k.b, k.loc, cast, 0);
  }

  /// Two f32 values rounded to an mma operand pair.
  Value pack(Value x, Value y) { return operand(roundPair(x, y)); }

  /// D = A B + C for one m16n8k16 tile; c and the result are 4 f32 values.
  std::array<Value, 4> mma(ArrayRef<Value> a, ArrayRef<Value> bOp,
                           ArrayRef<Value> c) {
    Type f32 = k.b.getF32Type();
    auto resTy = LLVM::LLVMStructType::getLiteral(k.b.getContext(),
                                                  {f32, f32, f32, f32});
    NVVM::MMATypes t = plan.half ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
    auto op = NVVM::MmaOp::create(
        k.b, k.loc, resTy, a, bOp, c, {16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{t, t},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    std::array<Value, 4> d;
    for (int i = 0; i < 4; ++i)
      d[i] = LLVM::ExtractValueOp::create(k.b, k.loc, op, ArrayRef<int64_t>{i});
    return d;
  }
};

void buildAttentionKernel(OpBuilder &mb, gpu::GPUModuleOp module,
                          const GpuPlan &plan) {
  MLIRContext *ctx = mb.getContext();
  Location loc = module.getLoc();
  Type elem = plan.half ? Type(mb.getF16Type()) : Type(mb.getBF16Type());
  Type f32 = mb.getF32Type();
  Type idx = mb.getIndexType();
  auto buf = MemRefType::get({ShapedType::kDynamic}, elem);
  auto fbuf = MemRefType::get({ShapedType::kDynamic}, f32);
  SmallVector<Type> args = {buf, buf, buf, buf, fbuf, idx, idx, idx, idx};
  if (plan.ropeQInKernel())
    args.append({fbuf, fbuf, idx});
  auto fn = newKernel(mb, module, "attention", args);
  fn.setKnownBlockSizeAttr(
      mb.getDenseI32ArrayAttr({static_cast<int32_t>(plan.threads()), 1, 1}));
  if (int64_t blocks = plan.minBlocksPerSm())
    fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                mb.getI32IntegerAttr(static_cast<int32_t>(blocks)));
  Block &entry = fn.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  KB k{b, loc};
  Value q = entry.getArgument(0), kk = entry.getArgument(1),
        v = entry.getArgument(2), o = entry.getArgument(3),
        gsum = entry.getArgument(4), hq = entry.getArgument(5),
        hk = entry.getArgument(6), T = entry.getArgument(7),
        S = entry.getArgument(8);
  Value cosT, sinT, qPos0;
  if (plan.ropeQInKernel()) {
    cosT = entry.getArgument(9);
    sinT = entry.getArgument(10);
    qPos0 = entry.getArgument(11);
  }

  const int64_t D = plan.headDim, Dv = plan.valueDim, BM = plan.blockM(),
                BN = plan.blockN, threads = plan.threads();
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = k.rem(tid, k.ci(32)), warp = k.div(tid, k.ci(32));
  // Heaviest query tiles (most keys under a causal mask) first: the last
  // wave is then made of short blocks.
  Value mBlk =
      k.sub(k.sub(gpu::GridDimOp::create(b, loc, gpu::Dimension::x), k.ci(1)),
            gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value bh = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value batch = k.div(bh, hq), head = k.rem(bh, hq);
  Value kvHead = k.add(k.mul(batch, hk), k.div(head, k.div(hq, hk)));
  Value m0 = k.mul(mBlk, k.ci(BM));
  Value delta = k.sub(S, T); // query i sits at key position i + S - T

  // Shared memory: Q tile, then `stages` K tiles, then `stages` V tiles.
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, wg));
  // wgmma reads swizzled tiles by shared address: the tiles start at the
  // first 1024-byte boundary of the dynamic shared memory (the plan asks
  // for that much slack), `smemAddr` is its shared address.
  const bool wgMode = plan.wgmma;
  // wgmma with the next step's S = Q K^T and this step's P V in flight
  // together (FlashAttention-3's intra-warpgroup overlap), else each
  // product is waited for where it is issued.
  const bool overlap = wgMode && plan.overlap;
  Value shift = k.ci(0), smemAddr;
  if (wgMode) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
    const int64_t a = GpuPlan::kWgmmaAlign;
    shift = k.rem(k.sub(k.ci(a), k.rem(base, k.ci(a))), k.ci(a));
    smemAddr = k.add(base, shift);
  }
  int64_t elems = (plan.smemBytes() - (wgMode ? GpuPlan::kWgmmaAlign : 0)) / 2;
  Value smem = memref::ViewOp::create(
      b, loc, MemRefType::get({elems}, elem, MemRefLayoutAttrInterface{}, wg),
      raw, shift, ValueRange{});
  const int64_t sK0 = BM * D, sV0 = sK0 + plan.stages * BN * D;
  // FoX: the slots of key tile records (GpuPlan::gateInAcc) or the G_j
  // tiles (f32) after the K/V tiles.
  const bool gateInAcc = plan.gateInAcc(), gateInMma = plan.gateInMma();
  // gateInMma's A tile comes first (aOff), the record slots after it (gOff;
  // GpuPlan::gateSmemBytes).
  const int64_t aOff = 2 * (sV0 + plan.stages * BN * Dv);
  const int64_t gOff = aOff + plan.biasATileBytes();
  Value gTiles;
  if (plan.gate)
    gTiles = memref::ViewOp::create(
        b, loc,
        MemRefType::get(
            {plan.gateTiles() * (gateInAcc ? plan.uTileFloats() : BN)}, f32,
            MemRefLayoutAttrInterface{}, wg),
        raw, k.add(shift, k.ci(gOff)), ValueRange{});

  AttentionBuilder ab{plan, k, elem, smem};

  // cp.async groups.
  auto commit = [&](ArrayRef<Value> tokens) {
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
  };
  auto [xBase, gBase] = gateRow(k, plan, bh, S);
  Value qBase = k.mul(k.mul(bh, T), k.ci(D));
  Value kBase = k.mul(k.mul(kvHead, S), k.ci(D));
  Value vBase = k.mul(k.mul(kvHead, S), k.ci(Dv));
  Value oBase = k.mul(k.mul(bh, T), k.ci(Dv));

  // Keys this block needs: [nStart, nEnd), nStart on a tile boundary.
  Value pMin = k.add(m0, delta);
  Value pMax = k.add(pMin, k.ci(BM - 1));
  Value nEnd = S, nStart = k.ci(0);
  if (plan.mask != 1)
    nEnd = k.maxs(k.mins(S, k.add(pMax, k.ci(1))), k.ci(0));
  if (plan.mask == 2) {
    Value first = k.maxs(k.sub(pMin, k.ci(plan.window - 1)), k.ci(0));
    nStart = k.mul(k.div(first, k.ci(BN)), k.ci(BN));
  }
  Value nTiles =
      k.div(k.add(k.sub(k.maxs(nEnd, nStart), nStart), k.ci(BN - 1)), k.ci(BN));
  Value tile0 = k.div(nStart, k.ci(BN)); // its key tile record

  // GpuPlan::dependentLaunch: the rope and gate kernels may still run.
  // The prologue and the copies of inputs (q and k unless the rope kernel
  // rotated them, v) overlap them; the first read of their results
  // (rotated q or k, the cos/sin tables, G and the records) comes after
  // the wait, emitted once, in the straight-line prologue.
  bool waited = !plan.attentionOverlapsPrologue();
  auto waitOnce = [&]() {
    if (!waited)
      NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
    waited = true;
  };

  // FoX (gateInAcc): the record of key tile `tile` (index into the row's
  // records) into slot `slot`, 16 bytes per thread (the copies join the
  // current group without tokens, as the G copies below). Rows end with
  // two spare records: no bounds check.
  const int64_t uTF = plan.uTileFloats(), uChunks = uTF / 4;
  auto uCopy = [&](Value tile, Value slot) {
    Value src =
        k.add(xBase, k.add(k.mul(tile, k.ci(uTF)), k.mul(tid, k.ci(4))));
    Value dst = k.add(k.mul(slot, k.ci(uTF)), k.mul(tid, k.ci(4)));
    OpBuilder::InsertionGuard g(b);
    for (int64_t c0 = 0; c0 < uChunks; c0 += threads) {
      Value c = k.add(tid, k.ci(c0));
      if (c0 + threads > uChunks) // more threads than chunks
        b.setInsertionPointToStart(
            scf::IfOp::create(b, loc, TypeRange{},
                              k.cmp(P::slt, c, k.ci(uChunks)), false)
                .thenBlock());
      nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), gTiles,
          ValueRange{k.add(dst, k.ci(4 * c0))}, gsum,
          ValueRange{k.add(src, k.ci(4 * c0))}, b.getIndexAttr(4), Value(),
          b.getUnitAttr());
    }
  };
  // One cp.async group with the K tile (and its G tile, or the record of
  // key tile `uTile` into `uSlot`) and/or the V tile of keys
  // [n0, n0 + BN) into `stage`.
  auto tileCopy = [&](Value n0, Value stage, bool withK, bool withV,
                      Value uTile = Value(), Value uSlot = Value()) {
    SmallVector<Value> t;
    if (withK && plan.rope)
      waitOnce(); // k rotated by the rope kernel
    if (withK)
      t = copyTile(k, tid, threads, kk, kBase, n0, S, smem,
                   k.add(k.ci(sK0), k.mul(stage, k.ci(BN * D))), BN, D, wgMode);
    if (withV) {
      SmallVector<Value> t2 = copyTile(
          k, tid, threads, v, vBase, n0, S, smem,
          k.add(k.ci(sV0), k.mul(stage, k.ci(BN * Dv))), BN, Dv, wgMode);
      t.append(t2.begin(), t2.end());
    }
    if (withK && plan.gate)
      waitOnce();
    if (withK && gateInMma) {
      // The record of this K tile into its stage (GpuPlan::gateInMma).
      uCopy(k.div(n0, k.ci(BN)), stage);
    } else if (withK && gateInAcc) {
      if (uSlot)
        uCopy(uTile, uSlot);
    } else if (withK && plan.gate) {
      // 4-byte copies: rows of G need not be 16-byte aligned.
      Value j = k.add(n0, tid);
      Value valid = k.andi(k.cmp(P::slt, tid, k.ci(BN)), k.cmp(P::slt, j, S));
      Value src = k.add(gBase, k.sel(valid, j, k.ci(0)));
      Value dst = k.add(k.mul(stage, k.ci(BN)), k.rem(tid, k.ci(BN)));
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{},
                                    k.cmp(P::slt, tid, k.ci(BN)), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), gTiles,
          ValueRange{dst}, gsum, ValueRange{src}, b.getIndexAttr(1),
          k.sel(valid, k.ci(1), k.ci(0)), UnitAttr());
    }
    return commit(t);
  };
  // RoPE on the Q tile in shared memory, once Q has landed: each thread
  // rotates 8-pair chunks (16-byte shared accesses; cos/sin rows of the
  // table, rows past T clamped onto the last query). Barriers on both
  // sides: chunks are rotated by other threads than copied or read them.
  auto rotateQ = [&]() {
    const int64_t R = plan.ropeDim, per = R / 16, total = BM * per;
    auto v8 = VectorType::get({8}, elem);
    auto f8 = VectorType::get({8}, f32);
    gpu::BarrierOp::create(b, loc);
    for (int64_t it = 0; it < (total + threads - 1) / threads; ++it) {
      Value c = k.add(tid, k.ci(it * threads));
      auto guard = scf::IfOp::create(b, loc, TypeRange{},
                                     k.cmp(P::slt, c, k.ci(total)), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(guard.thenBlock());
      Value r = k.div(c, k.ci(per)), p0 = k.mul(k.rem(c, k.ci(per)), k.ci(8));
      Value t = k.mins(k.add(m0, r), k.sub(T, k.ci(1)));
      Value at = k.add(k.mul(k.add(qPos0, t), k.ci(R / 2)), p0);
      auto gload = [&](Value buf) -> Value {
        return vector::LoadOp::create(b, loc, f8, buf, ValueRange{at}, false,
                                      llvm::Align(16));
      };
      Value cs = gload(cosT), sn = gload(sinT);
      Value ca = plan.ropeInterleaved ? k.mul(p0, k.ci(2)) : p0;
      Value cb =
          plan.ropeInterleaved ? k.add(ca, k.ci(8)) : k.add(p0, k.ci(R / 2));
      Value ia = swizzled(k, r, ca, BM, D, wgMode);
      Value ib = swizzled(k, r, cb, BM, D, wgMode);
      auto sload = [&](Value i) -> Value {
        Value v = vector::LoadOp::create(b, loc, v8, smem, ValueRange{i});
        return arith::ExtFOp::create(b, loc, f8, v);
      };
      Value lo = sload(ia), hi = sload(ib);
      auto [ya, yb] = rotate8(k, plan.ropeInterleaved, lo, hi, cs, sn);
      vector::StoreOp::create(b, loc, arith::TruncFOp::create(b, loc, v8, ya),
                              smem, ValueRange{ia});
      vector::StoreOp::create(b, loc, arith::TruncFOp::create(b, loc, v8, yb),
                              smem, ValueRange{ib});
    }
    if (wgMode)
      wgmma::fenceProxyAsync(b, loc);
    gpu::BarrierOp::create(b, loc);
  };

  // gateInMma: the A operand of S's bias step, 256 bytes before the record
  // slots: one 8 x 8 core matrix with ones (bf16 0x3F80) in columns 0-2,
  // read by every 8-row group (SBO 0), then one of zeros for columns 8-15
  // (LBO 128). Written here; the barrier before the key walk publishes it.
  if (gateInMma) {
    auto i4 = VectorType::get({4}, b.getI32Type());
    Value aTile = memref::ViewOp::create(
        b, loc,
        MemRefType::get({64}, b.getI32Type(), MemRefLayoutAttrInterface{}, wg),
        raw, k.add(shift, k.ci(aOff)), ValueRange{});
    auto cst = [&](ArrayRef<int32_t> x) -> Value {
      return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(i4, x));
    };
    Value row = k.sel(k.cmp(P::slt, tid, k.ci(8)),
                      cst({0x3F803F80, 0x3F80, 0, 0}), cst({0, 0, 0, 0}));
    auto guard = scf::IfOp::create(b, loc, TypeRange{},
                                   k.cmp(P::slt, tid, k.ci(16)), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(guard.thenBlock());
    vector::StoreOp::create(b, loc, row, aTile,
                            ValueRange{k.mul(tid, k.ci(4))});
  }

  const bool qFromRope = plan.rope && !plan.ropeQInKernel();
  if (qFromRope)
    waitOnce();
  // Q (with the first two FoX records of the mma.sync form: a step reads
  // its record before its own wait) and the first K/V tile in flight.
  {
    SmallVector<Value> qTok = copyTile(k, tid, threads, q, qBase, m0, T, smem,
                                       k.ci(0), BM, D, wgMode);
    if (gateInAcc && !gateInMma) {
      waitOnce();
      uCopy(tile0, k.ci(0));
      uCopy(k.add(tile0, k.ci(1)), k.ci(1));
    }
    commit(qTok);
  }
  Value tok;
  if (overlap) {
    // K and V of a tile travel in separate groups: V_j is read one step
    // later than K_j (see the key loop). Stage 1 of V starts as zeros: the
    // first step multiplies it by P = 0 instead of branching.
    tileCopy(nStart, k.ci(0), true, false);
    tok = tileCopy(nStart, k.ci(0), false, true);
    Value zeros = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(VectorType::get({8}, elem),
                               b.getZeroAttr(elem)));
    for (int64_t it = 0; it < BN * Dv / 8 / threads; ++it)
      vector::StoreOp::create(
          b, loc, zeros, smem,
          ValueRange{k.add(k.ci(sV0 + BN * Dv + it * threads * 8),
                           k.mul(tid, k.ci(8)))});
    if (plan.ropeQInKernel() || gateInAcc) {
      // Q is the oldest of three groups.
      nvgpu::DeviceAsyncWaitOp::create(b, loc, tok, b.getI32IntegerAttr(2));
      if (plan.ropeQInKernel()) {
        rotateQ();
      } else {
        wgmma::fenceProxyAsync(b, loc);
        gpu::BarrierOp::create(b, loc);
      }
    }
  } else {
    tok = tileCopy(nStart, k.ci(0), true, true);
    // Wait for Q (all groups but the newest).
    nvgpu::DeviceAsyncWaitOp::create(b, loc, tok, b.getI32IntegerAttr(1));
    if (plan.ropeQInKernel()) {
      rotateQ();
    } else {
      if (wgMode)
        wgmma::fenceProxyAsync(b, loc);
      gpu::BarrierOp::create(b, loc);
    }
  }

  // A no-op today (every plan with a prologue kernel waited before its
  // first K tile copy); keeps the loads of G below behind the wait whatever
  // the copies above come to do.
  waitOnce();

  // Warp w owns rows [w * 16 MR, (w + 1) * 16 MR): MR m16 tiles that share
  // every K and V fragment it loads. Q fragments stay in registers when they
  // fit (MR * D <= 128), else they are re-read from shared memory per tile.
  const int64_t MR = plan.mTiles;
  Value warpRow0 = k.mul(warp, k.ci(16 * MR));
  // wgmma: warpgroup g = warp / 4 owns Q rows [64 g, 64 g + 64) of every
  // 64-column panel of the Q tile.
  Value qAddr;
  if (wgMode)
    qAddr = k.add(smemAddr, k.mul(k.div(warp, k.ci(4)), k.ci(64 * 128)));
  // ldmatrix addresses, XOR form: every lane reads row r with r % 8 =
  // lane % 8 and 16-byte chunk c = 2 ks + h (h in {0, 1}), so its swizzled
  // chunk is 8 (ks / 4) + ((2 ks mod 8) ^ (h ^ lane % 8)). With the row
  // start a multiple of 64 elements, the address for step ks is one
  // lane-dependent base XOR a constant plus a constant, instead of a
  // separate lane-dependent address per (ks, tile) for LLVM to hoist.
  Value x8 = k.rem(lane, k.ci(8));
  auto laneBase = [&](Value row, Value h, int64_t width) {
    return k.add(k.mul(row, k.ci(width)), k.mul(k.xori(h, x8), k.ci(8)));
  };
  auto stepIdx = [&](Value base, int64_t ks) {
    return k.add(k.xori(base, k.ci(8 * ((2 * ks) % 8))), k.ci(64 * (ks / 4)));
  };
  Value qLane = laneBase(k.add(warpRow0, k.rem(lane, k.ci(16))),
                         k.div(lane, k.ci(16)), D);
  Value kLane = laneBase(k.add(x8, k.mul(k.div(lane, k.ci(16)), k.ci(8))),
                         k.rem(k.div(lane, k.ci(8)), k.ci(2)), D);
  Value vLane =
      laneBase(k.add(x8, k.mul(k.rem(k.div(lane, k.ci(8)), k.ci(2)), k.ci(8))),
               k.div(lane, k.ci(16)), Dv);
  auto loadQ = [&](int64_t mt, int64_t ks) {
    return ab.ldmatrix(k.add(stepIdx(qLane, ks), k.ci(mt * 16 * D)), false);
  };
  const bool qInRegs = !wgMode && MR * D <= 128;
  std::vector<std::vector<std::array<Value, 4>>> qf(MR);
  if (qInRegs)
    for (int64_t mt = 0; mt < MR; ++mt)
      for (int64_t ks = 0; ks < D / 16; ++ks)
        qf[mt].push_back(loadQ(mt, ks));

  // This lane's rows: accumulator rows lane/4 and lane/4 + 8 of each m16
  // tile, numbered rho = 2 mt + r.
  Value quad = k.div(lane, k.ci(4)), lq = k.rem(lane, k.ci(4));
  const int64_t nRows = 2 * MR;
  SmallVector<Value> rowPos(nRows); // key position of each row's query
  SmallVector<Value> rowIdx(nRows); // query index in [0, T)
  for (int64_t rho = 0; rho < nRows; ++rho) {
    rowIdx[rho] = k.add(k.add(m0, warpRow0),
                        k.add(quad, k.ci((rho / 2) * 16 + (rho % 2) * 8)));
    rowPos[rho] = k.add(rowIdx[rho], delta);
  }
  const double log2e = 1.4426950408889634;
  Value scaleLog2 = k.cf(plan.scale * log2e);
  // Without a bias the scale folds into the exponent's FMA; max and masks
  // work on raw scores (valid for a positive scale).
  const bool rawScores = (!plan.gate || gateInAcc) && plan.scale > 0;
  auto clampKey = [&](Value p) {
    return k.maxs(k.mins(p, k.sub(S, k.ci(1))), k.ci(0));
  };
  // FoX: the gate kernel stores -gamma log2(e) G. With gateInAcc a logit
  // is (s + u_j) scale log2(e) + G_j0 - G_i (S starts from u); else
  // fma(s, scale log2(e), -G_j) + G_i, one FMA per score. The row term
  // joins the row max and the exponent's offset once per row (and tile).
  SmallVector<Value> gq(nRows);
  if (plan.gate)
    for (int64_t rho = 0; rho < nRows; ++rho)
      gq[rho] = arith::NegFOp::create(
          b, loc,
          memref::LoadOp::create(
              b, loc, gsum, ValueRange{k.add(gBase, clampKey(rowPos[rho]))}));

  // Loop state: O accumulators (MR x Dv/8 tiles x 4), then row max and
  // partial row sums per row rho.
  const int64_t nO = Dv / 8, nS = BN / 8;
  auto oIdx = [&](int64_t mt, int64_t dn, int i) {
    return (mt * nO + dn) * 4 + i;
  };
  const int64_t mBase = MR * nO * 4, lBase = mBase + nRows;
  Value negInf = k.cf(-INFINITY), zero = k.cf(0.0);
  SmallVector<Value> init(mBase, zero);
  init.append(nRows, negInf);
  init.append(nRows, zero);
  // wgmma: P of the previous step (packed pairs), multiplied by its V tile
  // while this step's softmax runs.
  const int64_t pBase = init.size(), nP = overlap ? BN / 4 : 0;
  init.append(nP, k.ci32(0));
  auto fma = [&](Value a, Value x, Value c) {
    return math::FmaOp::create(b, loc, a, x, c).getResult();
  };
  // wgmma: issues O += P V for the V tile in `vStage` (m64nDvk16 per 16
  // keys: P from registers, V N-major in Dv/64 panels of BN x 128 bytes,
  // LBO = panel stride) and commits it. `regs` is O (nO * 4 values) then P
  // (BN / 4 packed pairs), both past a wgmma.fence; returns O, in flight,
  // then P, which must stay untouched until the same wait.
  auto pvIssue = [&](ArrayRef<Value> regs, Value vStage) {
    ArrayRef<Value> p = regs.drop_front(nO * 4);
    Value vTile = k.add(k.ci(sV0), k.mul(vStage, k.ci(BN * Dv)));
    Value vDesc = wgmma::descriptor(
        b, loc, k.add(smemAddr, k.mul(vTile, k.ci(2))), BN * 128, 1024);
    SmallVector<Value> acc(regs.take_front(nO * 4));
    for (int64_t t = 0; t < BN / 16; ++t)
      acc = wgmma::mmaAsync(b, loc, acc, Dv, plan.half, p.slice(4 * t, 4),
                            Value(), wgmma::advance(b, loc, vDesc, t * 2048),
                            true);
    wgmma::commit(b, loc);
    acc.append(p.begin(), p.end());
    return acc;
  };
  auto loop = scf::ForOp::create(b, loc, k.ci(0), nTiles, k.ci(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value it = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    Value n0 = k.add(nStart, k.mul(it, k.ci(BN)));
    Value stage = k.rem(it, k.ci(plan.stages));
    Value nextStage = k.rem(k.add(it, k.ci(1)), k.ci(plan.stages));
    // Prefetch the next tile (zero-filled past the end), then wait for this
    // one. wgmma: only K here (V_{j+1} goes out once V_{j-1} is consumed);
    // the two newest groups (V_j, K_{j+1}) may stay in flight.
    Value uTile, uSlot;
    if (gateInAcc && !gateInMma) {
      uTile = k.add(tile0, k.add(it, k.ci(2)));
      uSlot = k.andi(k.add(it, k.ci(2)), k.ci(plan.gateTiles() - 1));
    }
    Value next =
        tileCopy(k.add(n0, k.ci(BN)), nextStage, true, !overlap, uTile, uSlot);
    // FoX (gateInAcc, not gateInMma): this tile's record. It landed a step
    // ago, so it is read before this step's wait and barrier, which hide
    // the loads; after the copies, whose address registers then free up
    // sooner. Records rotate over four slots (copied two tiles ahead).
    std::vector<std::array<Value, 4>> u(nS, {zero, zero, zero, zero});
    Value gFirst; // G'_j0
    if (gateInAcc && !gateInMma) {
      Value rec = k.mul(k.andi(it, k.ci(plan.gateTiles() - 1)), k.ci(uTF));
      gFirst = memref::LoadOp::create(b, loc, gTiles, ValueRange{rec});
      for (int64_t jn = 0; jn < nS; ++jn) {
        // Columns 8 jn + 2 lq + {0, 1}, for rows quad and quad + 8 (the
        // accumulators' order: u_c, u_c+1, u_c, u_c+1). One 8-byte load and
        // two moves: a 16-byte load of a duplicated pair saves the moves
        // but moves twice the bytes through shared memory, on the pipe the
        // step's cp.async copies queue on, and measured slower.
        Value at = k.add(rec, k.add(k.ci(4 + 8 * jn), k.mul(lq, k.ci(2))));
        Value pair = vector::LoadOp::create(b, loc, VectorType::get({2}, f32),
                                            gTiles, ValueRange{at});
        for (int i = 0; i < 4; ++i)
          u[jn][i] = vector::ExtractOp::create(b, loc, pair, i % 2);
      }
    }
    nvgpu::DeviceAsyncWaitOp::create(b, loc, next,
                                     b.getI32IntegerAttr(overlap ? 2 : 1));
    if (wgMode)
      wgmma::fenceProxyAsync(b, loc);
    gpu::BarrierOp::create(b, loc);

    // FoX per score: this tile's -G_j, read before the products are issued
    // so the shared loads are done when the scores are (the wgmma wait is
    // inline asm with side effects: loads after it cannot move above it).
    // gateInMma: G'_j0 from the tail of the record that landed with K (the
    // rest goes to the tensor cores), read before the products are issued.
    if (gateInMma)
      gFirst = memref::LoadOp::create(
          b, loc, gTiles,
          ValueRange{k.add(k.mul(stage, k.ci(uTF)), k.ci(4 * BN))});
    SmallVector<std::array<Value, 2>> gk(nS);
    if (plan.gate && !gateInAcc)
      for (int64_t jn = 0; jn < nS; ++jn) {
        Value at = k.add(k.mul(stage, k.ci(BN)),
                         k.add(k.ci(jn * 8), k.mul(lq, k.ci(2))));
        Value pair = vector::LoadOp::create(b, loc, VectorType::get({2}, f32),
                                            gTiles, ValueRange{at});
        for (int e = 0; e < 2; ++e)
          gk[jn][e] = vector::ExtractOp::create(b, loc, pair, e);
      }
    // S = Q K^T for this warp's rows and BN keys.
    Value kTile = k.add(k.ci(sK0), k.mul(stage, k.ci(BN * D)));
    std::vector<std::vector<std::array<Value, 4>>> s(MR, u);
    SmallVector<Value> pvPending; // wgmma: O and P_{j-1}, in flight
    if (wgMode) {
      // One m64nBNk16 wgmma per 16 columns of D, both operands K-major in
      // shared memory: Q rows of this warpgroup, the stage's K rows.
      Value kAddr =
          k.add(smemAddr,
                k.mul(k.add(k.ci(sK0), k.mul(stage, k.ci(BN * D))), k.ci(2)));
      Value qDesc = wgmma::descriptor(b, loc, qAddr, 16, 1024);
      Value kDesc = wgmma::descriptor(b, loc, kAddr, 16, 1024);
      SmallVector<Value> regs;
      if (overlap) {
        regs.assign(carried.begin(), carried.begin() + nO * 4);
        regs.append(carried.begin() + pBase, carried.begin() + pBase + nP);
      }
      // FoX (gateInAcc, not gateInMma): S accumulates onto u, which goes
      // through the fence with the other registers written since the last
      // wgmma.
      const size_t nRegs = regs.size();
      if (gateInAcc && !gateInMma)
        for (int64_t jn = 0; jn < nS; ++jn)
          regs.append(u[jn].begin(), u[jn].end());
      regs = wgmma::fence(b, loc, regs);
      SmallVector<Value> acc(regs.begin() + nRegs, regs.end());
      regs.truncate(nRegs);
      if (gateInMma) {
        // S starts as u (GpuPlan::gateInMma): ones x this tile's record.
        Value uDesc = wgmma::descriptor(
            b, loc,
            k.add(k.add(smemAddr, k.ci(gOff)), k.mul(stage, k.ci(4 * uTF))), 0,
            128, /*swizzle=*/false);
        Value aDesc = wgmma::descriptor(b, loc, k.add(smemAddr, k.ci(aOff)),
                                        128, 0, /*swizzle=*/false);
        acc = wgmma::mmaAsync(b, loc, {}, BN, /*half=*/false, {}, aDesc, uDesc,
                              false);
      }
      for (int64_t ks = 0; ks < D / 16; ++ks)
        acc = wgmma::mmaAsync(
            b, loc, acc, BN, plan.half, {},
            wgmma::advance(b, loc, qDesc, (ks / 4) * BM * 128 + (ks % 4) * 32),
            wgmma::advance(b, loc, kDesc, (ks / 4) * BN * 128 + (ks % 4) * 32),
            false);
      wgmma::commit(b, loc);
      if (overlap) {
        // O += P_{j-1} V_{j-1} (V in the other stage) runs behind S_j and
        // this step's softmax; wait<1> waits for S_j only.
        pvPending = pvIssue(regs, nextStage);
      }
      acc = wgmma::wait(b, loc, acc, overlap ? 1 : 0);
      for (int64_t jn = 0; jn < nS; ++jn)
        for (int i = 0; i < 4; ++i)
          s[0][jn][i] = acc[jn * 4 + i];
    }
    for (int64_t ks = 0; !wgMode && ks < D / 16; ++ks) {
      std::vector<std::array<Value, 4>> qk(MR);
      for (int64_t mt = 0; mt < MR; ++mt)
        qk[mt] = qInRegs ? qf[mt][ks] : loadQ(mt, ks);
      Value kStep = stepIdx(kLane, ks);
      for (int64_t jj = 0; jj < BN / 16; ++jj) {
        auto r =
            ab.ldmatrix(k.add(k.add(kTile, k.ci(jj * 16 * D)), kStep), false);
        for (int64_t mt = 0; mt < MR; ++mt) {
          s[mt][2 * jj] = ab.mma(qk[mt], {r[0], r[1]}, s[mt][2 * jj]);
          s[mt][2 * jj + 1] = ab.mma(qk[mt], {r[2], r[3]}, s[mt][2 * jj + 1]);
        }
      }
    }

    SmallVector<Value> cols; // this lane's key index per [jn][e]
    for (int64_t jn = 0; jn < nS; ++jn)
      for (int e = 0; e < 2; ++e)
        cols.push_back(k.add(n0, k.add(k.ci(jn * 8 + e), k.mul(lq, k.ci(2)))));
    // Logits in base 2 (or raw scores, see rawScores), flattened
    // [mt][jn][r * 2 + e].
    SmallVector<Value> sv;
    for (int64_t mt = 0; mt < MR; ++mt)
      for (int64_t jn = 0; jn < nS; ++jn)
        for (int i = 0; i < 4; ++i) {
          Value x = s[mt][jn][i];
          if (plan.gate && !gateInAcc) // without the row's G_i (see gq)
            x = fma(x, scaleLog2, gk[jn][i % 2]);
          else if (!rawScores)
            x = k.fmul(x, scaleLog2);
          sv.push_back(x);
        }
    auto svAt = [&](int64_t mt, int64_t jn, int i) -> Value & {
      return sv[(mt * nS + jn) * 4 + i];
    };

    // Masks, only on tiles that cross an edge.
    Value tileEnd = k.add(n0, k.ci(BN));
    Value needMask = k.cmp(P::sgt, tileEnd, S);
    if (plan.mask == 0 || plan.mask == 2)
      needMask = k.ori(needMask, k.cmp(P::sgt, k.sub(tileEnd, k.ci(1)), pMin));
    if (plan.mask == 2)
      needMask =
          k.ori(needMask, k.cmp(P::sle, n0, k.sub(pMax, k.ci(plan.window))));
    SmallVector<Type> svTypes(sv.size(), f32);
    auto ifOp = scf::IfOp::create(b, loc, svTypes, needMask, true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      SmallVector<Value> masked;
      for (int64_t mt = 0; mt < MR; ++mt)
        for (int64_t jn = 0; jn < nS; ++jn)
          for (int i = 0; i < 4; ++i) {
            Value col = cols[jn * 2 + i % 2];
            Value p = rowPos[mt * 2 + i / 2];
            Value vis = k.cmp(P::slt, col, S);
            if (plan.mask == 0 || plan.mask == 2)
              vis = k.andi(vis, k.cmp(P::sle, col, p));
            if (plan.mask == 2)
              vis =
                  k.andi(vis, k.cmp(P::sgt, col, k.sub(p, k.ci(plan.window))));
            masked.push_back(k.sel(vis, svAt(mt, jn, i), negInf));
          }
      scf::YieldOp::create(b, loc, masked);
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, sv);
    }
    for (size_t i = 0; i < sv.size(); ++i)
      sv[i] = ifOp.getResult(i);

    // Online softmax per row.
    SmallVector<Value> newState(carried.begin(), carried.end());
    SmallVector<Value> alpha(nRows), mUse(nRows), negM(nRows);
    // FoX's row term of this tile: -G_i, plus G_j0 with gateInAcc.
    SmallVector<Value> rowBias(gq);
    if (gateInAcc) {
      for (Value &x : rowBias)
        x = k.fadd(gFirst, x);
    }
    for (int64_t rho = 0; rho < nRows; ++rho) {
      int64_t mt = rho / 2, r = rho % 2;
      Value mx = negInf;
      for (int64_t jn = 0; jn < nS; ++jn)
        for (int e = 0; e < 2; ++e)
          mx = k.fmax(mx, svAt(mt, jn, r * 2 + e));
      mx = k.fmax(mx, k.shuffleXor(mx, 1));
      mx = k.fmax(mx, k.shuffleXor(mx, 2));
      if (rawScores && plan.gate)
        mx = fma(mx, scaleLog2, rowBias[rho]);
      else if (rawScores)
        mx = k.fmul(mx, scaleLog2);
      else if (plan.gate)
        mx = k.fadd(mx, rowBias[rho]);
      Value mOld = carried[mBase + rho];
      Value mNew = k.fmax(mOld, mx);
      Value isInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          mNew, negInf);
      mUse[rho] = k.sel(isInf, zero, mNew);
      negM[rho] = plan.gate
                      ? k.fsub(rowBias[rho], mUse[rho])
                      : arith::NegFOp::create(b, loc, mUse[rho]).getResult();
      alpha[rho] = k.exp2(k.fsub(mOld, mUse[rho]));
      newState[mBase + rho] = mNew;
    }
    SmallVector<Value> rowSum(nRows, zero);
    for (int64_t mt = 0; mt < MR; ++mt)
      for (int64_t jn = 0; jn < nS; ++jn)
        for (int i = 0; i < 4; ++i) {
          int64_t rho = mt * 2 + i / 2;
          Value &x = svAt(mt, jn, i);
          Value p = rawScores ? k.exp2(fma(x, scaleLog2, negM[rho]))
                              : k.exp2(k.fadd(x, negM[rho]));
          x = p;
          rowSum[rho] = k.fadd(rowSum[rho], p);
        }
    for (int64_t rho = 0; rho < nRows; ++rho)
      newState[lBase + rho] =
          fma(carried[lBase + rho], alpha[rho], rowSum[rho]);
    std::vector<std::vector<std::array<Value, 4>>> oAcc(
        MR, std::vector<std::array<Value, 4>>(nO));
    if (overlap) // O = alpha (O + P_{j-1} V_{j-1}) once that is done
      pvPending = wgmma::wait(b, loc, pvPending, 0);
    for (int64_t mt = 0; mt < MR; ++mt)
      for (int64_t dn = 0; dn < nO; ++dn)
        for (int i = 0; i < 4; ++i)
          oAcc[mt][dn][i] = k.fmul(overlap ? pvPending[oIdx(mt, dn, i)]
                                           : carried[oIdx(mt, dn, i)],
                                   alpha[mt * 2 + i / 2]);

    // O += P V: P's accumulator layout is the A-operand layout.
    Value vTile = k.add(k.ci(sV0), k.mul(stage, k.ci(BN * Dv)));
    if (wgMode) {
      SmallVector<Value> p;
      for (int64_t t = 0; t < BN / 16; ++t) {
        p.push_back(ab.packI32(svAt(0, 2 * t, 0), svAt(0, 2 * t, 1)));
        p.push_back(ab.packI32(svAt(0, 2 * t, 2), svAt(0, 2 * t, 3)));
        p.push_back(ab.packI32(svAt(0, 2 * t + 1, 0), svAt(0, 2 * t + 1, 1)));
        p.push_back(ab.packI32(svAt(0, 2 * t + 1, 2), svAt(0, 2 * t + 1, 3)));
      }
      if (overlap) {
        // P_j waits in registers for the next step; V_{j+1} may overwrite
        // V_{j-1} once every warpgroup is done with it.
        std::copy(p.begin(), p.end(), newState.begin() + pBase);
        gpu::BarrierOp::create(b, loc);
        tileCopy(k.add(n0, k.ci(BN)), nextStage, false, true);
      } else {
        SmallVector<Value> regs;
        for (int64_t dn = 0; dn < nO; ++dn)
          for (int i = 0; i < 4; ++i)
            regs.push_back(oAcc[0][dn][i]);
        regs.append(p.begin(), p.end());
        SmallVector<Value> o =
            wgmma::wait(b, loc, pvIssue(wgmma::fence(b, loc, regs), stage), 0);
        for (int64_t dn = 0; dn < nO; ++dn)
          for (int i = 0; i < 4; ++i)
            oAcc[0][dn][i] = o[dn * 4 + i];
      }
    }
    for (int64_t t = 0; !wgMode && t < BN / 16; ++t) {
      std::vector<std::array<Value, 4>> pa(MR);
      for (int64_t mt = 0; mt < MR; ++mt)
        pa[mt] = {ab.pack(svAt(mt, 2 * t, 0), svAt(mt, 2 * t, 1)),
                  ab.pack(svAt(mt, 2 * t, 2), svAt(mt, 2 * t, 3)),
                  ab.pack(svAt(mt, 2 * t + 1, 0), svAt(mt, 2 * t + 1, 1)),
                  ab.pack(svAt(mt, 2 * t + 1, 2), svAt(mt, 2 * t + 1, 3))};
      for (int64_t dd = 0; dd < Dv / 16; ++dd) {
        auto r = ab.ldmatrix(
            k.add(k.add(vTile, k.ci(t * 16 * Dv)), stepIdx(vLane, dd)), true);
        for (int64_t mt = 0; mt < MR; ++mt) {
          oAcc[mt][2 * dd] = ab.mma(pa[mt], {r[0], r[1]}, oAcc[mt][2 * dd]);
          oAcc[mt][2 * dd + 1] =
              ab.mma(pa[mt], {r[2], r[3]}, oAcc[mt][2 * dd + 1]);
        }
      }
    }
    for (int64_t mt = 0; mt < MR; ++mt)
      for (int64_t dn = 0; dn < nO; ++dn)
        for (int i = 0; i < 4; ++i)
          newState[oIdx(mt, dn, i)] = oAcc[mt][dn][i];
    // Every warp is done with this stage before a later prefetch reuses it.
    if (!overlap)
      gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, newState);
  }
  // Drain the last (empty) prefetch before the block exits.
  nvgpu::DeviceAsyncWaitOp::create(b, loc, tok, b.getI32IntegerAttr(0));

  SmallVector<Value> fin(loop.getResults());
  if (overlap) {
    // The last step's P V (P = 0 and V zeros when there was no step).
    wgmma::fenceProxyAsync(b, loc);
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> regs(fin.begin(), fin.begin() + nO * 4);
    regs.append(fin.begin() + pBase, fin.begin() + pBase + nP);
    regs = wgmma::fence(b, loc, regs);
    Value lastStage = k.rem(k.add(nTiles, k.ci(1)), k.ci(plan.stages));
    SmallVector<Value> o = wgmma::wait(b, loc, pvIssue(regs, lastStage), 0);
    std::copy(o.begin(), o.begin() + nO * 4, fin.begin());
  }

  // O / l, rounded and stored; rows past T are not written.
  for (int64_t rho = 0; rho < nRows; ++rho) {
    int64_t mt = rho / 2, r = rho % 2;
    Value l = fin[lBase + rho];
    l = k.fadd(l, k.shuffleXor(l, 1));
    l = k.fadd(l, k.shuffleXor(l, 2));
    Value pos =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
    Value inv = k.sel(pos, arith::DivFOp::create(b, loc, k.cf(1.0), l), zero);
    Value valid = k.cmp(P::slt, rowIdx[rho], T);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, valid, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value rowBase = k.add(oBase, k.mul(rowIdx[rho], k.ci(Dv)));
    for (int64_t dn = 0; dn < nO; ++dn) {
      auto f2 = VectorType::get({2}, f32);
      Value pair = vector::FromElementsOp::create(
          b, loc, f2,
          ValueRange{k.fmul(fin[oIdx(mt, dn, 2 * r)], inv),
                     k.fmul(fin[oIdx(mt, dn, 2 * r + 1)], inv)});
      Value t =
          arith::TruncFOp::create(b, loc, VectorType::get({2}, elem), pair);
      Value col = k.add(k.ci(dn * 8), k.mul(lq, k.ci(2)));
      vector::StoreOp::create(b, loc, t, o, ValueRange{k.add(rowBase, col)});
    }
  }
  gpu::ReturnOp::create(b, loc);
}

/// cos/sin(pos * theta^(-2i/R)) for `count` = P * R/2 entries, position
/// start + idx / (R/2): computed once per launch in f64 (positions reach
/// 1e5, where f32 angles lose the phase) and shared by every head.
void buildRopeTableKernel(OpBuilder &mb, gpu::GPUModuleOp module,
                          const GpuPlan &plan) {
  Location loc = module.getLoc();
  Type idx = mb.getIndexType(), f64 = mb.getF64Type(), f32 = mb.getF32Type();
  auto fbuf = MemRefType::get({ShapedType::kDynamic}, f32);
  auto fn = newKernel(mb, module, "rope_table", {fbuf, fbuf, idx, idx});
  Block &entry = fn.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  KB k{b, loc};
  Value cosT = entry.getArgument(0), sinT = entry.getArgument(1),
        count = entry.getArgument(2), start = entry.getArgument(3);
  const int64_t R = plan.ropeDim, half = R / 2;
  Value gid = k.globalThreadId(kPrologueThreads);
  auto inRange =
      scf::IfOp::create(b, loc, TypeRange{}, k.cmp(P::ult, gid, count), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  auto toF64 = [&](Value i) {
    Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
    return arith::SIToFPOp::create(b, loc, f64, i64).getResult();
  };
  Value pos = toF64(k.add(start, k.div(gid, k.ci(half))));
  Value invFreq = math::ExpOp::create(
      b, loc,
      arith::MulFOp::create(
          b, loc, toF64(k.rem(gid, k.ci(half))),
          arith::ConstantOp::create(
              b, loc, b.getF64FloatAttr(-2.0 * std::log(plan.ropeTheta) / R))));
  Value angle = arith::MulFOp::create(b, loc, pos, invFreq);
  memref::StoreOp::create(
      b, loc,
      arith::TruncFOp::create(b, loc, f32, math::CosOp::create(b, loc, angle)),
      cosT, ValueRange{gid});
  memref::StoreOp::create(
      b, loc,
      arith::TruncFOp::create(b, loc, f32, math::SinOp::create(b, loc, angle)),
      sinT, ValueRange{gid});
  b.setInsertionPointAfter(inRange);
  gpu::ReturnOp::create(b, loc);
}

/// The rope kernel's body when R % 16 == 0: thread `gid` owns 8 rotated
/// pairs or 16 tail elements of one row, moved with 16-byte loads and
/// stores (one thread per pair spent its time on index arithmetic: a
/// 64-bit division per pair).
void buildRopeVectorBody(KB &k, const GpuPlan &plan, Type elem, Value x,
                         Value y, Value cosT, Value sinT, Value rows, Value len,
                         Value pos0, Value gid) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  const int64_t D = plan.headDim, R = plan.ropeDim, groups = D / 16;
  Value row = k.div(gid, k.ci(groups)), g = k.rem(gid, k.ci(groups));
  auto inRange =
      scf::IfOp::create(b, loc, TypeRange{}, k.cmp(P::ult, row, rows), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(inRange.thenBlock());
  Value base = k.mul(row, k.ci(D));
  auto v8 = VectorType::get({8}, elem);
  auto f8 = VectorType::get({8}, b.getF32Type());
  auto load = [&](Value buf, Value at, VectorType t) -> Value {
    return vector::LoadOp::create(b, loc, t, buf, ValueRange{at}, false,
                                  llvm::Align(16));
  };
  auto store = [&](Value v, Value at) {
    vector::StoreOp::create(b, loc, v, y, ValueRange{k.add(base, at)}, false,
                            llvm::Align(16));
  };
  auto ext = [&](Value v) -> Value {
    return arith::ExtFOp::create(b, loc, f8, v);
  };
  auto trunc = [&](Value v) -> Value {
    return arith::TruncFOp::create(b, loc, v8, v);
  };
  auto branch = scf::IfOp::create(b, loc, TypeRange{},
                                  k.cmp(P::ult, g, k.ci(R / 16)), true);
  b.setInsertionPointToStart(branch.thenBlock());
  Value p0 = k.mul(g, k.ci(8));
  Value at = k.add(k.mul(k.add(pos0, k.rem(row, len)), k.ci(R / 2)), p0);
  Value c = load(cosT, at, f8), sn = load(sinT, at, f8);
  Value ia = plan.ropeInterleaved ? k.mul(p0, k.ci(2)) : p0;
  Value ib = plan.ropeInterleaved ? k.add(ia, k.ci(8)) : k.add(p0, k.ci(R / 2));
  // Loads in a fixed order (argument evaluation order is not).
  Value lo = ext(load(x, k.add(base, ia), v8));
  Value hi = ext(load(x, k.add(base, ib), v8));
  auto [ya, yb] = rotate8(k, plan.ropeInterleaved, lo, hi, c, sn);
  store(trunc(ya), ia);
  store(trunc(yb), ib);
  // The tail past R is copied, 16 elements per thread.
  b.setInsertionPointToStart(branch.elseBlock());
  Value t0 = k.add(k.ci(R), k.mul(k.sub(g, k.ci(R / 16)), k.ci(16)));
  for (int64_t h = 0; h < 16; h += 8) {
    Value e = k.add(t0, k.ci(h));
    store(load(x, k.add(base, e), v8), e);
  }
}

/// y = RoPE(x) for `rows` rows of D, row r at table row pos0 + r % len; one
/// thread per pair of elements (rotated pairs, then the copied tail), or 8
/// pairs (buildRopeVectorBody).
void buildRopeKernel(OpBuilder &mb, gpu::GPUModuleOp module,
                     const GpuPlan &plan) {
  Location loc = module.getLoc();
  Type elem = plan.half ? Type(mb.getF16Type()) : Type(mb.getBF16Type());
  Type idx = mb.getIndexType(), f32 = mb.getF32Type();
  auto buf = MemRefType::get({ShapedType::kDynamic}, elem);
  auto fbuf = MemRefType::get({ShapedType::kDynamic}, f32);
  auto fn =
      newKernel(mb, module, "rope", {buf, buf, fbuf, fbuf, idx, idx, idx});
  Block &entry = fn.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  KB k{b, loc};
  // Without FoX the rope pass over k is the kernel before attention: let it
  // start early (GpuPlan::dependentLaunch).
  if (plan.dependentLaunch)
    NVVM::GriddepcontrolOp::create(b, loc,
                                   NVVM::GridDepActionKind::launch_dependents);
  Value x = entry.getArgument(0), y = entry.getArgument(1),
        cosT = entry.getArgument(2), sinT = entry.getArgument(3),
        rows = entry.getArgument(4), len = entry.getArgument(5),
        pos0 = entry.getArgument(6);
  const int64_t D = plan.headDim, R = plan.ropeDim, pairs = D / 2;
  Value gid = k.globalThreadId(kPrologueThreads);
  if (plan.ropePairsPerThread() == 8) {
    buildRopeVectorBody(k, plan, elem, x, y, cosT, sinT, rows, len, pos0, gid);
    gpu::ReturnOp::create(b, loc);
    return;
  }
  Value row = k.div(gid, k.ci(pairs)), p = k.rem(gid, k.ci(pairs));
  auto inRange =
      scf::IfOp::create(b, loc, TypeRange{}, k.cmp(P::ult, row, rows), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  Value base = k.mul(row, k.ci(D));
  auto load = [&](Value i) {
    Value e = memref::LoadOp::create(b, loc, x, ValueRange{k.add(base, i)});
    return arith::ExtFOp::create(b, loc, f32, e).getResult();
  };
  auto store = [&](Value val, Value i) {
    Value e = arith::TruncFOp::create(b, loc, elem, val);
    memref::StoreOp::create(b, loc, e, y, ValueRange{k.add(base, i)});
  };
  Value rotated = k.cmp(P::ult, p, k.ci(R / 2));
  auto branch = scf::IfOp::create(b, loc, TypeRange{}, rotated, true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(branch.thenBlock());
    Value ia = plan.ropeInterleaved ? k.mul(p, k.ci(2)) : p;
    Value ib =
        plan.ropeInterleaved ? k.add(ia, k.ci(1)) : k.add(p, k.ci(R / 2));
    Value at = k.add(k.mul(k.add(pos0, k.rem(row, len)), k.ci(R / 2)), p);
    Value c = memref::LoadOp::create(b, loc, cosT, ValueRange{at});
    Value sn = memref::LoadOp::create(b, loc, sinT, ValueRange{at});
    Value xa = load(ia), xb = load(ib);
    store(k.fsub(k.fmul(xa, c), k.fmul(xb, sn)), ia);
    store(k.fadd(k.fmul(xa, sn), k.fmul(xb, c)), ib);
    b.setInsertionPointToStart(branch.elseBlock());
    Value ta = k.add(k.ci(R), k.mul(k.sub(p, k.ci(R / 2)), k.ci(2)));
    Value tb = k.add(ta, k.ci(1));
    store(load(ta), ta);
    store(load(tb), tb);
  }
  b.setInsertionPointAfter(inRange);
  gpu::ReturnOp::create(b, loc);
}

/// G = -gamma * log2(e) * inclusive cumsum of g along each row of S (f64
/// sums, f32 out), one block of kGateThreads per row, in rounds of
/// kGateThreads * kGateKeysPerThread keys. Global memory is read and
/// written coalesced (thread t takes keys t, t + NT, ...) through a shared
/// f64 copy of the round; the scan runs on the shared copy: each thread
/// sums its consecutive keys, the block scans the thread sums (warp
/// shuffles, then every thread adds the totals of the warps before its
/// own), and the round's total carries into the next. No thread walks a
/// row serially. With gateInAcc the round also writes its keys' initial
/// scores.
void buildGateKernel(OpBuilder &mb, gpu::GPUModuleOp module,
                     const GpuPlan &plan) {
  MLIRContext *ctx = mb.getContext();
  Location loc = module.getLoc();
  Type idx = mb.getIndexType(), f64 = mb.getF64Type(), f32 = mb.getF32Type();
  auto fbuf = MemRefType::get({ShapedType::kDynamic}, f32);
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  const int64_t NT = GpuPlan::kGateThreads, E = GpuPlan::kGateKeysPerThread,
                R = E * NT, NW = NT / 32;
  static_assert(GpuPlan::kGateKeysPerThread % 4 == 0, "16-byte shared reads");
  auto sumsTy = MemRefType::get({NW}, f64, MemRefLayoutAttrInterface{}, wg);
  auto roundTy = MemRefType::get({R}, f64, MemRefLayoutAttrInterface{}, wg);
  const bool ext = plan.gateInAcc();
  auto fn = newKernel(mb, module, "gate", {fbuf, fbuf, idx}, {sumsTy, roundTy});
  fn.setKnownBlockSizeAttr(
      mb.getDenseI32ArrayAttr({static_cast<int32_t>(NT), 1, 1}));
  Block &entry = fn.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  KB k{b, loc};
  // The attention kernel may start (programmatic dependent launch) once
  // every gate block runs: it sets up and then waits for this grid's
  // results (GpuPlan::dependentLaunch).
  if (plan.dependentLaunch)
    NVVM::GriddepcontrolOp::create(b, loc,
                                   NVVM::GridDepActionKind::launch_dependents);
  Value g = entry.getArgument(0), G = entry.getArgument(1),
        S = entry.getArgument(2);
  Value sums = fn.getWorkgroupAttributions()[0];
  Value round = fn.getWorkgroupAttributions()[1];
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value row = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value gRow = k.mul(row, S); // this row of g
  auto [rowBase, base] = gateRow(k, plan, row, S);
  // The record of key j's tile (GpuPlan::gateInAcc) and j's place in it:
  // after the 4-float head, in key order.
  const int64_t BN = plan.blockN, uTF = plan.uTileFloats();
  auto recordAt = [&](Value j) {
    return k.add(rowBase, k.mul(k.div(j, k.ci(BN)), k.ci(uTF)));
  };
  auto uAt = [&](Value j) {
    return k.add(recordAt(j), k.add(k.ci(4), k.rem(j, k.ci(BN))));
  };
  // gateInMma: key j's 16 bytes (columns 0-7) in its record.
  const bool mmaRec = plan.gateInMma();
  auto v4f = VectorType::get({4}, f32);
  auto storeRow = [&](Value j, Value row) {
    Value at = k.add(recordAt(j), k.mul(k.rem(j, k.ci(BN)), k.ci(4)));
    vector::StoreOp::create(b, loc, row, G, ValueRange{at});
  };
  Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
  // Stored as -gamma * log2(e) * G: the attention kernel's logits are in
  // base 2 and take G_j with one add.
  Value toG = arith::ConstantOp::create(
      b, loc, b.getF64FloatAttr(-plan.gateScale * 1.4426950408889634));
  auto rounds = scf::ForOp::create(b, loc, k.ci(0), S, k.ci(R), zero);
  b.setInsertionPointToStart(rounds.getBody());
  Value r0 = rounds.getInductionVar(), carry = rounds.getRegionIterArgs()[0];
  // Coalesced keys of this thread: local index t + NT e.
  std::array<Value, E> local, j, in;
  for (int e = 0; e < E; ++e) {
    local[e] = k.add(tid, k.ci(NT * e));
    j[e] = k.add(r0, local[e]);
    in[e] = k.cmp(P::slt, j[e], S);
    Value x = memref::LoadOp::create(
        b, loc, g, ValueRange{k.add(gRow, k.mins(j[e], k.sub(S, k.ci(1))))});
    x = k.sel(in[e], arith::ExtFOp::create(b, loc, f64, x), zero);
    memref::StoreOp::create(b, loc, x, round, ValueRange{local[e]});
  }
  gpu::BarrierOp::create(b, loc);
  // This thread's E consecutive keys, their running sum.
  auto v4 = VectorType::get({4}, f64);
  Value mine = k.mul(tid, k.ci(E));
  std::array<Value, E> p;
  for (int e = 0; e < E; e += 4) {
    Value quad = vector::LoadOp::create(b, loc, v4, round,
                                        ValueRange{k.add(mine, k.ci(e))});
    for (int i = 0; i < 4; ++i) {
      Value x = vector::ExtractOp::create(b, loc, quad, i);
      p[e + i] = e + i ? k.fadd(p[e + i - 1], x) : x;
    }
  }
  // Inclusive scan of the thread sums: within each warp by shuffles, then
  // every thread adds the totals of the warps before its own (one barrier;
  // the block-wide Hillis-Steele scan before took 20, and this kernel was a
  // third of FoX's cost over plain attention at T = 2K). f64 values cross
  // lanes as two 32-bit halves.
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto shuffleUp = [&](Value x, int32_t off) {
    Value bits = arith::BitcastOp::create(b, loc, i64, x);
    Value lo = arith::TruncIOp::create(b, loc, i32, bits);
    Value hi = arith::TruncIOp::create(
        b, loc, i32,
        arith::ShRUIOp::create(
            b, loc, bits,
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32))));
    auto up = [&](Value h) {
      return gpu::ShuffleOp::create(b, loc, h, off, 32, gpu::ShuffleMode::UP)
          .getShuffleResult();
    };
    Value joined = arith::OrIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, i64, up(lo)),
        arith::ShLIOp::create(
            b, loc, arith::ExtUIOp::create(b, loc, i64, up(hi)),
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32))));
    return arith::BitcastOp::create(b, loc, f64, joined).getResult();
  };
  Value lane = k.rem(tid, k.ci(32)), warp = k.div(tid, k.ci(32));
  Value incl = p[E - 1];
  for (int32_t off = 1; off < 32; off *= 2)
    incl = k.sel(k.cmp(P::sge, lane, k.ci(off)),
                 k.fadd(incl, shuffleUp(incl, off)), incl);
  Value inWarp = k.sel(k.cmp(P::sgt, lane, k.ci(0)), shuffleUp(incl, 1), zero);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(scf::IfOp::create(b, loc, TypeRange{},
                                                 k.cmp(P::eq, lane, k.ci(31)),
                                                 false)
                                   .thenBlock());
    memref::StoreOp::create(b, loc, incl, sums, ValueRange{warp});
  }
  gpu::BarrierOp::create(b, loc);
  // The warps before this one, and the round's total (NW broadcast reads).
  Value before = zero, total = zero;
  for (int64_t w = 0; w < NW; ++w) {
    total = k.fadd(total,
                   memref::LoadOp::create(b, loc, sums, ValueRange{k.ci(w)}));
    if (w + 1 < NW)
      before = k.sel(k.cmp(P::eq, warp, k.ci(w + 1)), total, before);
  }
  Value offset = k.fadd(carry, k.fadd(before, inWarp));
  // The stored values back into the round (own keys: no barrier needed
  // before), then out coalesced.
  for (int e = 0; e < E; e += 4) {
    SmallVector<Value> outs;
    for (int i = 0; i < 4; ++i)
      outs.push_back(
          arith::MulFOp::create(b, loc, k.fadd(offset, p[e + i]), toG));
    vector::StoreOp::create(b, loc,
                            vector::FromElementsOp::create(b, loc, v4, outs),
                            round, ValueRange{k.add(mine, k.ci(e))});
  }
  gpu::BarrierOp::create(b, loc);
  Value inv = arith::ConstantOp::create(
      b, loc, b.getF64FloatAttr(1.0 / (plan.scale * 1.4426950408889634)));
  Type bf16 = b.getBF16Type(), i16 = b.getI16Type();
  auto bits32 = [&](Value piece) -> Value {
    return arith::ExtUIOp::create(b, loc, i32,
                                  arith::BitcastOp::create(b, loc, i16, piece));
  };
  for (int e = 0; e < E; ++e) {
    Value gd = memref::LoadOp::create(b, loc, round, ValueRange{local[e]});
    Value gf = arith::TruncFOp::create(b, loc, f32, gd);
    Value u;
    if (ext) {
      // Initial score (GpuPlan::gateInAcc): u_j = (G_j - G_j0) /
      // (scale log2(e)), G_j0 as stored (f32: the attention kernel adds
      // that one back). Rounds start on tile bounds, so j0 is a key of
      // this round.
      Value j0 = k.mul(k.div(local[e], k.ci(BN)), k.ci(BN));
      Value g0 = memref::LoadOp::create(b, loc, round, ValueRange{j0});
      g0 = arith::TruncFOp::create(b, loc, f32, g0);
      g0 = arith::ExtFOp::create(b, loc, f64, g0);
      u = arith::TruncFOp::create(
          b, loc, f32, arith::MulFOp::create(b, loc, k.fsub(gd, g0), inv));
      if (mmaRec) {
        // Three bf16 pieces of the f32 u, each the rounded rest of the
        // ones before (the rests are exact in f32), packed as columns
        // 0, 1 | 2, zeros after. In f32, not f64: conversions from and to
        // f64 run at a quarter of the f32 ones' rate.
        Value rest = u;
        std::array<Value, 3> bits;
        for (int i = 0; i < 3; ++i) {
          Value piece = arith::TruncFOp::create(b, loc, bf16, rest);
          if (i < 2)
            rest = k.fsub(rest, arith::ExtFOp::create(b, loc, f32, piece));
          bits[i] = bits32(piece);
        }
        Value w0 = arith::OrIOp::create(
            b, loc, bits[0],
            arith::ShLIOp::create(
                b, loc, bits[1],
                arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(16))));
        Value zero32 =
            arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
        u = vector::FromElementsOp::create(
            b, loc, v4f,
            ValueRange{arith::BitcastOp::create(b, loc, f32, w0),
                       arith::BitcastOp::create(b, loc, f32, bits[2]), zero32,
                       zero32});
      }
    }
    OpBuilder::InsertionGuard gd2(b);
    b.setInsertionPointToStart(
        scf::IfOp::create(b, loc, TypeRange{}, in[e], false).thenBlock());
    memref::StoreOp::create(b, loc, gf, G, ValueRange{k.add(base, j[e])});
    if (!ext)
      continue;
    if (mmaRec)
      storeRow(j[e], u);
    else
      memref::StoreOp::create(b, loc, u, G, ValueRange{uAt(j[e])});
    // A tile's first key also heads (gateInMma: ends) its record.
    b.setInsertionPointToStart(
        scf::IfOp::create(b, loc, TypeRange{},
                          k.cmp(P::eq, k.rem(j[e], k.ci(BN)), k.ci(0)), false)
            .thenBlock());
    memref::StoreOp::create(
        b, loc, gf, G,
        ValueRange{k.add(recordAt(j[e]), k.ci(mmaRec ? 4 * BN : 0))});
  }
  // The next round overwrites the shared arrays.
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, ValueRange{k.fadd(carry, total)});
  b.setInsertionPointAfter(rounds);
  if (ext) {
    // The last tile's keys past S read zeros (they are masked, but loaded).
    static_assert(GpuPlan::kGateThreads >= 128, "a thread per padded key");
    Value pad = k.add(S, tid);
    Value tileEnd = k.mul(k.div(k.add(S, k.ci(BN - 1)), k.ci(BN)), k.ci(BN));
    b.setInsertionPointToStart(scf::IfOp::create(b, loc, TypeRange{},
                                                 k.cmp(P::slt, pad, tileEnd),
                                                 false)
                                   .thenBlock());
    if (mmaRec) {
      storeRow(pad, arith::ConstantOp::create(
                        b, loc,
                        DenseElementsAttr::get(v4f, b.getF32FloatAttr(0.0))));
    } else {
      Value zero32 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
      memref::StoreOp::create(b, loc, zero32, G, ValueRange{uAt(pad)});
    }
    b.setInsertionPointToEnd(&entry);
  }
  gpu::ReturnOp::create(b, loc);
}

} // namespace

void mlir::attn::buildGpuKernels(OpBuilder &b, gpu::GPUModuleOp module,
                                 const GpuPlan &plan, bool withAttention) {
  if (plan.rope) {
    buildRopeTableKernel(b, module, plan);
    buildRopeKernel(b, module, plan);
  }
  if (plan.gate)
    buildGateKernel(b, module, plan);
  if (withAttention)
    buildAttentionKernel(b, module, plan);
}
