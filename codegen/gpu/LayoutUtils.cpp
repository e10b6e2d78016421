//===- LayoutUtils.cpp - which thread and register hold a tile element ----===//

#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

namespace {

/// An mma layout this backend lowers: warps stacked along rows. Per warp,
/// wgmma's accumulator (version 3) is mma.sync's m16n8 layout repeated
/// over N / 8, warp w of the block owning rows [16 w, 16 w + 16) (warp
/// w % 4 of warpgroup w / 4), so both versions share the register maps.
blk::MmaLayoutAttr loweredMma(Attribute a) {
  auto mma = dyn_cast_or_null<blk::MmaLayoutAttr>(a);
  if (!mma || (mma.getVersion() != 2 && mma.getVersion() != 3) ||
      mma.getWarpsPerCTA().size() != 2 || mma.getWarpsPerCTA()[1] != 1)
    return {};
  return mma;
}

int64_t warpsOf(blk::MmaLayoutAttr mma) { return mma.getWarpsPerCTA()[0]; }

/// The parent of a slice of a blocked layout, or null.
blk::BlockedLayoutAttr blockedParent(Attribute enc) {
  if (auto s = dyn_cast_or_null<blk::SliceLayoutAttr>(enc))
    return dyn_cast<blk::BlockedLayoutAttr>(s.getParent());
  return {};
}

/// Whether `layout` is one this backend lowers: 1-D, or 2-D row-major
/// (order = [1, 0]: threads and warps run along columns first).
bool loweredBlocked(blk::BlockedLayoutAttr layout, std::string &why) {
  if (layout.getRank() == 1 ||
      (layout.getRank() == 2 && layout.getOrder()[0] == 1))
    return true;
  why = "blocked layouts are lowered for 1-D tiles and 2-D tiles with order "
        "= [1, 0]";
  return false;
}

/// Elements per repetition of `layout` along dim d: sizePerThread[d] *
/// threadsPerWarp[d] * warpsPerCTA[d].
int64_t blockedSpan(blk::BlockedLayoutAttr layout, int64_t d) {
  return layout.getSizePerThread()[d] * layout.getThreadsPerWarp()[d] *
         layout.getWarpsPerCTA()[d];
}

/// A tile (or, `keep` naming one dim, the slice keeping only that dim) of
/// the blocked `layout`: the thread holds, per repetition of the layout's
/// span over the tile (repetitions row-major, outermost), its
/// sizePerThread block in row-major order; `shape` covers whole spans (no
/// thread replicates another within a repetition).
FailureOr<RegisterMap> blockedMap(ArrayRef<int64_t> shape,
                                  blk::BlockedLayoutAttr layout,
                                  std::optional<int64_t> keep,
                                  std::string &why) {
  if (!loweredBlocked(layout, why))
    return failure();
  SmallVector<int64_t> dims;
  if (keep)
    dims.push_back(*keep);
  else
    for (int64_t d = 0; d < layout.getRank(); ++d)
      dims.push_back(d);
  if (shape.size() != dims.size()) {
    why = "a blocked tile has the layout's rank; a slice of one, rank 1";
    return failure();
  }
  SmallVector<int64_t> reps;
  for (auto [i, d] : llvm::enumerate(dims)) {
    const int64_t span = blockedSpan(layout, d);
    if (shape[i] % span != 0) {
      why = "a blocked tile's dim " + std::to_string(d) +
            " must be a multiple of sizePerThread * threadsPerWarp * "
            "warpsPerCTA = " +
            std::to_string(span) + " elements (no thread replicates another)";
      return failure();
    }
    reps.push_back(shape[i] / span);
  }
  // Offset along dim dims[i] of element e of repetition r.
  auto at = [&](size_t i, int64_t r, int64_t e) {
    return r * blockedSpan(layout, dims[i]) + e;
  };
  auto size = [&](size_t i) { return layout.getSizePerThread()[dims[i]]; };
  RegisterMap map;
  if (dims.size() == 1) {
    for (int64_t r = 0; r < reps[0]; ++r)
      for (int64_t e = 0; e < size(0); ++e)
        map.offsets.push_back({at(0, r, e)});
    return map;
  }
  for (int64_t rm = 0; rm < reps[0]; ++rm)
    for (int64_t rn = 0; rn < reps[1]; ++rn)
      for (int64_t i = 0; i < size(0); ++i)
        for (int64_t j = 0; j < size(1); ++j)
          map.offsets.push_back({at(0, rm, i), at(1, rn, j)});
  return map;
}

/// The first element of thread (w, l) along each dim of `layout`:
/// (warp index * threadsPerWarp + lane index) * sizePerThread per dim,
/// lanes and warps numbered along the dims in `order`.
SmallVector<Value> blockedBase(OpBuilder &b, Location loc,
                               blk::BlockedLayoutAttr layout) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  // 1-D: thread t = 32 w + l starts at E t.
  if (layout.getRank() == 1)
    return {arith::MulIOp::create(
        b, loc, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x),
        c(layout.getSizePerThread()[0]))};
  auto [warp, lane] = warpAndLane(b, loc);
  const int64_t rank = layout.getRank();
  SmallVector<Value> laneAt(rank), warpAt(rank);
  Value l = lane, w = warp;
  for (int64_t d : layout.getOrder()) {
    int64_t tp = layout.getThreadsPerWarp()[d], wp = layout.getWarpsPerCTA()[d];
    laneAt[d] = arith::RemUIOp::create(b, loc, l, c(tp));
    l = arith::DivUIOp::create(b, loc, l, c(tp));
    warpAt[d] = arith::RemUIOp::create(b, loc, w, c(wp));
    w = arith::DivUIOp::create(b, loc, w, c(wp));
  }
  SmallVector<Value> base;
  for (int64_t d = 0; d < rank; ++d) {
    Value t = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, warpAt[d],
                              c(layout.getThreadsPerWarp()[d])),
        laneAt[d]);
    base.push_back(
        arith::MulIOp::create(b, loc, t, c(layout.getSizePerThread()[d])));
  }
  return base;
}

} // namespace

Attribute mlir::attn::blockgpu::mmaParent(Attribute layout) {
  if (auto s = dyn_cast_or_null<blk::SliceLayoutAttr>(layout))
    return mmaParent(s.getParent());
  if (auto d = dyn_cast_or_null<blk::DotOperandLayoutAttr>(layout))
    return mmaParent(d.getParent());
  return loweredMma(layout);
}

FailureOr<RegisterMap> mlir::attn::blockgpu::registerMap(RankedTensorType type,
                                                         bool transposed,
                                                         std::string &why) {
  Attribute enc = type.getEncoding();
  ArrayRef<int64_t> shape = type.getShape();
  RegisterMap map;
  auto fail = [&](const std::string &w) -> FailureOr<RegisterMap> {
    why = w;
    return failure();
  };
  auto mma = loweredMma(mmaParent(enc));
  if (!enc)
    return fail("a tile without a layout");
  if (auto blocked = dyn_cast<blk::BlockedLayoutAttr>(enc))
    return blockedMap(shape, blocked, std::nullopt, why);
  if (auto parent = blockedParent(enc)) {
    // slice<dim = d, blocked>: the elements along the other dim.
    int64_t dim = cast<blk::SliceLayoutAttr>(enc).getDim();
    if (parent.getRank() != 2 || dim > 1)
      return fail("slices are lowered of 2-D blocked layouts");
    return blockedMap(shape, parent, 1 - dim, why);
  }
  if (!mma)
    return fail("only mma layouts (#attn_block.mma<version = 2 or 3, "
                "warpsPerCTA = [W, 1]> and their slices and dot operands) "
                "and blocked layouts and their slices are lowered");
  const int64_t w = warpsOf(mma);
  auto need = [&](bool ok, const char *what) { return ok ? "" : what; };
  std::string bad;
  // A warpgroup's instruction covers its 64 rows once: one 16-row tile
  // per warp.
  if (mma.getVersion() == 3 && !isa<blk::SliceLayoutAttr>(enc) &&
      (shape.empty() || shape[0] != 16 * w))
    return fail("a wgmma (mma version 3) tile must have 16 * warps rows");
  if (mma.getVersion() == 3 && isa<blk::SliceLayoutAttr>(enc) &&
      cast<blk::SliceLayoutAttr>(enc).getDim() == 1 &&
      (shape.empty() || shape[0] != 16 * w))
    return fail("a row slice of a wgmma tile must have 16 * warps rows");
  if (auto m = dyn_cast<blk::MmaLayoutAttr>(enc)) {
    (void)m;
    bad =
        need(shape.size() == 2 && shape[0] % (16 * w) == 0 && shape[1] % 8 == 0,
             "an mma tile must be [16 * warps * k, 8 * n]");
    if (bad.empty()) {
      int64_t mt = shape[0] / (16 * w), nt = shape[1] / 8;
      for (int64_t mi = 0; mi < mt; ++mi)
        for (int64_t ni = 0; ni < nt; ++ni)
          for (int64_t r = 0; r < 4; ++r)
            map.offsets.push_back({16 * mi + 8 * (r / 2), 8 * ni + r % 2});
    }
  } else if (auto s = dyn_cast<blk::SliceLayoutAttr>(enc)) {
    if (!isa<blk::MmaLayoutAttr>(s.getParent()))
      return fail("only slices of an mma layout are lowered");
    if (shape.size() != 1)
      return fail("a slice of an mma layout must be 1-D");
    if (s.getDim() == 1) {
      bad = need(shape[0] % (16 * w) == 0,
                 "a row slice must cover 16 * warps * k rows");
      for (int64_t mi = 0; bad.empty() && mi < shape[0] / (16 * w); ++mi)
        for (int64_t h = 0; h < 2; ++h)
          map.offsets.push_back({16 * mi + 8 * h});
    } else {
      bad = need(shape[0] % 8 == 0, "a column slice must cover 8 * n columns");
      for (int64_t ni = 0; bad.empty() && ni < shape[0] / 8; ++ni)
        for (int64_t c = 0; c < 2; ++c)
          map.offsets.push_back({8 * ni + c});
    }
  } else if (auto d = dyn_cast<blk::DotOperandLayoutAttr>(enc)) {
    if (d.getKWidth() != 2 || type.getElementTypeBitWidth() != 16)
      return fail("dot operands are lowered for 16-bit elements with "
                  "kWidth = 2");
    if (shape.size() != 2)
      return fail("a dot operand must be 2-D");
    // K = 8 (one k8 step: FoX's records) holds the first half of a k16
    // step's registers: A's a0, a1 and B's b0 (m16n8k8).
    if (d.getOpIdx() == 0) {
      // A transposed is stored [K, M]: the same registers, dims swapped.
      int64_t mDim = transposed ? 1 : 0, kDim = 1 - mDim;
      // (K = 8 is the register A of FoX's records, never transposed.)
      bad =
          need(shape[mDim] % (16 * w) == 0 &&
                   (shape[kDim] % 16 == 0 || (shape[kDim] == 8 && !transposed)),
               "an A operand must be [16 * warps * k, 16 * n] or "
               "[16 * warps * k, 8] ([16 * n, 16 * warps * k] when "
               "transposed)");
      int64_t mt = shape[mDim] / (16 * w),
              kt = std::max<int64_t>(shape[kDim] / 16, 1),
              perStep = shape[kDim] == 8 ? 4 : 8;
      for (int64_t mi = 0; bad.empty() && mi < mt; ++mi)
        for (int64_t ki = 0; ki < kt; ++ki)
          for (int64_t e = 0; e < perStep; ++e) {
            int64_t j = e / 2;
            SmallVector<int64_t, 2> o(2);
            o[mDim] = 16 * mi + 8 * (j % 2);
            o[kDim] = 16 * ki + 8 * (j / 2) + e % 2;
            map.offsets.push_back(o);
          }
    } else {
      int64_t kDim = transposed ? 1 : 0, nDim = 1 - kDim;
      bad = need((shape[kDim] % 16 == 0 || shape[kDim] == 8) &&
                     shape[nDim] % 16 == 0,
                 "a B operand must be [16 * k, 16 * n] or [8, 16 * n] "
                 "(ldmatrix loads two n8 tiles)");
      int64_t kt = std::max<int64_t>(shape[kDim] / 16, 1), nt = shape[nDim] / 8,
              perStep = shape[kDim] == 8 ? 2 : 4;
      for (int64_t ki = 0; bad.empty() && ki < kt; ++ki)
        for (int64_t ni = 0; ni < nt; ++ni)
          for (int64_t e = 0; e < perStep; ++e) {
            SmallVector<int64_t, 2> o(2);
            o[kDim] = 16 * ki + 8 * (e / 2) + e % 2;
            o[nDim] = 8 * ni;
            map.offsets.push_back(o);
          }
    }
  } else {
    return fail("layout not lowered");
  }
  if (!bad.empty())
    return fail(bad);
  return map;
}

int64_t mlir::attn::blockgpu::numRegisters(RankedTensorType type) {
  std::string why;
  auto map = registerMap(type, /*transposed=*/false, why);
  // An operand has as many registers either way round; [N, 8] (K = 8 of
  // a transpose_b dot) has a map only as the transposed B.
  if (failed(map))
    map = registerMap(type, /*transposed=*/true, why);
  return succeeded(map) ? map->numRegs() : -1;
}

std::pair<Value, Value> mlir::attn::blockgpu::warpAndLane(OpBuilder &b,
                                                          Location loc) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value c32 = arith::ConstantIndexOp::create(b, loc, 32);
  return {arith::DivUIOp::create(b, loc, tid, c32),
          arith::RemUIOp::create(b, loc, tid, c32)};
}

SmallVector<Value> mlir::attn::blockgpu::threadBase(OpBuilder &b, Location loc,
                                                    RankedTensorType type,
                                                    bool transposed) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Attribute enc = type.getEncoding();
  if (auto blocked = dyn_cast<blk::BlockedLayoutAttr>(enc))
    return blockedBase(b, loc, blocked);
  if (auto parent = blockedParent(enc))
    return {blockedBase(b, loc,
                        parent)[1 - cast<blk::SliceLayoutAttr>(enc).getDim()]};
  auto [warp, lane] = warpAndLane(b, loc);
  Value quad = arith::DivUIOp::create(b, loc, lane, c(4));
  Value pair = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, c(4)), c(2));
  auto mma = cast<blk::MmaLayoutAttr>(mmaParent(enc));
  int64_t w = warpsOf(mma);
  // Rows of the mma tiles this warp owns start at 16 * mt * warp.
  auto rowBase = [&](int64_t rows) -> Value {
    int64_t mt = rows / (16 * w);
    return arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, warp, c(16 * mt)), quad);
  };
  if (isa<blk::MmaLayoutAttr>(enc))
    return {rowBase(type.getDimSize(0)), pair};
  if (auto s = dyn_cast<blk::SliceLayoutAttr>(enc))
    return {s.getDim() == 1 ? rowBase(type.getDimSize(0)) : pair};
  auto d = cast<blk::DotOperandLayoutAttr>(enc);
  if (d.getOpIdx() == 0)
    return transposed ? SmallVector<Value>{pair, rowBase(type.getDimSize(1))}
                      : SmallVector<Value>{rowBase(type.getDimSize(0)), pair};
  // B: k from the lane's pair, n from its quad.
  if (transposed)
    return {quad, pair};
  return {pair, quad};
}

bool mlir::attn::blockgpu::isSwizzle128(Attribute sharedLayout, Type elt,
                                        int64_t width) {
  auto nv = dyn_cast_or_null<blk::NvmmaSharedLayoutAttr>(sharedLayout);
  return nv && nv.getSwizzleBytes() == 128 && !nv.getTransposed() &&
         elt.getIntOrFloatBitWidth() == 16 && width % 64 == 0;
}

bool mlir::attn::blockgpu::isInterleaved(Attribute sharedLayout, Type elt,
                                         int64_t width) {
  auto nv = dyn_cast_or_null<blk::NvmmaSharedLayoutAttr>(sharedLayout);
  return nv && nv.getSwizzleBytes() == 0 && !nv.getTransposed() &&
         elt.getIntOrFloatBitWidth() == 16 && width % 8 == 0;
}

Value mlir::attn::blockgpu::swizzledOffset(OpBuilder &b, Location loc,
                                           Attribute sharedLayout, Value row,
                                           Value col, int64_t width,
                                           int64_t rows) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto nv = dyn_cast<blk::NvmmaSharedLayoutAttr>(sharedLayout);
  if (nv && nv.getSwizzleBytes() == 0) {
    // Interleaved: chunk col / 8 of all rows, then the next chunk.
    Value chunk = arith::DivUIOp::create(b, loc, col, c(8));
    return arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc,
                              arith::MulIOp::create(b, loc, chunk, c(rows * 8)),
                              arith::MulIOp::create(b, loc, row, c(8))),
        arith::RemUIOp::create(b, loc, col, c(8)));
  }
  if (nv) {
    // 128-byte swizzle, 16-bit elements: panel col / 64 of [rows][64],
    // chunk (col % 64) / 8 of row r at chunk ^ (r % 8).
    Value panel = arith::DivUIOp::create(b, loc, col, c(64));
    Value inPanel = arith::RemUIOp::create(b, loc, col, c(64));
    Value chunk = arith::XOrIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, inPanel, c(8)),
        arith::RemUIOp::create(b, loc, row, c(8)));
    Value inRow = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, chunk, c(8)),
        arith::RemUIOp::create(b, loc, col, c(8)));
    return arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, panel, c(rows * 64)),
            arith::MulIOp::create(b, loc, row, c(64))),
        inRow);
  }
  if (auto p = dyn_cast<blk::PaddedSharedLayoutAttr>(sharedLayout))
    return arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, c(p.getRowStride())), col);
  auto s = cast<blk::SharedLayoutAttr>(sharedLayout);
  Value vec = c(s.getVec());
  Value phase = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, row, c(s.getPerPhase())),
      c(s.getMaxPhase()));
  Value chunk = arith::XOrIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, col, vec), phase);
  Value inRow =
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, chunk, vec),
                            arith::RemUIOp::create(b, loc, col, vec));
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, row, c(width)), inRow);
}

SwizzledAddresses::SwizzledAddresses(OpBuilder &b, Location loc,
                                     Attribute sharedLayout, int64_t width,
                                     int64_t rows, Value rowT, Value chunkT,
                                     int64_t chunkTBits, Value inVecT,
                                     int64_t inVecTMax)
    : b(b), loc(loc), layout(sharedLayout), width(width), rows(rows),
      chunkTBits(chunkTBits), inVecTMax(inVecTMax), rowT(rowT), chunkT(chunkT),
      inVecT(inVecT) {}

Value SwizzledAddresses::at(int64_t dr, int64_t dc) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  // Padded rows: every access is the thread's offset plus a constant.
  if (auto pad = dyn_cast<blk::PaddedSharedLayoutAttr>(layout)) {
    if (!phase) // the thread's offset, made once
      phase = arith::AddIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, rowT, c(pad.getRowStride())),
              arith::MulIOp::create(b, loc, chunkT, c(8))),
          inVecT);
    return arith::AddIOp::create(b, loc, phase,
                                 c(dr * pad.getRowStride() + dc));
  }
  auto s = dyn_cast<blk::SharedLayoutAttr>(layout);
  const int64_t tSpan = int64_t(1) << chunkTBits;
  const int64_t k = dc / 8;
  bool split = s && s.getVec() == 8 && llvm::isPowerOf2_64(s.getMaxPhase()) &&
               tSpan <= s.getMaxPhase() &&
               dr % (s.getPerPhase() * s.getMaxPhase()) == 0 &&
               k % tSpan == 0 && dc % 8 + inVecTMax <= 8;
  if (!split) {
    Value row = arith::AddIOp::create(b, loc, rowT, c(dr));
    Value col = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, chunkT, c(8)), inVecT),
        c(dc));
    return swizzledOffset(b, loc, layout, row, col, width, rows);
  }
  const int64_t p = s.getMaxPhase(), low = k & (p - 1);
  Value &thread = byLowChunk[low];
  if (!thread) {
    if (!phase)
      phase = arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, rowT, c(s.getPerPhase())),
          c(p));
    Value chunk = arith::XOrIOp::create(
        b, loc, arith::AddIOp::create(b, loc, chunkT, c(low)), phase);
    thread = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, rowT, c(width)), inVecT),
        arith::MulIOp::create(b, loc, chunk, c(8)));
  }
  return arith::AddIOp::create(b, loc, thread,
                               c(dr * width + (k - low) * 8 + dc % 8));
}

std::pair<int64_t, int64_t>
mlir::attn::blockgpu::swizzlePeriod(Attribute sharedLayout, int64_t width) {
  // nvmma_shared: the chunk ^ (row % 8) of [rows][64] panels; without
  // swizzle, a row's chunk is 8 elements past the row before's.
  if (auto nv = dyn_cast<blk::NvmmaSharedLayoutAttr>(sharedLayout))
    return nv.getSwizzleBytes() == 0 ? std::pair<int64_t, int64_t>{1, 8}
                                     : std::pair<int64_t, int64_t>{8, 8 * 64};
  if (auto p = dyn_cast<blk::PaddedSharedLayoutAttr>(sharedLayout))
    return {1, p.getRowStride()};
  auto s = cast<blk::SharedLayoutAttr>(sharedLayout);
  int64_t rows = s.getPerPhase() * s.getMaxPhase();
  return {rows, rows * width};
}

int64_t mlir::attn::blockgpu::rowStrideOf(blk::SharedBufferType buf) {
  if (auto pad = dyn_cast<blk::PaddedSharedLayoutAttr>(buf.getEncoding()))
    return pad.getRowStride();
  return buf.getShape()[1];
}

Value mlir::attn::blockgpu::sliceOwner(OpBuilder &b, Location loc,
                                       blk::SliceLayoutAttr slice) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (slice.getDim() == 0)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, c(4));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                               arith::RemUIOp::create(b, loc, tid, c(4)), c(0));
}
