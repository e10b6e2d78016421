//===- LowerToReference.cpp - naive executable semantics of attn ----------===//
//
// Every attn op becomes loops over buffers that follow its documented
// formula. The algorithms are deliberately simple and, where the oracle in
// reference/ uses one formulation, this file uses another (PaTH here
// transports the *keys* forward in time, the oracle walks the query backward)
// so the two do not share mistakes.
//
//===----------------------------------------------------------------------===//

#include "RefBuilder.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Passes/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOREFERENCE
#include "attn/Passes/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using arith::CmpFPredicate;
using arith::CmpIPredicate;

namespace {

/// Reads a tensor operand as a buffer of the same shape.
Value asBuffer(RefBuilder &r, Value tensor) {
  auto t = cast<RankedTensorType>(tensor.getType());
  auto type = MemRefType::get(t.getShape(), t.getElementType());
  return bufferization::ToBufferOp::create(r.builder(), r.location(), type,
                                           tensor, /*read_only=*/true);
}

/// Allocates the result buffer of `resultType`; each dynamic dim i takes its
/// size from `sizeOf(i)`.
Value allocResult(RefBuilder &r, RankedTensorType resultType,
                  llvm::function_ref<Value(int64_t)> sizeOf) {
  SmallVector<Value> dyn;
  for (int64_t i = 0; i < resultType.getRank(); ++i)
    if (resultType.isDynamicDim(i))
      dyn.push_back(sizeOf(i));
  return r.alloc(
      MemRefType::get(resultType.getShape(), resultType.getElementType()), dyn);
}

/// Replaces `op`'s results by the tensor views of the filled buffers `outs`,
/// one per result.
void replaceWithBuffer(PatternRewriter &rewriter, Operation *op,
                       ValueRange outs) {
  SmallVector<Value> tensors;
  for (auto [result, out] : llvm::zip_equal(op->getResults(), outs))
    tensors.push_back(bufferization::ToTensorOp::create(
        rewriter, op->getLoc(), result.getType(), out,
        /*restrict=*/true, /*writable=*/true));
  rewriter.replaceOp(op, tensors);
}

/// The buffer of `result`, sized like the buffer `like` (a gradient has its
/// primal operand's shape).
Value allocLike(RefBuilder &r, Value result, Value like) {
  return allocResult(r, cast<RankedTensorType>(result.getType()),
                     [&](int64_t i) { return r.dim(like, i); });
}

/// Stores 0 at every element of the nest `ubs` of `mem`, offset by the
/// leading indices `lead`.
void zeroFill(RefBuilder &r, Value mem, ValueRange lead, ArrayRef<Value> ubs) {
  r.nest(ubs, [&](ValueRange iv) {
    SmallVector<Value> at(lead);
    at.append(iv.begin(), iv.end());
    r.store(r.f32(0.0), mem, at);
  });
}

/// The result buffer of every result of `op`, result n shaped like the
/// buffer `like[n]`.
SmallVector<Value> allocResultsLike(RefBuilder &r, Operation *op,
                                    ArrayRef<Value> like) {
  SmallVector<Value> outs;
  for (auto [result, mem] : llvm::zip_equal(op->getResults(), like))
    outs.push_back(allocLike(r, result, mem));
  return outs;
}

/// Stores 0 to every element of `mem`: gradients summed over rows are
/// accumulated in place.
void zeroFill(RefBuilder &r, Value mem) {
  SmallVector<Value> ubs;
  for (int64_t i = 0; i < cast<MemRefType>(mem.getType()).getRank(); ++i)
    ubs.push_back(r.dim(mem, i));
  zeroFill(r, mem, ValueRange(), ubs);
}

/// The four loop bounds [d0, d1, d2, d3] of a rank-4 buffer.
SmallVector<Value> dims4(RefBuilder &r, Value mem) {
  return {r.dim(mem, 0), r.dim(mem, 1), r.dim(mem, 2), r.dim(mem, 3)};
}

//===----------------------------------------------------------------------===//
// attn.rope
//===----------------------------------------------------------------------===//

struct LowerRope : OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RopeOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput());
    Value pos = op.getPositions() ? asBuffer(r, op.getPositions()) : Value();
    auto type = cast<RankedTensorType>(op.getType());
    Value out = allocResult(r, type, [&](int64_t i) { return r.dim(x, i); });
    int64_t d = type.getDimSize(3), rot = op.getRotaryDimOrHeadDim();
    int64_t half = rot / 2;
    bool interleaved = op.getStyle() == RopeStyle::interleaved;
    double logTheta = std::log(op.getTheta().convertToDouble());
    SmallVector<Value> ubs = dims4(r, x);
    r.nest({ubs[0], ubs[1], ubs[2]}, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], t = iv[2];
      // Angles in f64: positions reach 1e5 and f32 would lose the phase.
      Value p;
      if (pos) {
        Value p64 = memref::LoadOp::create(rewriter, r.location(), pos, t);
        p = arith::SIToFPOp::create(rewriter, r.location(),
                                    rewriter.getF64Type(), p64);
      } else {
        p = r.indexToF64(r.iadd(t, r.idx(op.getOffset())));
      }
      // The inverse rotation turns every pair by the opposite angle.
      if (op.getInverse())
        p = r.mul(p, r.f64(-1.0));
      r.loop(r.idx(half), [&](Value i) {
        // inv_freq = theta^(-2i/rot) = exp(-2i/rot * ln theta)
        Value e = r.mul(r.indexToF64(i), r.f64(-2.0 * logTheta / rot));
        Value angle = r.mul(p, r.exp(e));
        Value c = r.toF32(math::CosOp::create(rewriter, r.location(), angle));
        Value s = r.toF32(math::SinOp::create(rewriter, r.location(), angle));
        Value ia = interleaved ? r.imul(i, r.idx(2)) : i;
        Value ib = interleaved ? r.iadd(ia, r.idx(1)) : r.iadd(i, r.idx(half));
        Value a = r.load(x, {b, h, t, ia}), bb = r.load(x, {b, h, t, ib});
        r.store(r.sub(r.mul(a, c), r.mul(bb, s)), out, {b, h, t, ia});
        r.store(r.add(r.mul(a, s), r.mul(bb, c)), out, {b, h, t, ib});
      });
      r.loop(r.idx(rot), r.idx(d), [&](Value k) {
        r.store(r.load(x, {b, h, t, k}), out, {b, h, t, k});
      });
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.scores
//===----------------------------------------------------------------------===//

/// True (i1) when key j is visible from the query at position pi.
Value visibleKey(RefBuilder &r, MaskKind mask, int64_t window, Value pi,
                 Value j) {
  if (mask == MaskKind::none)
    return r.cmpi(CmpIPredicate::sge, j, r.idx(0));
  Value ok = r.cmpi(CmpIPredicate::sle, j, pi);
  if (mask == MaskKind::sliding_window)
    ok = r.andi(ok, r.cmpi(CmpIPredicate::sgt, j, r.isub(pi, r.idx(window))));
  return ok;
}

/// The key mask of attn.scores and its gradient: the mask kind and window
/// and, with packed sequences, every token's sequence index.
struct KeyMask {
  MaskKind mask;
  int64_t window;
  Value seq; ///< index buffer [S] (null without cu_seqlens)
  Value s;   ///< S

  /// True (i1) when key j (in [0, S)) is visible from the query at
  /// position pi.
  Value visible(RefBuilder &r, Value pi, Value j) const {
    Value ok = visibleKey(r, mask, window, pi, j);
    if (!seq)
      return ok;
    Value last = r.isub(s, r.idx(1));
    Value si = r.load(seq, {r.clamp(pi, r.idx(0), last)});
    Value sj = r.load(seq, {r.clamp(j, r.idx(0), last)});
    return r.andi(ok, r.cmpi(CmpIPredicate::eq, si, sj));
  }
};

/// An index buffer [S] holding at each position of the sequences `cu`
/// (cu_seqlens' buffer, N + 1 offsets) packs `value(n, lo)` of its sequence
/// n, which starts at lo, and `outside` elsewhere. Offsets are clamped into
/// [0, S]: the runtime refuses bad ones, and a program computing them gets
/// a wrong mask, never a wild store.
Value perSequence(RefBuilder &r, Value cu, Value s, Value outside,
                  function_ref<Value(Value, Value)> value) {
  OpBuilder &b = r.builder();
  Value buf =
      r.alloc(MemRefType::get({ShapedType::kDynamic}, b.getIndexType()), {s});
  r.loop(s, [&](Value t) { r.store(outside, buf, {t}); });
  auto offset = [&](Value n, Value lo) {
    Value c = arith::IndexCastOp::create(b, r.location(), b.getIndexType(),
                                         r.load(cu, {n}));
    return r.clamp(c, lo, s);
  };
  r.loop(r.isub(r.dim(cu, 0), r.idx(1)), [&](Value n) {
    Value lo = offset(n, r.idx(0));
    Value hi = offset(r.iadd(n, r.idx(1)), lo);
    Value v = value(n, lo);
    r.loop(lo, hi, [&](Value t) { r.store(v, buf, {t}); });
  });
  return buf;
}

/// `cu` (cu_seqlens' buffer, or null) as KeyMask's sequence indices.
KeyMask keyMask(RefBuilder &r, MaskKind mask, int64_t window, Value cu,
                Value s) {
  KeyMask m{mask, window, Value(), s};
  if (cu)
    m.seq = perSequence(r, cu, s, r.idx(-1), [](Value n, Value) { return n; });
  return m;
}

/// One step of PaTH's key transport (decode form, spec/path_fox.md §1.4):
/// at time tau every earlier key kt[j] ([S, D] buffer) is hit by H_tau,
/// then k_tau joins unchanged. After the steps 0..tau, kt[j] holds
/// H_tau ... H_{j+1} k_j.
void transportKeys(RefBuilder &r, Value kt, Value k, Value w, Value beta,
                   Value b, Value kh, Value tau, int64_t d) {
  Value dIdx = r.idx(d);
  Value bt = r.load(beta, {b, kh, tau});
  r.loop(tau, [&](Value j) {
    Value proj = r.reduce(dIdx, r.f32(0.0), [&](Value e, Value acc) {
      return r.add(acc, r.mul(r.load(w, {b, kh, tau, e}), r.load(kt, {j, e})));
    });
    Value coef = r.mul(bt, proj);
    r.loop(dIdx, [&](Value e) {
      Value upd =
          r.sub(r.load(kt, {j, e}), r.mul(coef, r.load(w, {b, kh, tau, e})));
      r.store(upd, kt, {j, e});
    });
  });
  r.loop(dIdx, [&](Value e) {
    r.store(r.load(k, {b, kh, tau, e}), kt, {tau, e});
  });
}

struct LowerScores : OpRewritePattern<ScoresOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScoresOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value q = asBuffer(r, op.getQ()), k = asBuffer(r, op.getK());
    Value w = op.getW() ? asBuffer(r, op.getW()) : Value();
    Value beta = op.getBeta() ? asBuffer(r, op.getBeta()) : Value();
    Value g = op.getG() ? asBuffer(r, op.getG()) : Value();
    Value bDim = r.dim(q, 0), hq = r.dim(q, 1), t = r.dim(q, 2);
    Value hk = r.dim(k, 1), s = r.dim(k, 2);
    int64_t d = cast<ShapedType>(op.getQ().getType()).getDimSize(3);
    Value dIdx = r.idx(d);
    Value group = r.idiv(hq, hk), off = r.isub(s, t);
    auto type = cast<RankedTensorType>(op.getType());
    Value out = allocResult(r, type, [&](int64_t i) {
      return SmallVector<Value>{bDim, hq, t, s}[i];
    });
    double scale = op.getScaleOrDefault();
    Value scaleV = r.f32(scale);
    double gamma = op.getGateScaled() ? scale : 1.0;
    KeyMask keys = keyMask(
        r, op.getMask(), op.getWindow().value_or(0),
        op.getCuSeqlens() ? asBuffer(r, op.getCuSeqlens()) : Value(), s);

    // Inclusive cumsum of the log forget gate, in f64: G_i - G_j cancels.
    Value cum;
    if (g) {
      cum = r.alloc(
          MemRefType::get({ShapedType::kDynamic}, rewriter.getF64Type()), {s});
    }
    // PaTH workspace: every key transported to the current time, [S, D].
    Value kt;
    if (w) {
      kt = r.alloc(
          MemRefType::get({ShapedType::kDynamic, d}, rewriter.getF32Type()),
          {s});
    }

    // logit = s * dot + gamma * (G[pi] - G[j]) or -inf.
    auto finish = [&](Value dot, Value pi, Value j) -> Value {
      Value logit = r.mul(scaleV, dot);
      if (g) {
        Value gi = memref::LoadOp::create(rewriter, r.location(), cum, pi);
        Value gj = memref::LoadOp::create(rewriter, r.location(), cum, j);
        Value diff = r.toF32(r.mul(r.f64(gamma), r.sub(gi, gj)));
        logit = r.add(logit, diff);
      }
      return r.select(keys.visible(r, pi, j), logit, r.negInf());
    };

    r.nest({bDim, hq}, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], kh = r.idiv(h, group);
      if (g) {
        r.reduce(s, r.f64(0.0), [&](Value j, Value acc) {
          Value next = r.add(acc, r.toF64(r.load(g, {b, h, j})));
          memref::StoreOp::create(rewriter, r.location(), next, cum, j);
          return next;
        });
      }
      if (!w) {
        r.nest({t, s}, [&](ValueRange ij) {
          Value i = ij[0], j = ij[1];
          Value dot = r.reduce(dIdx, r.f32(0.0), [&](Value e, Value acc) {
            return r.add(
                acc, r.mul(r.load(q, {b, h, i, e}), r.load(k, {b, kh, j, e})));
          });
          r.store(finish(dot, r.iadd(i, off), j), out, {b, h, i, j});
        });
        return;
      }
      // PaTH: the query at position tau sees keys already transported
      // through H_tau ... H_{j+1}.
      r.loop(s, [&](Value tau) {
        transportKeys(r, kt, k, w, beta, b, kh, tau, d);
        // The query row at position tau, if any.
        Value isQuery = r.cmpi(CmpIPredicate::sge, tau, off);
        auto ifOp = scf::IfOp::create(rewriter, r.location(), isQuery);
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        Value i = r.isub(tau, off);
        r.loop(s, [&](Value j) {
          Value jc = r.clamp(j, r.idx(0), tau);
          Value dot = r.reduce(dIdx, r.f32(0.0), [&](Value e, Value acc) {
            return r.add(acc,
                         r.mul(r.load(q, {b, h, i, e}), r.load(kt, {jc, e})));
          });
          r.store(finish(dot, tau, j), out, {b, h, i, j});
        });
      });
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.kq_conv
//===----------------------------------------------------------------------===//

/// The cells of a [B, H, T, S] map that the MTA pieces read and write: on
/// or left of the diagonal (j <= i + off, off = S - T) and, with packed
/// sequences, at or right of the row's sequence start.
struct ScoreCells {
  Value x;      ///< the map
  Value off;    ///< S - T
  Value starts; ///< index buffer [S]: each position's sequence start, or null

  /// The first key row `i` sees (0 without packed sequences); i is clamped
  /// into the map.
  Value rowStart(RefBuilder &r, Value i) const {
    if (!starts)
      return r.idx(0);
    return r.load(starts,
                  {r.clamp(i, r.idx(0), r.isub(r.dim(x, 2), r.idx(1)))});
  }
  /// True (i1) where output (i, j) is outside: right of the diagonal or
  /// before the row's sequence start.
  Value outside(RefBuilder &r, Value i, Value j) const {
    Value right = r.cmpi(CmpIPredicate::sgt, j, r.iadd(i, off));
    if (!starts)
      return right;
    return r.ori(right, r.cmpi(CmpIPredicate::slt, j, rowStart(r, i)));
  }
  /// Cell (i, j) of `map` (x's shape) for an output row whose first key is
  /// `lo`: (ok, entry), ok (i1) when it lies in the map, on or left of the
  /// diagonal and at or after `lo`; the entry is read at indices clamped
  /// into the map (zero padding: (i, j) may lie outside).
  std::pair<Value, Value> load(RefBuilder &r, Value map, Value b, Value h,
                               Value i, Value j, Value lo) const {
    Value t = r.dim(map, 2), s = r.dim(map, 3);
    Value ok = r.andi(r.andi(r.cmpi(CmpIPredicate::sge, i, r.idx(0)),
                             r.cmpi(CmpIPredicate::slt, i, t)),
                      r.andi(r.cmpi(CmpIPredicate::sge, j, lo),
                             r.cmpi(CmpIPredicate::slt, j, s)));
    ok = r.andi(ok, r.cmpi(CmpIPredicate::sle, j, r.iadd(i, off)));
    Value ci = r.clamp(i, r.idx(0), r.isub(t, r.idx(1)));
    Value cj = r.clamp(j, r.idx(0), r.isub(s, r.idx(1)));
    return {ok, r.load(map, {b, h, ci, cj})};
  }
  /// (ok, value): the entry of cell (i, j) of `map` that output row i sees
  /// (lo = rowStart(i)), else 0 (selected, never multiplied: it may hold
  /// NaN).
  std::pair<Value, Value> own(RefBuilder &r, Value map, Value b, Value h,
                              Value i, Value j) const {
    auto [ok, v] = load(r, map, b, h, i, j, rowStart(r, i));
    return {ok, r.select(ok, v, r.f32(0.0))};
  }
  /// x's cell as the MTA pieces read their input (Mask_0) for an output
  /// row whose first key is `lo`: a cell of load() that is not -inf, else 0.
  /// A NaN cell is inside (UNE): it reaches every output whose stencil
  /// covers it, as in the oracle.
  std::pair<Value, Value> source(RefBuilder &r, Value b, Value h, Value i,
                                 Value j, Value lo) const {
    auto [inside, v] = load(r, x, b, h, i, j, lo);
    inside = r.andi(inside, r.cmpf(CmpFPredicate::UNE, v, r.negInf()));
    return {inside, r.select(inside, v, r.f32(0.0))};
  }
};

/// The cells of the map `x` (a buffer) of an MTA piece whose cu_seqlens
/// operand is `cu` (null without): each position's sequence start.
ScoreCells scoreCells(RefBuilder &r, Value x, Value cu) {
  Value s = r.dim(x, 3);
  ScoreCells cells{x, r.isub(s, r.dim(x, 2)), Value()};
  if (cu)
    cells.starts =
        perSequence(r, cu, s, r.idx(0), [](Value, Value lo) { return lo; });
  return cells;
}

/// `op`'s cu_seqlens as a buffer, or null.
template <typename OpT> Value cuBuffer(RefBuilder &r, OpT op) {
  return op.getCuSeqlens() ? asBuffer(r, op.getCuSeqlens()) : Value();
}

struct LowerKqConv : OpRewritePattern<KqConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(KqConvOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), th = asBuffer(r, op.getKernel());
    auto kType = cast<ShapedType>(op.getKernel().getType());
    int64_t cq = kType.getDimSize(1), ck = kType.getDimSize(2);
    int64_t p = cq - 1, c = (ck - 1) / 2;
    SmallVector<Value> ubs = dims4(r, x);
    ScoreCells cells = scoreCells(r, x, cuBuffer(r, op));
    Value out = allocResult(r, cast<RankedTensorType>(op.getType()),
                            [&](int64_t i) { return ubs[i]; });
    Value masked = op.getStage() == Stage::pre ? r.negInf() : r.f32(0.0);
    r.nest(ubs, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], i = iv[2], j = iv[3];
      Value lo = cells.rowStart(r, i);
      Value conv = r.reduce(r.idx(cq), r.f32(0.0), [&](Value a, Value acc) {
        Value si = r.iadd(r.isub(i, r.idx(p)), a);
        return r.reduce(r.idx(ck), acc, [&](Value bb, Value acc2) {
          Value sj = r.iadd(r.isub(j, r.idx(c)), bb);
          Value src = cells.source(r, b, h, si, sj, lo).second;
          return r.add(acc2, r.mul(r.load(th, {h, a, bb}), src));
        });
      });
      r.store(r.select(cells.outside(r, i, j), masked, conv), out,
              {b, h, i, j});
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.head_mix
//===----------------------------------------------------------------------===//

struct LowerHeadMix : OpRewritePattern<HeadMixOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HeadMixOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), wm = asBuffer(r, op.getWeight());
    Value ch = r.dim(wm, 1);
    SmallVector<Value> ubs = dims4(r, x);
    ScoreCells cells = scoreCells(r, x, cuBuffer(r, op));
    Value out = allocResult(r, cast<RankedTensorType>(op.getType()),
                            [&](int64_t i) { return ubs[i]; });
    Value masked = op.getStage() == Stage::pre ? r.negInf() : r.f32(0.0);
    r.nest(ubs, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], i = iv[2], j = iv[3];
      Value g0 = r.imul(r.idiv(h, ch), ch);
      Value mix = r.reduce(ch, r.f32(0.0), [&](Value m, Value acc) {
        Value v = r.load(x, {b, r.iadd(g0, m), i, j});
        v = r.select(r.cmpf(CmpFPredicate::OEQ, v, r.negInf()), r.f32(0.0), v);
        return r.add(acc, r.mul(r.load(wm, {h, m}), v));
      });
      r.store(r.select(cells.outside(r, i, j), masked, mix), out, {b, h, i, j});
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.softmax
//===----------------------------------------------------------------------===//

/// Row (b, h, i) of a [B, H, T, S] map: whether every entry is -inf
/// (`dead`), the row maximum with such a row's taken as 0 (`mSafe`), and
/// sum_j exp(x_j - mSafe). Shared by softmax and logsumexp.
struct RowExpSum {
  Value dead, mSafe, sum;
};
RowExpSum rowExpSum(RefBuilder &r, Value x, ValueRange bhi, Value s) {
  auto at = [&](Value j) -> SmallVector<Value> {
    return {bhi[0], bhi[1], bhi[2], j};
  };
  Value m = r.reduce(s, r.negInf(), [&](Value j, Value acc) {
    return r.maxf(acc, r.load(x, at(j)));
  });
  Value dead = r.cmpf(CmpFPredicate::OEQ, m, r.negInf());
  Value mSafe = r.select(dead, r.f32(0.0), m);
  Value sum = r.reduce(s, r.f32(0.0), [&](Value j, Value acc) {
    return r.add(acc, r.exp(r.sub(r.load(x, at(j)), mSafe)));
  });
  return {dead, mSafe, sum};
}

struct LowerSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput());
    SmallVector<Value> ubs = dims4(r, x);
    Value out = allocResult(r, cast<RankedTensorType>(op.getType()),
                            [&](int64_t i) { return ubs[i]; });
    r.nest({ubs[0], ubs[1], ubs[2]}, [&](ValueRange iv) {
      auto at = [&](Value j) -> SmallVector<Value> {
        return {iv[0], iv[1], iv[2], j};
      };
      // A fully masked row has m = -inf; its probabilities are 0, not NaN.
      RowExpSum row = rowExpSum(r, x, iv, ubs[3]);
      Value inv = r.select(row.dead, r.f32(0.0), r.div(r.f32(1.0), row.sum));
      // A masked entry (-inf) is exactly 0 also in a row a NaN makes NaN.
      r.loop(ubs[3], [&](Value j) {
        Value xj = r.load(x, at(j));
        r.store(r.select(r.cmpf(CmpFPredicate::OEQ, xj, r.negInf()), r.f32(0.0),
                         r.mul(r.exp(r.sub(xj, row.mSafe)), inv)),
                out, at(j));
      });
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.weighted_sum
//===----------------------------------------------------------------------===//

struct LowerWeightedSum : OpRewritePattern<WeightedSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WeightedSumOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value p = asBuffer(r, op.getProbs()), v = asBuffer(r, op.getV());
    SmallVector<Value> pd = dims4(r, p);
    Value group = r.idiv(pd[1], r.dim(v, 1));
    int64_t dv = cast<ShapedType>(op.getV().getType()).getDimSize(3);
    SmallVector<Value> ubs = {pd[0], pd[1], pd[2], r.idx(dv)};
    Value out = allocResult(r, cast<RankedTensorType>(op.getType()),
                            [&](int64_t i) { return ubs[i]; });
    r.nest(ubs, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], i = iv[2], e = iv[3];
      Value kh = r.idiv(h, group);
      // A zero probability (a masked key) is selected away, never
      // multiplied: v may hold NaN or inf there.
      Value acc = r.reduce(pd[3], r.f32(0.0), [&](Value j, Value a) {
        return r.addSkippingZero(a, r.load(p, {b, h, i, j}),
                                 r.load(v, {b, kh, j, e}));
      });
      r.store(acc, out, {b, h, i, e});
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.head_norm
//===----------------------------------------------------------------------===//

struct LowerHeadNorm : OpRewritePattern<HeadNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HeadNormOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), gamma = asBuffer(r, op.getGamma());
    Value gw = op.getGateW() ? asBuffer(r, op.getGateW()) : Value();
    Value gb = op.getGateB() ? asBuffer(r, op.getGateB()) : Value();
    SmallVector<Value> ubs = dims4(r, x);
    int64_t dv = cast<ShapedType>(op.getInput().getType()).getDimSize(3);
    Value out = allocResult(r, cast<RankedTensorType>(op.getType()),
                            [&](int64_t i) { return ubs[i]; });
    double eps = op.getEps().convertToDouble();
    r.nest({ubs[0], ubs[1], ubs[2]}, [&](ValueRange iv) {
      auto at = [&](Value e) -> SmallVector<Value> {
        return {iv[0], iv[1], iv[2], e};
      };
      Value ss = r.reduce(ubs[3], r.f32(0.0), [&](Value e, Value acc) {
        Value o = r.load(x, at(e));
        return r.add(acc, r.mul(o, o));
      });
      Value rms = r.sqrt(r.add(r.div(ss, r.f32(dv)), r.f32(eps)));
      auto normed = [&](Value e) {
        return r.mul(r.div(r.load(x, at(e)), rms), r.load(gamma, e));
      };
      Value gate = r.f32(1.0);
      if (gw) {
        Value z = r.reduce(ubs[3], r.load(gb, r.idx(0)), [&](Value e, Value a) {
          return r.add(a, r.mul(r.load(gw, e), normed(e)));
        });
        gate = r.sigmoid(z);
      }
      r.loop(ubs[3],
             [&](Value e) { r.store(r.mul(normed(e), gate), out, at(e)); });
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.short_conv and attn.l2norm
//===----------------------------------------------------------------------===//

/// short_conv's pre-activation at (b, h, t, d):
/// sum_{r < K} kernel[h, d, r] * x[b, h, t - K + 1 + r], zero before t = 0.
Value shortConvSum(RefBuilder &r, Value x, Value ker, int64_t kSize, Value b,
                   Value h, Value t, Value d) {
  return r.reduce(r.idx(kSize), r.f32(0.0), [&](Value k, Value acc) {
    Value src = r.iadd(r.isub(t, r.idx(kSize - 1)), k);
    Value ok = r.cmpi(CmpIPredicate::sge, src, r.idx(0));
    Value v = r.load(x, {b, h, r.clamp(src, r.idx(0), t), d});
    return r.add(acc,
                 r.mul(r.load(ker, {h, d, k}), r.select(ok, v, r.f32(0.0))));
  });
}

struct LowerShortConv : OpRewritePattern<ShortConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShortConvOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), ker = asBuffer(r, op.getKernel());
    int64_t kSize = cast<ShapedType>(op.getKernel().getType()).getDimSize(2);
    SmallVector<Value> ubs = dims4(r, x);
    Value out = allocResult(r, cast<RankedTensorType>(op.getType()),
                            [&](int64_t i) { return ubs[i]; });
    r.nest(ubs, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], t = iv[2], d = iv[3];
      Value y = shortConvSum(r, x, ker, kSize, b, h, t, d);
      if (op.getSilu())
        y = r.mul(y, r.sigmoid(y));
      r.store(y, out, {b, h, t, d});
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

struct LowerL2Norm : OpRewritePattern<L2NormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(L2NormOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput());
    SmallVector<Value> ubs = dims4(r, x);
    Value out = allocResult(r, cast<RankedTensorType>(op.getType()),
                            [&](int64_t i) { return ubs[i]; });
    double eps = op.getEps().convertToDouble();
    r.nest({ubs[0], ubs[1], ubs[2]}, [&](ValueRange iv) {
      auto at = [&](Value e) -> SmallVector<Value> {
        return {iv[0], iv[1], iv[2], e};
      };
      Value ss = r.reduce(ubs[3], r.f32(0.0), [&](Value e, Value acc) {
        Value v = r.load(x, at(e));
        return r.add(acc, r.mul(v, v));
      });
      Value inv = r.div(r.f32(1.0), r.sqrt(r.add(ss, r.f32(eps))));
      r.loop(ubs[3], [&](Value e) {
        r.store(r.mul(r.load(x, at(e)), inv), out, at(e));
      });
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// VJP ops and attn.logsumexp
//===----------------------------------------------------------------------===//

struct LowerSoftmaxGrad : OpRewritePattern<SoftmaxGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxGradOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value p = asBuffer(r, op.getProbs()), dp = asBuffer(r, op.getGrad());
    SmallVector<Value> ubs = dims4(r, p);
    Value out = allocResultsLike(r, op, {p})[0];
    r.nest({ubs[0], ubs[1], ubs[2]}, [&](ValueRange iv) {
      auto at = [&](Value j) -> SmallVector<Value> {
        return {iv[0], iv[1], iv[2], j};
      };
      // dx_ij = p_ij (dp_ij - sum_k p_ik dp_ik), 0 where p_ij = 0 (a masked
      // key, whose dp may be NaN).
      Value dot = r.reduce(ubs[3], r.f32(0.0), [&](Value k, Value acc) {
        return r.addSkippingZero(acc, r.load(p, at(k)), r.load(dp, at(k)));
      });
      r.loop(ubs[3], [&](Value j) {
        Value pj = r.load(p, at(j));
        Value dx = r.mul(pj, r.sub(r.load(dp, at(j)), dot));
        r.store(r.select(r.cmpf(CmpFPredicate::OEQ, pj, r.f32(0.0)), r.f32(0.0),
                         dx),
                out, at(j));
      });
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

struct LowerWeightedSumGrad : OpRewritePattern<WeightedSumGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WeightedSumGradOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value p = asBuffer(r, op.getProbs()), v = asBuffer(r, op.getV());
    Value dO = asBuffer(r, op.getGrad());
    SmallVector<Value> pd = dims4(r, p), vd = dims4(r, v);
    Value group = r.idiv(pd[1], vd[1]);
    SmallVector<Value> outs = allocResultsLike(r, op, {p, v});
    // dp_ij = dO_i . v_j, query head h reading KV head h / group.
    r.nest(pd, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], i = iv[2], j = iv[3];
      Value kh = r.idiv(h, group);
      Value dot = r.reduce(vd[3], r.f32(0.0), [&](Value e, Value acc) {
        return r.add(acc,
                     r.mul(r.load(dO, {b, h, i, e}), r.load(v, {b, kh, j, e})));
      });
      r.store(dot, outs[0], iv);
    });
    // dv_j = sum over the group's query heads h and rows i of p_ij dO_i.
    r.nest(vd, [&](ValueRange iv) {
      Value b = iv[0], kh = iv[1], j = iv[2], e = iv[3];
      Value h0 = r.imul(kh, group);
      Value acc = r.reduce(group, r.f32(0.0), [&](Value g, Value acc) {
        Value h = r.iadd(h0, g);
        return r.reduce(pd[2], acc, [&](Value i, Value a) {
          return r.addSkippingZero(a, r.load(p, {b, h, i, j}),
                                   r.load(dO, {b, h, i, e}));
        });
      });
      r.store(acc, outs[1], iv);
    });
    replaceWithBuffer(rewriter, op, outs);
    return success();
  }
};

struct LowerHeadNormGrad : OpRewritePattern<HeadNormGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HeadNormGradOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), gamma = asBuffer(r, op.getGamma());
    Value dy = asBuffer(r, op.getGrad());
    Value gw = op.getGateW() ? asBuffer(r, op.getGateW()) : Value();
    Value gb = op.getGateB() ? asBuffer(r, op.getGateB()) : Value();
    SmallVector<Value> like = {x, gamma};
    if (gw)
      like.append({gw, gb});
    SmallVector<Value> outs = allocResultsLike(r, op, like);
    for (Value mem : ArrayRef<Value>(outs).drop_front())
      zeroFill(r, mem);
    SmallVector<Value> ubs = dims4(r, x);
    int64_t dv = cast<ShapedType>(op.getInput().getType()).getDimSize(3);
    double eps = op.getEps().convertToDouble();
    r.nest({ubs[0], ubs[1], ubs[2]}, [&](ValueRange iv) {
      auto at = [&](Value e) -> SmallVector<Value> {
        return {iv[0], iv[1], iv[2], e};
      };
      auto sum = [&](Value init, llvm::function_ref<Value(Value)> term) {
        return r.reduce(ubs[3], init, [&](Value e, Value acc) {
          return r.add(acc, term(e));
        });
      };
      // Forward: inv = (mean(o^2) + eps)^(-1/2), n = o inv, u = n gamma.
      Value ss = sum(r.f32(0.0), [&](Value e) {
        return r.mul(r.load(x, at(e)), r.load(x, at(e)));
      });
      Value inv =
          r.div(r.f32(1.0), r.sqrt(r.add(r.div(ss, r.f32(dv)), r.f32(eps))));
      auto n = [&](Value e) { return r.mul(r.load(x, at(e)), inv); };
      auto u = [&](Value e) { return r.mul(n(e), r.load(gamma, e)); };
      // du = dy without a gate; with one, y = u s, s = sigmoid(w . u + b):
      // dz = (dy . u) s (1 - s), du = dy s + dz w.
      std::function<Value(Value)> du = [&](Value e) {
        return r.load(dy, at(e));
      };
      if (gw) {
        Value s = r.sigmoid(sum(r.load(gb, r.idx(0)), [&](Value e) {
          return r.mul(r.load(gw, e), u(e));
        }));
        Value dyu = sum(r.f32(0.0), [&](Value e) {
          return r.mul(r.load(dy, at(e)), u(e));
        });
        Value dz = r.mul(dyu, r.mul(s, r.sub(r.f32(1.0), s)));
        r.accumulate(dz, outs[3], r.idx(0));
        r.loop(ubs[3],
               [&](Value e) { r.accumulate(r.mul(dz, u(e)), outs[2], e); });
        du = [&, s, dz](Value e) {
          return r.add(r.mul(r.load(dy, at(e)), s), r.mul(dz, r.load(gw, e)));
        };
      }
      // dgamma += du n; dx = inv du gamma - inv^3 o ((du gamma) . o) / Dv.
      Value dno = sum(r.f32(0.0), [&](Value e) {
        return r.mul(r.mul(du(e), r.load(gamma, e)), r.load(x, at(e)));
      });
      Value c = r.div(r.mul(r.mul(inv, r.mul(inv, inv)), dno), r.f32(dv));
      r.loop(ubs[3], [&](Value e) {
        Value dn = r.mul(du(e), r.load(gamma, e));
        r.accumulate(r.mul(du(e), n(e)), outs[1], e);
        r.store(r.sub(r.mul(inv, dn), r.mul(c, r.load(x, at(e)))), outs[0],
                at(e));
      });
    });
    replaceWithBuffer(rewriter, op, outs);
    return success();
  }
};

struct LowerShortConvGrad : OpRewritePattern<ShortConvGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShortConvGradOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), ker = asBuffer(r, op.getKernel());
    Value dy = asBuffer(r, op.getGrad());
    int64_t kSize = cast<ShapedType>(op.getKernel().getType()).getDimSize(2);
    SmallVector<Value> ubs = dims4(r, x);
    SmallVector<Value> outs = allocResultsLike(r, op, {x, ker});
    // da_t: the cotangent of the pre-activation a_t (silu' = s (1 + a (1-s))).
    auto da = [&](Value b, Value h, Value t, Value d) {
      Value g = r.load(dy, {b, h, t, d});
      if (!op.getSilu())
        return g;
      Value a = shortConvSum(r, x, ker, kSize, b, h, t, d);
      Value s = r.sigmoid(a);
      Value one = r.f32(1.0);
      return r.mul(g, r.mul(s, r.add(one, r.mul(a, r.sub(one, s)))));
    };
    // dx_u = sum_r kernel[h, d, r] da_{u + K - 1 - r}, for t < T.
    Value lastT = r.isub(ubs[2], r.idx(1));
    r.nest(ubs, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], u = iv[2], d = iv[3];
      Value acc = r.reduce(r.idx(kSize), r.f32(0.0), [&](Value k, Value acc) {
        Value t = r.isub(r.iadd(u, r.idx(kSize - 1)), k);
        Value ok = r.cmpi(CmpIPredicate::slt, t, ubs[2]);
        Value term = r.mul(r.load(ker, {h, d, k}),
                           da(b, h, r.clamp(t, r.idx(0), lastT), d));
        return r.add(acc, r.select(ok, term, r.f32(0.0)));
      });
      r.store(acc, outs[0], iv);
    });
    // dkernel[h, d, r] = sum_b sum_{t >= K-1-r} da_t x_{t-K+1+r}.
    r.nest({r.dim(ker, 0), r.dim(ker, 1), r.idx(kSize)}, [&](ValueRange iv) {
      Value h = iv[0], d = iv[1], k = iv[2];
      Value first = r.isub(r.idx(kSize - 1), k);
      Value acc = r.reduce(ubs[0], r.f32(0.0), [&](Value b, Value acc) {
        return r.reduce(first, ubs[2], acc, [&](Value t, Value a) {
          Value src = r.isub(t, first);
          return r.add(a, r.mul(da(b, h, t, d), r.load(x, {b, h, src, d})));
        });
      });
      r.store(acc, outs[1], iv);
    });
    replaceWithBuffer(rewriter, op, outs);
    return success();
  }
};

struct LowerL2NormGrad : OpRewritePattern<L2NormGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(L2NormGradOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), dy = asBuffer(r, op.getGrad());
    SmallVector<Value> ubs = dims4(r, x);
    Value out = allocResultsLike(r, op, {x})[0];
    double eps = op.getEps().convertToDouble();
    r.nest({ubs[0], ubs[1], ubs[2]}, [&](ValueRange iv) {
      auto at = [&](Value e) -> SmallVector<Value> {
        return {iv[0], iv[1], iv[2], e};
      };
      // dx = inv dy - inv^3 x (dy . x), inv = (sum x^2 + eps)^(-1/2).
      Value ss = r.reduce(ubs[3], r.f32(0.0), [&](Value e, Value acc) {
        return r.add(acc, r.mul(r.load(x, at(e)), r.load(x, at(e))));
      });
      Value dyx = r.reduce(ubs[3], r.f32(0.0), [&](Value e, Value acc) {
        return r.add(acc, r.mul(r.load(dy, at(e)), r.load(x, at(e))));
      });
      Value inv = r.div(r.f32(1.0), r.sqrt(r.add(ss, r.f32(eps))));
      Value c = r.mul(r.mul(inv, r.mul(inv, inv)), dyx);
      r.loop(ubs[3], [&](Value e) {
        r.store(
            r.sub(r.mul(inv, r.load(dy, at(e))), r.mul(c, r.load(x, at(e)))),
            out, at(e));
      });
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

struct LowerLogSumExp : OpRewritePattern<LogSumExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogSumExpOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value s = asBuffer(r, op.getInput());
    SmallVector<Value> ubs = dims4(r, s);
    Value out = allocResultsLike(r, op, {s})[0];
    r.nest({ubs[0], ubs[1], ubs[2]}, [&](ValueRange iv) {
      // A fully masked row (m = -inf) has log-sum-exp -inf, not NaN.
      RowExpSum row = rowExpSum(r, s, iv, ubs[3]);
      Value lse =
          r.select(row.dead, r.negInf(), r.add(row.mSafe, r.log(row.sum)));
      r.store(lse, out, {iv[0], iv[1], iv[2]});
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.scores_grad
//===----------------------------------------------------------------------===//
//
// Reverse mode of LowerScores' own algorithm, not a transcription of the
// oracle's query walk: the adjoint of the key transport runs time
// backwards, carrying the cotangent of every transported key; the keys at
// each time are replayed from the start (O(S^3 D) per head, a reference).

/// What every loop of one scores_grad lowering reads and writes.
struct ScoresGradState {
  Value q, k, w, beta, grad;  // operand buffers
  Value dq, dkAcc, dw, dbeta; // results (dkAcc: f32 [S, D] per KV head)
  Value kt, kn, abar;         // PaTH workspaces, [S, D] f32
  Value t, s, off;
  int64_t d;
  double scale;
  KeyMask keys;

  /// grad[b, h, i, j] where (i, j) is visible, else 0 (never read masked
  /// cells into arithmetic: they may hold NaN).
  Value visibleGrad(RefBuilder &r, Value b, Value h, Value i, Value j) const {
    Value pi = r.iadd(i, off);
    Value jc = r.clamp(j, r.idx(0), r.isub(s, r.idx(1)));
    return r.select(
        r.andi(keys.visible(r, pi, j), r.cmpi(CmpIPredicate::slt, j, s)),
        r.load(grad, {b, h, i, jc}), r.f32(0.0));
  }
};

/// dq and dk without PaTH: s_ij = scale q_i . k_j.
void plainScoresGrad(RefBuilder &r, const ScoresGradState &st, Value b, Value h,
                     Value kh) {
  Value dIdx = r.idx(st.d), scale = r.f32(st.scale);
  r.nest({st.t, dIdx}, [&](ValueRange iv) {
    Value i = iv[0], e = iv[1];
    Value acc = r.reduce(st.s, r.f32(0.0), [&](Value j, Value a) {
      return r.addSkippingZero(a, st.visibleGrad(r, b, h, i, j),
                               r.load(st.k, {b, kh, j, e}));
    });
    r.store(r.mul(scale, acc), st.dq, {b, h, i, e});
  });
  r.nest({st.s, dIdx}, [&](ValueRange iv) {
    Value j = iv[0], e = iv[1];
    Value acc = r.reduce(st.t, r.f32(0.0), [&](Value i, Value a) {
      return r.addSkippingZero(a, st.visibleGrad(r, b, h, i, j),
                               r.load(st.q, {b, h, i, e}));
    });
    r.accumulate(r.mul(scale, acc), st.dkAcc, {j, e});
  });
}

/// The query row at time tau (if any) against the keys kn at that time:
/// dq_i = scale sum_j grad_ij kn[j], and abar[j] += scale grad_ij q_i.
void pathQueryAdjoint(RefBuilder &r, const ScoresGradState &st, Value b,
                      Value h, Value tau) {
  Value dIdx = r.idx(st.d), scale = r.f32(st.scale);
  auto ifOp = scf::IfOp::create(r.builder(), r.location(),
                                r.cmpi(CmpIPredicate::sge, tau, st.off));
  OpBuilder::InsertionGuard guard(r.builder());
  r.builder().setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value i = r.isub(tau, st.off), upto = r.iadd(tau, r.idx(1));
  r.loop(dIdx, [&](Value e) {
    Value acc = r.reduce(upto, r.f32(0.0), [&](Value j, Value a) {
      return r.add(a,
                   r.mul(st.visibleGrad(r, b, h, i, j), r.load(st.kn, {j, e})));
    });
    r.store(r.mul(scale, acc), st.dq, {b, h, i, e});
  });
  r.loop(upto, [&](Value j) {
    Value gs = r.mul(scale, st.visibleGrad(r, b, h, i, j));
    r.loop(dIdx, [&](Value e) {
      r.accumulate(r.mul(gs, r.load(st.q, {b, h, i, e})), st.abar, {j, e});
    });
  });
}

/// The adjoint of kt[j] <- H_tau kt[j] for every j < tau, kt holding the
/// keys before the step: dbeta_tau, dw_tau, and abar carried through H_tau.
void pathTransformAdjoint(RefBuilder &r, const ScoresGradState &st, Value b,
                          Value kh, Value tau) {
  Value dIdx = r.idx(st.d);
  Value bt = r.load(st.beta, {b, kh, tau});
  auto wAt = [&](Value e) { return r.load(st.w, {b, kh, tau, e}); };
  r.loop(tau, [&](Value j) {
    Value wk = r.reduce(dIdx, r.f32(0.0), [&](Value e, Value a) {
      return r.add(a, r.mul(wAt(e), r.load(st.kt, {j, e})));
    });
    Value wa = r.reduce(dIdx, r.f32(0.0), [&](Value e, Value a) {
      return r.add(a, r.mul(wAt(e), r.load(st.abar, {j, e})));
    });
    r.accumulate(r.mul(r.f32(-1.0), r.mul(wk, wa)), st.dbeta, {b, kh, tau});
    r.loop(dIdx, [&](Value e) {
      Value kte = r.load(st.kt, {j, e}), ae = r.load(st.abar, {j, e});
      Value dwe = r.add(r.mul(wa, kte), r.mul(wk, ae));
      r.accumulate(r.mul(r.sub(r.f32(0.0), bt), dwe), st.dw, {b, kh, tau, e});
      r.store(r.sub(ae, r.mul(r.mul(bt, wa), wAt(e))), st.abar, {j, e});
    });
  });
}

/// dq, dk, dw, dbeta with PaTH for query head h: time runs backwards over
/// LowerScores' steps (transport, k_tau joins, query at tau scores).
void pathScoresGrad(RefBuilder &r, const ScoresGradState &st, Value b, Value h,
                    Value kh) {
  Value dIdx = r.idx(st.d);
  zeroFill(r, st.abar, ValueRange(), {st.s, dIdx});
  r.loop(st.s, [&](Value back) {
    Value tau = r.isub(r.isub(st.s, r.idx(1)), back);
    // kt: the keys before step tau; kn: after it.
    r.loop(tau, [&](Value u) {
      transportKeys(r, st.kt, st.k, st.w, st.beta, b, kh, u, st.d);
    });
    r.nest({tau, dIdx},
           [&](ValueRange iv) { r.store(r.load(st.kt, iv), st.kn, iv); });
    transportKeys(r, st.kn, st.k, st.w, st.beta, b, kh, tau, st.d);
    pathQueryAdjoint(r, st, b, h, tau);
    // k_tau joined unchanged at step tau.
    r.loop(dIdx, [&](Value e) {
      r.accumulate(r.load(st.abar, {tau, e}), st.dkAcc, {tau, e});
    });
    pathTransformAdjoint(r, st, b, kh, tau);
  });
}

/// dg_u = gamma * sum of grad over the visible cells whose gate sum
/// G[p_i] - G[j] contains g_u (j < u <= p_i).
void gateScoresGrad(RefBuilder &r, const ScoresGradState &st, Value dg,
                    double gamma, Value b, Value h) {
  r.loop(st.s, [&](Value u) {
    Value acc =
        r.reduceNest({st.t, st.s}, r.f32(0.0), [&](ValueRange ij, Value a) {
          Value i = ij[0], j = ij[1], pi = r.iadd(i, st.off);
          Value crosses = r.andi(r.cmpi(CmpIPredicate::slt, j, u),
                                 r.cmpi(CmpIPredicate::sle, u, pi));
          Value gij = st.visibleGrad(r, b, h, i, j);
          return r.add(a, r.select(crosses, gij, r.f32(0.0)));
        });
    r.store(r.mul(r.f32(gamma), acc), dg, {b, h, u});
  });
}

struct LowerScoresGrad : OpRewritePattern<ScoresGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScoresGradOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    ScoresGradState st;
    st.q = asBuffer(r, op.getQ());
    st.k = asBuffer(r, op.getK());
    st.grad = asBuffer(r, op.getGrad());
    Value g = op.getG() ? asBuffer(r, op.getG()) : Value();
    st.t = r.dim(st.q, 2);
    st.s = r.dim(st.k, 2);
    st.off = r.isub(st.s, st.t);
    st.d = cast<ShapedType>(op.getQ().getType()).getDimSize(3);
    st.scale = op.getScaleOrDefault();
    st.keys = keyMask(
        r, op.getMask(), op.getWindow().value_or(0),
        op.getCuSeqlens() ? asBuffer(r, op.getCuSeqlens()) : Value(), st.s);
    st.dq = allocLike(r, op.getDq(), st.q);
    Value dk = allocLike(r, op.getDk(), st.k);
    SmallVector<Value> outs = {st.dq, dk};
    auto sd =
        MemRefType::get({ShapedType::kDynamic, st.d}, rewriter.getF32Type());
    st.dkAcc = r.alloc(sd, {st.s});
    if (op.getW()) {
      st.w = asBuffer(r, op.getW());
      st.beta = asBuffer(r, op.getBeta());
      st.dw = allocLike(r, op.getDw(), st.w);
      st.dbeta = allocLike(r, op.getDbeta(), st.beta);
      outs.append({st.dw, st.dbeta});
      st.kt = r.alloc(sd, {st.s});
      st.kn = r.alloc(sd, {st.s});
      st.abar = r.alloc(sd, {st.s});
    }
    Value dg = g ? allocLike(r, op.getDg(), g) : Value();
    if (dg)
      outs.push_back(dg);
    double gamma = op.getGateScaled() ? st.scale : 1.0;
    Value hq = r.dim(st.q, 1), hk = r.dim(st.k, 1), group = r.idiv(hq, hk);
    Value dIdx = r.idx(st.d);
    // Per KV head: the gradients of its keys (and path) sum over its group
    // of query heads in f32, then dk is stored in k's type.
    r.nest({r.dim(st.q, 0), hk}, [&](ValueRange iv) {
      Value b = iv[0], kh = iv[1];
      zeroFill(r, st.dkAcc, ValueRange(), {st.s, dIdx});
      if (st.w) {
        zeroFill(r, st.dw, {b, kh}, {st.s, dIdx});
        zeroFill(r, st.dbeta, {b, kh}, {st.s});
      }
      r.loop(group, [&](Value m) {
        Value h = r.iadd(r.imul(kh, group), m);
        if (dg)
          gateScoresGrad(r, st, dg, gamma, b, h);
        if (st.w)
          pathScoresGrad(r, st, b, h, kh);
        else
          plainScoresGrad(r, st, b, h, kh);
      });
      r.nest({st.s, dIdx}, [&](ValueRange je) {
        r.store(r.load(st.dkAcc, je), dk, {b, kh, je[0], je[1]});
      });
    });
    replaceWithBuffer(rewriter, op, outs);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.kq_conv_grad and attn.head_mix_grad
//===----------------------------------------------------------------------===//
//
// Both as gathers: each gradient element sums the terms that reach it
// (the oracle scatters from every output instead). An output right of the
// diagonal is a constant: its cotangent is selected away, never multiplied
// by 0 (it may hold NaN).

struct LowerKqConvGrad : OpRewritePattern<KqConvGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(KqConvGradOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), th = asBuffer(r, op.getKernel());
    Value dy = asBuffer(r, op.getGrad());
    auto kType = cast<ShapedType>(op.getKernel().getType());
    int64_t cq = kType.getDimSize(1), ck = kType.getDimSize(2);
    int64_t p = cq - 1, c = (ck - 1) / 2;
    SmallVector<Value> ubs = dims4(r, x);
    ScoreCells cells = scoreCells(r, x, cuBuffer(r, op));
    Value dx = allocLike(r, op.getDx(), x),
          dth = allocLike(r, op.getDkernel(), th);
    // dx[i', j'] = sum_{a, b} kernel[h, a, b] dy[i' + p - a, j' + c - b]
    // over the outputs whose row sees key j'.
    r.nest(ubs, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], i2 = iv[2], j2 = iv[3];
      Value acc = r.reduceNest(
          {r.idx(cq), r.idx(ck)}, r.f32(0.0), [&](ValueRange ab, Value a) {
            Value i = r.isub(r.iadd(i2, r.idx(p)), ab[0]);
            Value j = r.isub(r.iadd(j2, r.idx(c)), ab[1]);
            Value seen = r.cmpi(CmpIPredicate::sge, j2, cells.rowStart(r, i));
            Value dl =
                r.select(seen, cells.own(r, dy, b, h, i, j).second, r.f32(0.0));
            return r.add(a, r.mul(r.load(th, {h, ab[0], ab[1]}), dl));
          });
      Value src = cells.source(r, b, h, i2, j2, r.idx(0)).first;
      r.store(r.select(src, acc, r.f32(0.0)), dx, iv);
    });
    // dkernel[h, a, b] = sum_{n, i, j} dy[n, h, i, j] X0[i - p + a, j - c + b].
    r.nest({ubs[1], r.idx(cq), r.idx(ck)}, [&](ValueRange hab) {
      Value h = hab[0];
      Value acc = r.reduceNest(
          {ubs[0], ubs[2], ubs[3]}, r.f32(0.0), [&](ValueRange nij, Value a) {
            Value si = r.iadd(r.isub(nij[1], r.idx(p)), hab[1]);
            Value sj = r.iadd(r.isub(nij[2], r.idx(c)), hab[2]);
            auto [inside, v] =
                cells.source(r, nij[0], h, si, sj, cells.rowStart(r, nij[1]));
            auto [ok, dl] = cells.own(r, dy, nij[0], h, nij[1], nij[2]);
            Value term = r.mul(dl, v);
            return r.add(a, r.select(r.andi(inside, ok), term, r.f32(0.0)));
          });
      r.store(acc, dth, hab);
    });
    replaceWithBuffer(rewriter, op, {dx, dth});
    return success();
  }
};

struct LowerHeadMixGrad : OpRewritePattern<HeadMixGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HeadMixGradOp op,
                                PatternRewriter &rewriter) const override {
    RefBuilder r(rewriter, op.getLoc());
    Value x = asBuffer(r, op.getInput()), wm = asBuffer(r, op.getWeight());
    Value dy = asBuffer(r, op.getGrad());
    Value ch = r.dim(wm, 1);
    SmallVector<Value> ubs = dims4(r, x);
    ScoreCells cells = scoreCells(r, x, cuBuffer(r, op));
    Value dx = allocLike(r, op.getDx(), x);
    Value dwm = allocLike(r, op.getDweight(), wm);
    // dx[g0 + m] = sum over the heads h of the group of weight[h, m] dy[h].
    r.nest(ubs, [&](ValueRange iv) {
      Value b = iv[0], hIn = iv[1], i = iv[2], j = iv[3];
      Value g0 = r.imul(r.idiv(hIn, ch), ch), m = r.isub(hIn, g0);
      Value acc = r.reduce(ch, r.f32(0.0), [&](Value n, Value a) {
        Value h = r.iadd(g0, n);
        return r.add(
            a, r.mul(r.load(wm, {h, m}), cells.own(r, dy, b, h, i, j).second));
      });
      // As in the forward, only -inf reads as 0; NaN propagates.
      Value live = r.cmpf(CmpFPredicate::UNE, r.load(x, iv), r.negInf());
      r.store(r.select(live, acc, r.f32(0.0)), dx, iv);
    });
    // dweight[h, m] = sum_{n, i, j} dy[n, h, i, j] x0[n, g0 + m, i, j].
    r.nest({ubs[1], ch}, [&](ValueRange hm) {
      Value h = hm[0], hIn = r.iadd(r.imul(r.idiv(h, ch), ch), hm[1]);
      Value acc = r.reduceNest(
          {ubs[0], ubs[2], ubs[3]}, r.f32(0.0), [&](ValueRange nij, Value a) {
            Value v = r.load(x, {nij[0], hIn, nij[1], nij[2]});
            Value live = r.cmpf(CmpFPredicate::UNE, v, r.negInf());
            auto [ok, dl] = cells.own(r, dy, nij[0], h, nij[1], nij[2]);
            Value term = r.mul(dl, v);
            return r.add(a, r.select(r.andi(live, ok), term, r.f32(0.0)));
          });
      r.store(acc, dwm, hm);
    });
    replaceWithBuffer(rewriter, op, {dx, dwm});
    return success();
  }
};

struct AttnLowerToReferencePass
    : attn::impl::AttnLowerToReferenceBase<AttnLowerToReferencePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandAttentionPatterns(patterns);
    patterns
        .add<LowerRope, LowerScores, LowerKqConv, LowerHeadMix, LowerSoftmax,
             LowerWeightedSum, LowerHeadNorm, LowerShortConv, LowerL2Norm>(
            &getContext());
    patterns.add<LowerSoftmaxGrad, LowerWeightedSumGrad, LowerHeadNormGrad,
                 LowerShortConvGrad, LowerL2NormGrad, LowerLogSumExp>(
        &getContext());
    patterns.add<LowerScoresGrad, LowerKqConvGrad, LowerHeadMixGrad>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult left = getOperation().walk([](Operation *op) {
      if (isa<AttnDialect>(op->getDialect())) {
        op->emitError("attn op left after the reference lowering");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
