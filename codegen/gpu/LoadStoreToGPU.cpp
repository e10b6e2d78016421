//===- LoadStoreToGPU.cpp - global stores of register tiles ---------------===//
//
// attn_block.store and attn_block.load of tiles in register layouts: each
// thread accesses the registers it holds, consecutive columns as one aligned
// vector access where row length and first column allow, rows (and columns
// not known to be inside) bounds-checked unless the access is `in_bounds`.
// Operand tiles (Q, K, V) come through shared memory; other global loads
// into register layouts are refused. Each case: docs/lowering-details.md,
// "codegen/gpu/LoadStoreToGPU.cpp".
//
//===----------------------------------------------------------------------===//

#include "BlockToGPU.h"
#include "LayoutUtils.h"

#include "attn/Dialect/AttnBlockDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/Sequence.h"

#include <map>

using namespace mlir;
using namespace mlir::attn::blockgpu;
namespace blk = mlir::attn_block;

/// Whether a 2-D tile at `indices` lies inside `mem`'s static columns:
/// a constant first column c >= 0 with c + the tile's columns <= the dim
/// (the whole dim at 0, or a window: the rope kernels' column halves).
/// The first column may also be the induction variable of an scf.for with
/// constant bounds and step, all of whose values are such a column (the
/// rope table's column chunks).
static bool columnsInside(MemRefType mem, RankedTensorType type,
                          ValueRange indices, ArrayRef<int64_t> dims) {
  int64_t n = mem.getDimSize(dims[1]);
  if (ShapedType::isDynamic(n))
    return false;
  auto inside = [&](int64_t lo, int64_t hi) {
    return lo >= 0 && hi + type.getDimSize(1) <= n;
  };
  Value col = indices[dims[1]];
  APInt c, lb, ub, st;
  if (matchPattern(col, m_ConstantInt(&c)))
    return inside(c.getSExtValue(), c.getSExtValue());
  scf::ForOp loop = scf::getForInductionVarOwner(col);
  if (!loop || !matchPattern(loop.getLowerBound(), m_ConstantInt(&lb)) ||
      !matchPattern(loop.getUpperBound(), m_ConstantInt(&ub)) ||
      !matchPattern(loop.getStep(), m_ConstantInt(&st)) ||
      st.getSExtValue() < 1)
    return false;
  const int64_t lo = lb.getSExtValue(), hi = ub.getSExtValue();
  if (hi <= lo)
    return true; // no iteration
  return inside(lo, lo + (hi - lo - 1) / st.getSExtValue() * st.getSExtValue());
}

std::string mlir::attn::blockgpu::unsupportedReason(blk::StoreOp op) {
  auto type = op.getValue().getType();
  // An mma tile's elements have one owner each; a slice's are held by
  // several threads, of which one (sliceOwner) adds.
  auto slice = dyn_cast_or_null<blk::SliceLayoutAttr>(type.getEncoding());
  if (op.getAdd() && !isa_and_nonnull<blk::MmaLayoutAttr>(type.getEncoding()) &&
      !(slice && isa<blk::MmaLayoutAttr>(slice.getParent())))
    return "a reducing store ('add') is lowered from mma accumulator tiles "
           "and their slices only";
  if (type.getRank() == 1 &&
      isa<blk::SliceLayoutAttr, blk::BlockedLayoutAttr>(type.getEncoding()))
    return "";
  if (type.getRank() != 2)
    return "stores of 2-D tiles and 1-D slice or blocked tiles only";
  return "";
}

std::string mlir::attn::blockgpu::unsupportedReason(blk::LoadOp op) {
  auto type = op.getResult().getType();
  if (type.getRank() == 2 &&
      isa<blk::MmaLayoutAttr, blk::BlockedLayoutAttr>(type.getEncoding()))
    return "";
  if (type.getRank() != 1 ||
      !isa<blk::SliceLayoutAttr, blk::BlockedLayoutAttr>(type.getEncoding()))
    return "global loads into register layouts are lowered for 1-D slice "
           "or blocked tiles and 2-D mma accumulator or blocked tiles only "
           "(operand "
           "tiles go through shared memory: async_copy)";
  return "";
}

namespace {

/// 0 <= x < limit (indices): the guard of an element outside a memref.
Value inRange(OpBuilder &b, Location loc, Value x, Value limit) {
  using P = arith::CmpIPredicate;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::AndIOp::create(b, loc,
                               arith::CmpIOp::create(b, loc, P::sge, x, zero),
                               arith::CmpIOp::create(b, loc, P::slt, x, limit));
}

/// Whether index `v` is a multiple of `n` by construction: a constant
/// multiple, the induction variable of an scf.for whose lower bound and
/// step are, or a sum or product of such values (MTA's mixes walk column
/// chunks in a loop).
bool isMultipleIndex(Value v, int64_t n, int depth = 0) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue() % n == 0;
  if (depth > 4)
    return false;
  if (scf::ForOp loop = scf::getForInductionVarOwner(v))
    return isMultipleIndex(loop.getLowerBound(), n, depth + 1) &&
           isMultipleIndex(loop.getStep(), n, depth + 1);
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return isMultipleIndex(add.getLhs(), n, depth + 1) &&
           isMultipleIndex(add.getRhs(), n, depth + 1);
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return isMultipleIndex(mul.getLhs(), n, depth + 1) ||
           isMultipleIndex(mul.getRhs(), n, depth + 1);
  return false;
}

/// The run of consecutive columns a thread of `type`'s layout holds per
/// row (mma accumulators: a pair; 2-D blocked: sizePerThread[1]), each
/// starting at a column offset that is a multiple of it.
int64_t runLength(RankedTensorType type) {
  if (isa<blk::MmaLayoutAttr>(type.getEncoding()))
    return 2;
  if (auto b = dyn_cast<blk::BlockedLayoutAttr>(type.getEncoding());
      b && b.getRank() == 2)
    return b.getSizePerThread()[1];
  return 1;
}

/// How many consecutive columns an access of a 2-D register tile at
/// `idx` may take as one vector, aligned to the vector's size (at most
/// 16 bytes, runAlign): the layout's run (runLength) where every buffer
/// a GPU kernel gets is 16-byte aligned (the runtime's CUDA launch
/// refuses other pointers, KernelSupport.cpp checkLaunch, and allocates
/// its scratch 256-byte aligned), the memref is row-major with the tile's
/// columns innermost, and both the static row length and the tile's first
/// column are multiples of the run (isMultipleIndex); else 1. Such loads
/// and stores are one instruction per run instead of one per element (the
/// MTA head mixes read every source tile of the group; the rope kernels
/// move 16 bytes a thread; FoX's records kernel stores bf16 pairs).
int64_t vectorRun(MemRefType mem, RankedTensorType type, ValueRange indices,
                  ArrayRef<int64_t> dims) {
  const int64_t n = runLength(type);
  if (n < 2 || !mem.getLayout().isIdentity() || dims[1] != mem.getRank() - 1)
    return 1;
  int64_t rowLength = mem.getDimSize(dims[1]);
  if (ShapedType::isDynamic(rowLength) || rowLength % n != 0 ||
      !isMultipleIndex(indices[dims[1]], n))
    return 1;
  return n;
}

/// The alignment a run of `n` elements of `elt` takes (vectorRun): its
/// size, at most the 16 bytes every buffer is aligned to.
llvm::MaybeAlign runAlign(Type elt, int64_t n) {
  if (n < 2)
    return llvm::MaybeAlign();
  return llvm::Align(
      std::min<int64_t>(16, n * elt.getIntOrFloatBitWidth() / 8));
}

/// Whether registers list[k .. k + n) (register indices, in order) of `map`
/// are one run: n consecutive columns of one row from a column offset that
/// is a multiple of n.
bool isRun(const RegisterMap &map, ArrayRef<int64_t> list, size_t k,
           int64_t n) {
  if (n < 2 || k + n > list.size())
    return false;
  const auto &first = map.offsets[list[k]];
  if (first[1] % n != 0)
    return false;
  for (int64_t e = 1; e < n; ++e) {
    const auto &o = map.offsets[list[k + e]];
    if (o[0] != first[0] || o[1] != first[1] + e)
      return false;
  }
  return true;
}

/// The n consecutive elements at `at` as one vector load of n `elt`s
/// (a run, isRun), appended to `out` one by one.
void loadRun(OpBuilder &b, Location loc, Value base, ValueRange at, Type elt,
             int64_t n, SmallVectorImpl<Value> &out) {
  Value v = vector::LoadOp::create(b, loc, VectorType::get({n}, elt), base, at,
                                   /*nontemporal=*/false, runAlign(elt, n));
  for (int64_t e = 0; e < n; ++e)
    out.push_back(vector::ExtractOp::create(b, loc, v, e));
}

/// A 1-D slice tile: the elements the thread's registers stand for, one
/// scalar load each (threads replicating an element load it alike),
/// bounds-checked one by one only where the thread's slice is not wholly
/// inside the memref.
struct LoadSliceRegisters : OpConversionPattern<blk::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::LoadOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    std::string why = unsupportedReason(op);
    auto type = op.getResult().getType();
    if (type.getRank() != 1)
      return rw.notifyMatchFailure(op, "not a 1-D tile");
    auto map = registerMap(type, false, why);
    if (!why.empty() || failed(map))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    Value base = adaptor.getBase().front();
    SmallVector<Value> idx = singleValues(adaptor.getIndices());
    const int64_t dim = op.getDims()[0];
    Value first = arith::AddIOp::create(rw, loc, idx[dim],
                                        threadBase(rw, loc, type, false)[0]);
    Value limit = memref::DimOp::create(rw, loc, base, dim);
    Type elt = type.getElementType();
    Value pad = arith::ConstantOp::create(
        rw, loc, rw.getFloatAttr(elt, op.getPadding().convertToDouble()));
    using P = arith::CmpIPredicate;
    auto loadAt = [&](Value pos) {
      SmallVector<Value> at = idx;
      at[dim] = pos;
      return memref::LoadOp::create(rw, loc, base, at).getResult();
    };
    // The thread's whole slice is in bounds on every tile but those at a
    // sequence's ends: one test for all its registers picks plain loads,
    // the per-element guards only run on the tiles that need them.
    auto byOffset = [](const auto &x, const auto &y) { return x[0] < y[0]; };
    const int64_t lo = (*llvm::min_element(map->offsets, byOffset))[0],
                  hi = (*llvm::max_element(map->offsets, byOffset))[0];
    Value allIn = arith::AndIOp::create(
        rw, loc,
        arith::CmpIOp::create(rw, loc, P::sge,
                              arith::AddIOp::create(rw, loc, first, c(lo)),
                              c(0)),
        arith::CmpIOp::create(rw, loc, P::slt,
                              arith::AddIOp::create(rw, loc, first, c(hi)),
                              limit));
    SmallVector<Type> types(map->offsets.size(), elt);
    auto whole = scf::IfOp::create(rw, loc, types, allIn, true);
    {
      OpBuilder::InsertionGuard g(rw);
      rw.setInsertionPointToStart(whole.thenBlock());
      SmallVector<Value> plain;
      for (const auto &o : map->offsets)
        plain.push_back(loadAt(arith::AddIOp::create(rw, loc, first, c(o[0]))));
      scf::YieldOp::create(rw, loc, plain);
      rw.setInsertionPointToStart(whole.elseBlock());
      SmallVector<Value> guarded;
      for (const auto &o : map->offsets) {
        Value pos = arith::AddIOp::create(rw, loc, first, c(o[0]));
        Value ok = inRange(rw, loc, pos, limit);
        auto guard = scf::IfOp::create(rw, loc, TypeRange{elt}, ok, true);
        OpBuilder::InsertionGuard g2(rw);
        rw.setInsertionPointToStart(guard.thenBlock());
        scf::YieldOp::create(rw, loc, ValueRange{loadAt(pos)});
        rw.setInsertionPointToStart(guard.elseBlock());
        scf::YieldOp::create(rw, loc, ValueRange{pad});
        guarded.push_back(guard.getResult(0));
      }
      scf::YieldOp::create(rw, loc, guarded);
    }
    rw.replaceOpWithMultiple(op, {SmallVector<Value>(whole.getResults())});
    return success();
  }
};

/// A 2-D tile in an mma accumulator layout (PaTH's f32 query and keys
/// the transport starts from): the inverse of StoreRegisters, one scalar
/// load per register, rows outside the memref reading the padding (one
/// scf.if per row a thread's registers sit on).
struct LoadTileRegisters : OpConversionPattern<blk::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::LoadOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto type = op.getResult().getType();
    if (type.getRank() != 2)
      return rw.notifyMatchFailure(op, "not a 2-D tile");
    std::string why = unsupportedReason(op);
    auto map = registerMap(type, false, why);
    if (!why.empty() || failed(map))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    Value base = adaptor.getBase().front();
    SmallVector<Value> idx = singleValues(adaptor.getIndices());
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<Value> thread = threadBase(rw, loc, type, false);
    Value row0 = arith::AddIOp::create(rw, loc, idx[dims[0]], thread[0]);
    Value col0 = arith::AddIOp::create(rw, loc, idx[dims[1]], thread[1]);
    Value limit = memref::DimOp::create(rw, loc, base, dims[0]);
    Type elt = type.getElementType();
    Value pad = arith::ConstantOp::create(
        rw, loc, rw.getFloatAttr(elt, op.getPadding().convertToDouble()));
    auto mem = cast<MemRefType>(op.getBase().getType());
    const bool wholeRows = columnsInside(mem, type, op.getIndices(), dims);
    Value colLimit = memref::DimOp::create(rw, loc, base, dims[1]);
    std::map<int64_t, SmallVector<int64_t>> byRow;
    for (auto [i, o] : llvm::enumerate(map->offsets))
      byRow[o[0]].push_back(i);
    // A column outside the memref reads the padding: its address is
    // clamped into the row and the value replaced.
    auto loadAt = [&](SmallVector<Value> at) -> Value {
      if (wholeRows || op.getInBounds())
        return memref::LoadOp::create(rw, loc, base, at);
      Value col = at[dims[1]];
      Value ok = inRange(rw, loc, col, colLimit);
      at[dims[1]] = arith::MinSIOp::create(
          rw, loc, arith::MaxSIOp::create(rw, loc, col, c(0)),
          arith::SubIOp::create(rw, loc, colLimit, c(1)));
      Value v = memref::LoadOp::create(rw, loc, base, at);
      return arith::SelectOp::create(rw, loc, ok, v, pad);
    };
    SmallVector<Value> regs(map->numRegs());
    // in_bounds (a scratch the lowering sized itself): no guard at all,
    // and aligned column pairs as one vector load.
    const int64_t run = vectorRun(mem, type, op.getIndices(), dims);
    if (op.getInBounds()) {
      const auto &offs = map->offsets;
      SmallVector<int64_t> all = llvm::to_vector(
          llvm::seq<int64_t>(0, static_cast<int64_t>(offs.size())));
      for (size_t i = 0; i < offs.size(); ++i) {
        SmallVector<Value> at = idx;
        at[dims[0]] = arith::AddIOp::create(rw, loc, row0, c(offs[i][0]));
        at[dims[1]] = arith::AddIOp::create(rw, loc, col0, c(offs[i][1]));
        if (isRun(*map, all, i, run)) {
          SmallVector<Value> vals;
          loadRun(rw, loc, base, at, elt, run, vals);
          for (int64_t e = 0; e < run; ++e)
            regs[i + e] = vals[e];
          i += run - 1;
          continue;
        }
        regs[i] = loadAt(at);
      }
      rw.replaceOpWithMultiple(op, {regs});
      return success();
    }
    for (auto &[dr, list] : byRow) {
      Value row = arith::AddIOp::create(rw, loc, row0, c(dr));
      Value ok = inRange(rw, loc, row, limit);
      SmallVector<Type> types(list.size(), elt);
      auto guard = scf::IfOp::create(rw, loc, types, ok, true);
      OpBuilder::InsertionGuard g(rw);
      rw.setInsertionPointToStart(guard.thenBlock());
      SmallVector<Value> loaded;
      for (size_t k = 0; k < list.size(); ++k) {
        int64_t i = list[k], dc = map->offsets[i][1];
        SmallVector<Value> at = idx;
        at[dims[0]] = row;
        at[dims[1]] = arith::AddIOp::create(rw, loc, col0, c(dc));
        // Columns statically inside: an aligned run is one vector load.
        if (wholeRows && isRun(*map, list, k, run)) {
          loadRun(rw, loc, base, at, elt, run, loaded);
          k += run - 1;
          continue;
        }
        loaded.push_back(loadAt(at));
      }
      scf::YieldOp::create(rw, loc, loaded);
      rw.setInsertionPointToStart(guard.elseBlock());
      scf::YieldOp::create(rw, loc, SmallVector<Value>(list.size(), pad));
      for (auto [k, i] : llvm::enumerate(list))
        regs[i] = guard.getResult(k);
    }
    rw.replaceOpWithMultiple(op, {regs});
    return success();
  }
};

/// One element of `op` at `at`: a store, or an atomic add of a reducing
/// store.
void storeElement(OpBuilder &b, Location loc, blk::StoreOp op, Value v,
                  Value base, ValueRange at) {
  if (op.getAdd())
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, v, base,
                                at);
  else
    memref::StoreOp::create(b, loc, v, base, at);
}

/// A 1-D slice tile: one bounds-checked scalar store per register (the
/// inverse of LoadSliceRegisters).
struct StoreSliceRegisters : OpConversionPattern<blk::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::StoreOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    auto type = op.getValue().getType();
    if (type.getRank() != 1)
      return rw.notifyMatchFailure(op, "not a 1-D tile");
    std::string why = unsupportedReason(op);
    auto map = registerMap(type, false, why);
    if (!why.empty() || failed(map))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    Value base = adaptor.getBase().front();
    SmallVector<Value> idx = singleValues(adaptor.getIndices());
    const int64_t dim = op.getDims()[0];
    Value first = arith::AddIOp::create(rw, loc, idx[dim],
                                        threadBase(rw, loc, type, false)[0]);
    Value limit = memref::DimOp::create(rw, loc, base, dim);
    ValueRange regs = adaptor.getValue();
    OpBuilder::InsertionGuard owner(rw);
    if (op.getAdd()) {
      auto only = scf::IfOp::create(
          rw, loc, TypeRange{},
          sliceOwner(rw, loc, cast<blk::SliceLayoutAttr>(type.getEncoding())),
          false);
      rw.setInsertionPointToStart(only.thenBlock());
    }
    for (auto [i, o] : llvm::enumerate(map->offsets)) {
      Value pos = arith::AddIOp::create(rw, loc, first, c(o[0]));
      Value ok = inRange(rw, loc, pos, limit);
      auto guard = scf::IfOp::create(rw, loc, TypeRange{}, ok, false);
      OpBuilder::InsertionGuard g(rw);
      rw.setInsertionPointToStart(guard.thenBlock());
      SmallVector<Value> at = idx;
      at[dim] = pos;
      storeElement(rw, loc, op, regs[i], base, at);
    }
    rw.eraseOp(op);
    return success();
  }
};

struct StoreRegisters : OpConversionPattern<blk::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(blk::StoreOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    std::string why = unsupportedReason(op);
    auto type = op.getValue().getType();
    if (type.getRank() != 2)
      return rw.notifyMatchFailure(op, "not a 2-D tile");
    auto map = registerMap(type, false, why);
    if (!why.empty() || failed(map))
      return rw.notifyMatchFailure(op, why);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rw, loc, v);
    };
    Value base = adaptor.getBase().front();
    SmallVector<Value> idx = singleValues(adaptor.getIndices());
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<Value> thread = threadBase(rw, loc, type, false);
    Value row0 = arith::AddIOp::create(rw, loc, idx[dims[0]], thread[0]);
    Value col0 = arith::AddIOp::create(rw, loc, idx[dims[1]], thread[1]);
    Value limit = memref::DimOp::create(rw, loc, base, dims[0]);
    ValueRange regs = adaptor.getValue();
    // Registers by row offset, in register order.
    std::map<int64_t, SmallVector<int64_t>> byRow;
    for (auto [i, o] : llvm::enumerate(map->offsets))
      byRow[o[0]].push_back(i);
    Type elt = type.getElementType();
    // A run is one store, aligned where vectorRun allows; an mma pair is
    // one 2-element store even unaligned (the element's alignment).
    const int64_t len = runLength(type);
    auto mem = cast<MemRefType>(op.getBase().getType());
    const bool aligned = vectorRun(mem, type, op.getIndices(), dims) == len;
    // Columns the memref may not hold (a tile wider than its rows: the GPU
    // forms' padded head dims) are stored element by element, each guarded.
    const bool guardColumns =
        !op.getInBounds() && !columnsInside(mem, type, op.getIndices(), dims);
    Value colLimit =
        guardColumns ? memref::DimOp::create(rw, loc, base, dims[1]).getResult()
                     : Value();
    for (auto &[dr, list] : byRow) {
      Value row = arith::AddIOp::create(rw, loc, row0, c(dr));
      OpBuilder::InsertionGuard g(rw);
      // in_bounds (a scratch the lowering sized itself): no row guard.
      if (!op.getInBounds()) {
        Value ok = inRange(rw, loc, row, limit);
        auto guard = scf::IfOp::create(rw, loc, TypeRange{}, ok, false);
        rw.setInsertionPointToStart(guard.thenBlock());
      }
      for (size_t k = 0; k < list.size(); ++k) {
        int64_t i = list[k];
        int64_t dc = map->offsets[i][1];
        SmallVector<Value> at = idx;
        at[dims[0]] = row;
        at[dims[1]] = arith::AddIOp::create(rw, loc, col0, c(dc));
        // A reducing store adds element by element.
        const int64_t n = !op.getAdd() && !guardColumns &&
                                  isRun(*map, list, k, len) &&
                                  (aligned || len == 2)
                              ? len
                              : 1;
        if (n > 1) {
          SmallVector<Value> vals;
          for (int64_t e = 0; e < n; ++e)
            vals.push_back(regs[list[k + e]]);
          vector::StoreOp::create(rw, loc,
                                  vector::FromElementsOp::create(
                                      rw, loc, VectorType::get({n}, elt), vals),
                                  base, at, /*nontemporal=*/false,
                                  runAlign(elt, aligned ? n : 1));
          k += n - 1;
        } else if (guardColumns) {
          Value col = at[dims[1]];
          Value ok = inRange(rw, loc, col, colLimit);
          auto inside = scf::IfOp::create(rw, loc, TypeRange{}, ok, false);
          OpBuilder::InsertionGuard inner(rw);
          rw.setInsertionPointToStart(inside.thenBlock());
          storeElement(rw, loc, op, regs[i], base, at);
        } else {
          storeElement(rw, loc, op, regs[i], base, at);
        }
      }
    }
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attn::blockgpu::populateLoadStorePatterns(
    BlockTypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<StoreRegisters, StoreSliceRegisters, LoadSliceRegisters,
               LoadTileRegisters>(tc, patterns.getContext());
}
