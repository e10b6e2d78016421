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

/// Replaces `op` by the tensor view of the filled buffer `out`.
void replaceWithBuffer(PatternRewriter &rewriter, Operation *op, Value out) {
  auto tensor = bufferization::ToTensorOp::create(
      rewriter, op->getLoc(), op->getResult(0).getType(), out,
      /*restrict=*/true, /*writable=*/true);
  rewriter.replaceOp(op, tensor.getResult());
}

/// The four loop bounds [d0, d1, d2, d3] of a rank-4 buffer.
SmallVector<Value> dims4(RefBuilder &r, Value mem) {
  return {r.dim(mem, 0), r.dim(mem, 1), r.dim(mem, 2), r.dim(mem, 3)};
}

/// True (i1) when key j lies right of query row i's diagonal: j > i + off.
Value rightOfDiagonal(RefBuilder &r, Value i, Value j, Value off) {
  return r.cmpi(CmpIPredicate::sgt, j, r.iadd(i, off));
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
    MaskKind mask = op.getMask();
    int64_t window = op.getWindow().value_or(0);

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

    auto visible = [&](Value pi, Value j) -> Value {
      Value ok = r.cmpi(CmpIPredicate::sle, j, pi);
      if (mask == MaskKind::none)
        return r.cmpi(CmpIPredicate::sge, j, r.idx(0));
      if (mask == MaskKind::sliding_window)
        ok = r.andi(ok,
                    r.cmpi(CmpIPredicate::sgt, j, r.isub(pi, r.idx(window))));
      return ok;
    };
    // logit = s * dot + gamma * (G[pi] - G[j]) or -inf.
    auto finish = [&](Value dot, Value pi, Value j) -> Value {
      Value logit = r.mul(scaleV, dot);
      if (g) {
        Value gi = memref::LoadOp::create(rewriter, r.location(), cum, pi);
        Value gj = memref::LoadOp::create(rewriter, r.location(), cum, j);
        Value diff = r.toF32(r.mul(r.f64(gamma), r.sub(gi, gj)));
        logit = r.add(logit, diff);
      }
      return r.select(visible(pi, j), logit, r.negInf());
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
      // PaTH, decode form (spec/path_fox.md §1.4): at time tau every earlier
      // key is hit by H_tau, then k_tau joins unchanged; the query at
      // position tau then sees keys already transported through
      // H_tau ... H_{j+1}.
      r.loop(s, [&](Value tau) {
        Value bt = r.load(beta, {b, kh, tau});
        r.loop(tau, [&](Value j) {
          Value proj = r.reduce(dIdx, r.f32(0.0), [&](Value e, Value acc) {
            return r.add(acc,
                         r.mul(r.load(w, {b, kh, tau, e}), r.load(kt, {j, e})));
          });
          Value coef = r.mul(bt, proj);
          r.loop(dIdx, [&](Value e) {
            Value upd = r.sub(r.load(kt, {j, e}),
                              r.mul(coef, r.load(w, {b, kh, tau, e})));
            r.store(upd, kt, {j, e});
          });
        });
        r.loop(dIdx, [&](Value e) {
          r.store(r.load(k, {b, kh, tau, e}), kt, {tau, e});
        });
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
    Value t = ubs[2], s = ubs[3], off = r.isub(s, t);
    Value out = allocResult(r, cast<RankedTensorType>(op.getType()),
                            [&](int64_t i) { return ubs[i]; });
    Value masked = op.getStage() == Stage::pre ? r.negInf() : r.f32(0.0);
    r.nest(ubs, [&](ValueRange iv) {
      Value b = iv[0], h = iv[1], i = iv[2], j = iv[3];
      Value conv = r.reduce(r.idx(cq), r.f32(0.0), [&](Value a, Value acc) {
        Value si = r.iadd(r.isub(i, r.idx(p)), a);
        return r.reduce(r.idx(ck), acc, [&](Value bb, Value acc2) {
          Value sj = r.iadd(r.isub(j, r.idx(c)), bb);
          // Mask_0 on the source entry, plus zero padding outside the map.
          Value inside = r.andi(r.andi(r.cmpi(CmpIPredicate::sge, si, r.idx(0)),
                                       r.cmpi(CmpIPredicate::slt, si, t)),
                                r.andi(r.cmpi(CmpIPredicate::sge, sj, r.idx(0)),
                                       r.cmpi(CmpIPredicate::slt, sj, s)));
          inside =
              r.andi(inside, r.cmpi(CmpIPredicate::sle, sj, r.iadd(si, off)));
          Value ci = r.clamp(si, r.idx(0), r.isub(t, r.idx(1)));
          Value cj = r.clamp(sj, r.idx(0), r.isub(s, r.idx(1)));
          Value v = r.load(x, {b, h, ci, cj});
          inside = r.andi(inside, r.cmpf(CmpFPredicate::ONE, v, r.negInf()));
          Value src = r.select(inside, v, r.f32(0.0));
          return r.add(acc2, r.mul(r.load(th, {h, a, bb}), src));
        });
      });
      r.store(r.select(rightOfDiagonal(r, i, j, off), masked, conv), out,
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
    Value off = r.isub(ubs[3], ubs[2]);
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
      r.store(r.select(rightOfDiagonal(r, i, j, off), masked, mix), out,
              {b, h, i, j});
    });
    replaceWithBuffer(rewriter, op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attn.softmax
//===----------------------------------------------------------------------===//

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
      Value m = r.reduce(ubs[3], r.negInf(), [&](Value j, Value acc) {
        return r.maxf(acc, r.load(x, at(j)));
      });
      // A fully masked row has m = -inf; its probabilities are 0, not NaN.
      Value dead = r.cmpf(CmpFPredicate::OEQ, m, r.negInf());
      Value mSafe = r.select(dead, r.f32(0.0), m);
      Value sum = r.reduce(ubs[3], r.f32(0.0), [&](Value j, Value acc) {
        return r.add(acc, r.exp(r.sub(r.load(x, at(j)), mSafe)));
      });
      Value inv = r.select(dead, r.f32(0.0), r.div(r.f32(1.0), sum));
      r.loop(ubs[3], [&](Value j) {
        r.store(r.mul(r.exp(r.sub(r.load(x, at(j)), mSafe)), inv), out, at(j));
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
      Value acc = r.reduce(pd[3], r.f32(0.0), [&](Value j, Value a) {
        return r.add(a,
                     r.mul(r.load(p, {b, h, i, j}), r.load(v, {b, kh, j, e})));
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
      Value y = r.reduce(r.idx(kSize), r.f32(0.0), [&](Value k, Value acc) {
        Value src = r.iadd(r.isub(t, r.idx(kSize - 1)), k);
        Value ok = r.cmpi(CmpIPredicate::sge, src, r.idx(0));
        Value v = r.load(x, {b, h, r.clamp(src, r.idx(0), t), d});
        return r.add(
            acc, r.mul(r.load(ker, {h, d, k}), r.select(ok, v, r.f32(0.0))));
      });
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

struct AttnLowerToReferencePass
    : attn::impl::AttnLowerToReferenceBase<AttnLowerToReferencePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandAttentionPatterns(patterns);
    patterns
        .add<LowerRope, LowerScores, LowerKqConv, LowerHeadMix, LowerSoftmax,
             LowerWeightedSum, LowerHeadNorm, LowerShortConv, LowerL2Norm>(
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
