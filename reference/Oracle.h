//===- Oracle.h - fp64 brute-force reference for attn ----------*- C++ -*-===//
//
// The executable specification of every attention variant the compiler
// supports (plain/GQA/sliding-window, RoPE, PaTH, FoX, Multi-Token Attention)
// and of its gradients: plain C++17, fp64, brute force, the literal formulas
// (no tiling, no code shared with the compiler), an independent oracle.
// Layouts (row-major): q [B, Hq, T, D], k [B, Hk, S, D], v [B, Hk, S, Dv],
// scores [B, Hq, T, S], output [B, Hq, T, Dv]; query row i sits at position
// i + S - T; query head h reads KV head h / (Hq / Hk). Shape errors print a
// message and abort (the oracle builds with -fno-exceptions).
// docs/reference/layout.md, "reference/".
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_ORACLE_H
#define ATTN_REFERENCE_ORACLE_H

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace attn {
namespace ref {

/// A dense row-major fp64 tensor.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  Tensor() = default;
  Tensor(std::vector<int64_t> shape, std::vector<double> data);

  /// Product of the dimensions (1 for a rank-0 tensor).
  int64_t numel() const;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// Size of dimension `d`; negative `d` counts from the back.
  int64_t dim(int64_t d) const;

  /// Bounds-checked element accessors; the number of indices must equal the
  /// rank.
  double &at(int64_t i);
  double &at(int64_t i, int64_t j);
  double &at(int64_t i, int64_t j, int64_t k);
  double &at(int64_t i, int64_t j, int64_t k, int64_t l);
  double at(int64_t i) const;
  double at(int64_t i, int64_t j) const;
  double at(int64_t i, int64_t j, int64_t k) const;
  double at(int64_t i, int64_t j, int64_t k, int64_t l) const;

  static Tensor zeros(const std::vector<int64_t> &shape);
  /// A tensor of the given shape with every element equal to `value`.
  static Tensor full(const std::vector<int64_t> &shape, double value);

private:
  int64_t offset(const int64_t *idx, int64_t n) const;
};

enum class Mask { Causal, None, SlidingWindow };
enum class RopeStyle { Half, Interleaved };
enum class Stage { Pre, Post };

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

/// Rotary position embedding of x[B,H,T,D] on the first `rotaryDim` (even,
/// <= D) dims. Token t has position `positions ? (*positions)[t] : offset + t`.
/// Pair i in [0, R/2) is rotated by angle pos * theta^(-2i/R); Half style pairs
/// (x[i], x[i+R/2]), Interleaved pairs (x[2i], x[2i+1]); (a, b) ->
/// (a cos - b sin, a sin + b cos). Dims >= R are copied.
Tensor rope(const Tensor &x, double theta, int64_t rotaryDim, RopeStyle style,
            int64_t offset = 0,
            const std::vector<int64_t> *positions = nullptr);

/// Attention logits [B,Hq,T,S]; masked entries are -infinity.
///   logit(i,j) = s * q_i^T P(p_i, j) k_j + gamma * (G[p_i] - G[j])
/// with P(a,j) = H_a H_{a-1} ... H_{j+1} (identity when j >= a),
/// H_t = I - beta_t w_t w_t^T (PaTH; w/beta per KV head [B,Hk,S,D] / [B,Hk,S]),
/// G = inclusive cumsum over positions of g [B,Hq,S] (FoX; per query head),
/// gamma = s if gateScaled else 1.
/// visible(i,j): Causal j <= p_i; None always; SlidingWindow p_i-W < j <= p_i;
/// with `cuSeqlens` (packed sequences) also j in p_i's sequence.
Tensor scores(const Tensor &q, const Tensor &k, double scale,
              const Tensor *w = nullptr, const Tensor *beta = nullptr,
              const Tensor *g = nullptr, bool gateScaled = false,
              Mask mask = Mask::Causal, int64_t window = 0,
              const std::vector<int64_t> *cuSeqlens = nullptr);

/// Packed sequences: N sequences laid end to end along the sequence axis,
/// sequence n at [cuSeqlens[n], cuSeqlens[n+1]) (N + 1 nondecreasing offsets
/// from 0 to S, as FlashAttention's and fla's cu_seqlens). A query sees only
/// keys of its own sequence, and RoPE positions restart at each start.
/// The position of token t within its sequence, plus `offset`.
std::vector<int64_t> packedPositions(const std::vector<int64_t> &cuSeqlens,
                                     int64_t offset = 0);

/// MTA key-query convolution of x[B,H,T,S] with per-head kernels
/// theta[H,cq,ck] (ck odd), literal form of mta.md §1.2 (zero-masked source,
/// cross-correlation, top pad cq-1, left/right pad (ck-1)/2). Entries with
/// j > i + (S - T) become -inf (Pre) or 0 (Post). With `cuSeqlens` (packed
/// sequences, T == S) each sequence is convolved as if alone: output row i
/// reads no source key before its sequence's start s_i, and its entries
/// with j < s_i are masked as those right of the diagonal.
Tensor kqConv(const Tensor &x, const Tensor &theta, Stage stage,
              const std::vector<int64_t> *cuSeqlens = nullptr);

/// MTA head mixing of x[B,H,T,S] with W[H,ch] (ch divides H):
/// out[h] = sum_m W[h,m] * x0[(h/ch)*ch + m], x0 = x with -inf -> 0.
/// Entries with j > i + (S - T) become -inf (Pre) or 0 (Post), and with
/// `cuSeqlens` those before the row's sequence start.
Tensor headMix(const Tensor &x, const Tensor &W, Stage stage,
               const std::vector<int64_t> *cuSeqlens = nullptr);

/// Softmax over the last axis. -inf entries give 0 (also in a row a NaN makes
/// NaN); an all -inf row gives 0s.
Tensor softmax(const Tensor &x);

/// o[B,Hq,T,Dv] = sum_j p[b,h,i,j] * v[b,h/(Hq/Hk),j,:].
Tensor weightedSum(const Tensor &p, const Tensor &v);

/// Per (b,h,t) row of o[B,H,T,Dv]: y = o / sqrt(mean(o^2) + eps) * gamma;
/// if gateW: y *= sigmoid(gateW . y + (gateB ? gateB[0] : 0)).
Tensor headNorm(const Tensor &o, const Tensor &gamma, double eps,
                const Tensor *gateW = nullptr, const Tensor *gateB = nullptr);

/// Depthwise causal 1-D conv over time of x[B,H,T,D] with kernel[H,D,K]:
/// y[t] = sum_{r<K} kernel[h,d,r] * x[t-K+1+r] (zero padded); optional SiLU.
Tensor shortConv(const Tensor &x, const Tensor &kernel, bool silu);

/// x / sqrt(sum(x^2) + eps) over the last axis.
Tensor l2norm(const Tensor &x, double eps);

//===----------------------------------------------------------------------===//
// Full composition
//===----------------------------------------------------------------------===//

struct AttentionConfig {
  double scale;
  Mask mask = Mask::Causal;
  int64_t window = 0;
  bool rope = false;
  double ropeTheta = 10000;
  int64_t ropeDim = 0; ///< 0 means D.
  RopeStyle ropeStyle = RopeStyle::Half;
  int64_t ropeOffset = 0;
  bool gateScaled = false;
  double normEps = 1e-5;
  int64_t preGroup = 0, postGroup = 0; ///< head-mix group sizes; 0 means H.
  /// Packed sequences' offsets (see packedPositions); empty: one sequence.
  /// Needs T == S; MTA's pieces convolve and mix each sequence as if alone.
  std::vector<int64_t> cuSeqlens;
};

/// rope (q at offset ropeOffset + S - T, k at ropeOffset) -> scores ->
/// kqConv Pre -> headMix Pre -> softmax -> kqConv Post -> headMix Post ->
/// weightedSum -> headNorm; every optional step runs iff its operand is given.
/// wPre / wPost must have shape [H, preGroup|postGroup] (0 meaning H).
Tensor attention(const AttentionConfig &cfg, const Tensor &q, const Tensor &k,
                 const Tensor &v, const Tensor *w = nullptr,
                 const Tensor *beta = nullptr, const Tensor *g = nullptr,
                 const Tensor *thetaPre = nullptr, const Tensor *wPre = nullptr,
                 const Tensor *thetaPost = nullptr,
                 const Tensor *wPost = nullptr, const Tensor *gamma = nullptr,
                 const Tensor *gateW = nullptr, const Tensor *gateB = nullptr);

//===----------------------------------------------------------------------===//
// Gradients (OracleGrad.cpp)
//===----------------------------------------------------------------------===//
//
// Vector-Jacobian products: each fooGrad(dy, <foo's arguments>) returns the
// gradient, w.r.t. each differentiable argument of foo, of the loss
// L = sum(foo(...) * dy) over foo's finite outputs. Hand-written adjoint
// loops in fp64 (not the compiler, not finite differences), shaped like the
// argument; an optional argument that was not given leaves an empty Tensor.
// Not differentiable: RoPE's theta, offsets and positions, masks, windows,
// scale, eps, stages and group sizes. Entries a forward sets to a constant
// (-inf or 0 beyond the mask) ignore dy, and input entries equal to -inf
// (masked logits, constants) get gradient 0.

/// d x of rope: the inverse rotation of dy (dims >= R pass through).
Tensor ropeGrad(const Tensor &dy, double theta, int64_t rotaryDim,
                RopeStyle style, int64_t offset = 0,
                const std::vector<int64_t> *positions = nullptr);

struct ScoresGrad {
  Tensor q, k, w, beta, g;
};
/// d q, d k and, when given, PaTH's d w, d beta and FoX's d g of scores():
/// the adjoint of its walking recurrence, run from key 0 up to the query.
ScoresGrad scoresGrad(const Tensor &dLogits, const Tensor &q, const Tensor &k,
                      double scale, const Tensor *w = nullptr,
                      const Tensor *beta = nullptr, const Tensor *g = nullptr,
                      bool gateScaled = false, Mask mask = Mask::Causal,
                      int64_t window = 0,
                      const std::vector<int64_t> *cuSeqlens = nullptr);

struct KqConvGrad {
  Tensor x, theta;
};
KqConvGrad kqConvGrad(const Tensor &dy, const Tensor &x, const Tensor &theta,
                      Stage stage,
                      const std::vector<int64_t> *cuSeqlens = nullptr);

struct HeadMixGrad {
  Tensor x, W;
};
HeadMixGrad headMixGrad(const Tensor &dy, const Tensor &x, const Tensor &W,
                        Stage stage,
                        const std::vector<int64_t> *cuSeqlens = nullptr);

/// d x = y * (dy - sum(y * dy)) per row, y = softmax(x).
Tensor softmaxGrad(const Tensor &dy, const Tensor &x);

struct WeightedSumGrad {
  Tensor p, v; ///< d v sums the query heads of each KV head's group
};
WeightedSumGrad weightedSumGrad(const Tensor &dO, const Tensor &p,
                                const Tensor &v);

struct HeadNormGrad {
  Tensor o, gamma, gateW, gateB;
};
HeadNormGrad headNormGrad(const Tensor &dy, const Tensor &o,
                          const Tensor &gamma, double eps,
                          const Tensor *gateW = nullptr,
                          const Tensor *gateB = nullptr);

struct ShortConvGrad {
  Tensor x, kernel;
};
ShortConvGrad shortConvGrad(const Tensor &dy, const Tensor &x,
                            const Tensor &kernel, bool silu);

Tensor l2normGrad(const Tensor &dy, const Tensor &x, double eps);

/// The gradient of every float input of attention(), given dO: the steps'
/// adjoints in reverse order on the forward's recorded intermediates.
struct AttentionGrad {
  Tensor q, k, v, w, beta, g, thetaPre, wPre, thetaPost, wPost, gamma, gateW,
      gateB;
};
AttentionGrad
attentionGrad(const Tensor &dO, const AttentionConfig &cfg, const Tensor &q,
              const Tensor &k, const Tensor &v, const Tensor *w = nullptr,
              const Tensor *beta = nullptr, const Tensor *g = nullptr,
              const Tensor *thetaPre = nullptr, const Tensor *wPre = nullptr,
              const Tensor *thetaPost = nullptr, const Tensor *wPost = nullptr,
              const Tensor *gamma = nullptr, const Tensor *gateW = nullptr,
              const Tensor *gateB = nullptr);

//===----------------------------------------------------------------------===//
// Comparison and reproducible random data
//===----------------------------------------------------------------------===//

/// max|got - ref| / max(max|ref|, 1e-30). Returns +inf on a size mismatch or
/// when a NaN / infinity in either side is not matched by the same infinity
/// in the other (e.g. -inf in ref with -inf in got counts as equal).
double relError(const std::vector<double> &got, const Tensor &ref);
double relError(const Tensor &got, const Tensor &ref);
/// ||got - ref||_2 / max(||ref||_2, 1e-30), same non-finite handling.
double relRmsError(const std::vector<double> &got, const Tensor &ref);
double relRmsError(const Tensor &got, const Tensor &ref);
/// The worst row's relative error: max over rows r (the last dimension is a
/// row) of ||got_r - ref_r||_2 / max(||ref_r||_2, floor * the mean row
/// norm), so that one wrong row cannot hide inside an RMS over millions of
/// values. The floor keeps a row whose reference is nearly zero from
/// dividing by nothing. Stores the row's index in `row` when given; same
/// shape and non-finite handling as relError (+inf).
double worstRowRelError(const Tensor &got, const Tensor &ref,
                        int64_t *row = nullptr, double floor = 1e-3);

/// The bounds a 16-bit (f16/bf16) result is held to against the fp64
/// oracle: relative RMS over the whole result, and the worst row's relative
/// error (worstRowRelError). attn-run --check and the GPU tests use them.
constexpr double kHalfRmsBound = 5e-3;
constexpr double kHalfRowBound = 2e-2;

/// worstRowRelError's floor for the gradients of a 16-bit program: a row
/// below half the mean row norm is judged against half of it. Such a row's
/// gradient is a cancellation of terms of the typical size: dq of query 1
/// under a causal mask is dS_11 (k_1 - k_0), and the softmax's row term
/// D = rowsum(dO * O), computed from the 16-bit O as every flash backward
/// computes it, leaves sum_j dS_ij off zero by dO (O - round(O)). Its
/// absolute error is about 1-2% of the mean row norm, which the default
/// floor turns into relative errors near 1 (plain bf16, T = 64, D = 128:
/// the worst dq row errs by 1.1% of the mean norm, 93% of its own).
constexpr double kGradRowFloor = 0.5;

/// A fresh seed for a test's random inputs (from the steady clock): each run
/// draws new data; the test prints the seed so that a failure can be
/// replayed with ATTN_SEED set to it.
inline uint64_t freshSeed() {
  if (const char *fixed = std::getenv("ATTN_SEED"))
    return std::strtoull(fixed, nullptr, 10);
  return static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
}

/// Normal(0, stddev) samples from splitmix64 + Box-Muller (bit reproducible
/// across standard libraries).
Tensor randn(const std::vector<int64_t> &shape, uint64_t seed,
             double stddev = 1);
/// Uniform [lo, hi) samples from splitmix64.
Tensor randUniform(const std::vector<int64_t> &shape, uint64_t seed, double lo,
                   double hi);

} // namespace ref
} // namespace attn

#endif // ATTN_REFERENCE_ORACLE_H
