//===- OracleDetail.h - internals shared by the oracle's sources -*- C++
//-*-===//
//
// Not part of the oracle's API: the threading, error and operand-check
// helpers and the recorded forward of attention() that Oracle.cpp (the
// forward) and OracleGrad.cpp (its adjoint) both need, so that each check
// and each step of the composition is written once.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_ORACLEDETAIL_H
#define ATTN_REFERENCE_ORACLEDETAIL_H

#include "Oracle.h"

#include <algorithm>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace attn {
namespace ref {
namespace detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The number of threads for n independent rows: rows of the oracle are
/// independent, and T = 16384 checks are O(T^2 D) in fp64.
inline int64_t workerCount(int64_t n) {
  return std::max<int64_t>(
      1, std::min<int64_t>(n / 16, std::thread::hardware_concurrency()));
}

/// Runs fn(worker, i) for i in [0, n) on workerCount(n) threads. `worker`
/// (in [0, workerCount(n))) lets rows that add into shared results (the
/// gradients of keys) keep one accumulator per thread instead of locking.
template <typename Fn> void parallelForWorkers(int64_t n, Fn fn) {
  const int64_t workers = workerCount(n);
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i)
      fn(int64_t{0}, i);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      for (int64_t i = w; i < n; i += workers)
        fn(w, i);
    });
  for (std::thread &t : pool)
    t.join();
}

/// Runs fn(i) for i in [0, n) on workerCount(n) threads.
template <typename Fn> void parallelFor(int64_t n, Fn fn) {
  parallelForWorkers(n, [&](int64_t, int64_t i) { fn(i); });
}

/// Prints "attn::ref::<func>: <msg>" and aborts (no exceptions here).
[[noreturn]] void fail(const char *func, const std::string &msg);

#define ORACLE_CHECK(cond, msg)                                                \
  do {                                                                         \
    if (!(cond))                                                               \
      ::attn::ref::detail::fail(__func__, msg);                                \
  } while (false)

std::string shapeStr(const std::vector<int64_t> &shape);
/// Abort unless `t` has rank `rank` / shape `shape`.
void checkRank(const char *func, const Tensor &t, int64_t rank,
               const char *name);
void checkShape(const char *func, const Tensor &t,
                const std::vector<int64_t> &shape, const char *name);

double sigmoid(double x);
/// Query row i of T sits at absolute position i + S - T.
inline int64_t queryPos(int64_t i, int64_t T, int64_t S) { return i + S - T; }
/// The sequence index of each of the S tokens (all 0 without cuSeqlens).
std::vector<int64_t> sequenceIds(const std::vector<int64_t> *cuSeqlens,
                                 int64_t S);
/// Whether key j is visible from the query at position pos; `seq` from
/// sequenceIds (keys of another sequence are not).
bool visible(Mask mask, int64_t window, int64_t pos, int64_t j,
             const std::vector<int64_t> &seq);

/// The operand checks of the forward functions, which their gradients run
/// too; they abort with a message naming `func`.
void checkRope(const char *func, const Tensor &x, int64_t rotaryDim,
               const std::vector<int64_t> *positions);
/// rope()'s rotation of x's pairs by `sign` times each angle: +1 is rope,
/// -1 its transpose (ropeGrad).
Tensor rotatePairs(const Tensor &x, double theta, int64_t rotaryDim,
                   RopeStyle style, int64_t offset,
                   const std::vector<int64_t> *positions, double sign);
void checkScores(const char *func, const Tensor &q, const Tensor &k,
                 const Tensor *w, const Tensor *beta, const Tensor *g,
                 Mask mask, int64_t window,
                 const std::vector<int64_t> *cuSeqlens);
/// Aborts unless cu are N + 1 >= 2 nondecreasing offsets from 0 to S.
void checkCuSeqlens(const char *func, const std::vector<int64_t> &cu,
                    int64_t S);
void checkKqConv(const char *func, const Tensor &x, const Tensor &theta);
/// The first key each row of a [.., T, S] score map sees (its packed
/// sequence's start; checks cuSeqlens and T == S), all 0 without packing.
std::vector<int64_t> rowStarts(const char *func,
                               const std::vector<int64_t> *cuSeqlens, int64_t T,
                               int64_t S);
void checkHeadMix(const char *func, const Tensor &x, const Tensor &W);
void checkWeightedSum(const char *func, const Tensor &p, const Tensor &v);
void checkHeadNorm(const char *func, const Tensor &o, const Tensor &gamma,
                   const Tensor *gateW, const Tensor *gateB);
void checkShortConv(const char *func, const Tensor &x, const Tensor &kernel);

/// The input of every step attention() ran (a step that did not run leaves
/// its field empty): what attentionGrad needs to run the steps backwards.
struct AttentionTape {
  Tensor qr, kr;     ///< scores' q and k (rotated when cfg.rope)
  Tensor logits;     ///< scores' output: kqConv Pre's input
  Tensor preMixIn;   ///< headMix Pre's input
  Tensor softmaxIn;  ///< softmax's input
  Tensor postConvIn; ///< kqConv Post's input (the probabilities)
  Tensor postMixIn;  ///< headMix Post's input
  Tensor probs;      ///< weightedSum's p
  Tensor o;          ///< headNorm's input
  /// RoPE's rotary dims and the positions of q's and k's tokens.
  int64_t ropeDim = 0;
  std::vector<int64_t> ropeQPositions, ropeKPositions;
};

/// attention(), recording every step's input in `tape` when it is given.
Tensor attentionRecorded(const AttentionConfig &cfg, const Tensor &q,
                         const Tensor &k, const Tensor &v, const Tensor *w,
                         const Tensor *beta, const Tensor *g,
                         const Tensor *thetaPre, const Tensor *wPre,
                         const Tensor *thetaPost, const Tensor *wPost,
                         const Tensor *gamma, const Tensor *gateW,
                         const Tensor *gateB, AttentionTape *tape);

} // namespace detail
} // namespace ref
} // namespace attn

#endif // ATTN_REFERENCE_ORACLEDETAIL_H
