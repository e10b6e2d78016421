//===- ProgramOracle.h - run an attn program on the fp64 oracle -*- C++ -*-===//
//
// Evaluates a func.func of attn ops op by op with the brute-force fp64
// functions of Oracle.h: the compiler's lowering is not involved, only the
// mapping from each op and its attributes to the oracle function of the same
// meaning; its gradients (evaluateGrad) chain the oracle's per-op gradients
// backwards the same way. Also draws random inputs shaped and distributed for
// the role each argument plays (unit-norm PaTH directions, betas in (0, 2), log
// forget gates, near-identity MTA kernels), so any program can be checked.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_PROGRAMORACLE_H
#define ATTN_REFERENCE_PROGRAMORACLE_H

#include "Oracle.h"
#include "attn/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace attn::ref {

/// Evaluates `func` on `inputs` (in argument order) with the fp64 oracle;
/// every result, in result order.
llvm::Expected<std::vector<Tensor>> evaluateAll(mlir::func::FuncOp func,
                                                llvm::ArrayRef<Tensor> inputs);

/// evaluateAll of a one-result function: its result (an error naming
/// evaluateAll on a function with several).
llvm::Expected<Tensor> evaluate(mlir::func::FuncOp func,
                                llvm::ArrayRef<Tensor> inputs);

/// The fp64 gradients of `func`'s result (one-result functions) on
/// `inputs` given dO (the
/// gradient of a loss w.r.t. the result; Oracle.h, "Gradients"): the
/// oracle's gradient of each op, chained through the program in reverse
/// order. One entry per argument, std::nullopt for one that is not
/// differentiable (integer tensors: RoPE positions); an argument that does
/// not reach the result gets zeros.
llvm::Expected<std::vector<std::optional<Tensor>>>
evaluateGrad(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> inputs,
             const Tensor &dO);

/// How far a result attn computes may be from the oracle's: the max
/// relative error (relError) within `bound`, or, with `rms`, the relative
/// RMS error (relRmsError) within `bound` and the worst row's
/// (worstRowRelError with `rowFloor`) within `rowBound`.
struct ErrorBound {
  bool rms = false;
  double bound = 1e-5;
  double rowBound = 0;
  double rowFloor = 1e-3;
};

/// The bounds of `func`'s training pair against evaluate and evaluateGrad:
/// `output` for the forward's result, `args[i]` for the gradient of argument
/// i. attn-grad's tests and attn-run --grad --check use them.
///
/// A program in f32: max relative error 1e-5, but 1e-3 for the gradients of
/// the MTA parameters (kq_conv kernels, head_mix weights, the output norm's
/// gamma and gate): single sums over every score-map cell or row whose terms
/// cancel, so the chain's f32 rounding in them grows by sum|terms| / |sum|;
/// each VJP op alone holds 1e-5, and a wrong formula is off by O(1).
///
/// A program with an f16/bf16 argument runs both functions as the op chain
/// (attn-grad expands attn.attention), rounding every intermediate, score
/// maps included, to 16 bits: the output keeps a 16-bit forward's bounds
/// (kHalfRmsBound, kHalfRowBound) and the gradients get relative RMS 2e-2
/// and worst row 1e-1, rows judged with kGradRowFloor. With MTA pieces the
/// chain of maps loses most digits of a few rows and of the parameters' sums
/// (mta_bf16.mlir, T up to 200: the output's worst row 5e-2, a dq row 0.24,
/// dgate_b 0.11): the output gets 2e-2 and 1e-1, the other gradients 2e-2 and
/// 5e-1, the parameters' 2.5e-1 and 5e-1; a wrong formula or a wrong row is
/// still off by O(1).
struct TrainingBounds {
  ErrorBound output;
  std::vector<ErrorBound> args;
};
TrainingBounds trainingBounds(mlir::func::FuncOp func);

/// The dO a gradient check draws for a result of `shape`: N(0, 1) from
/// `seed`, on a stream apart from randomInputs' draws of the same seed.
Tensor randomCotangent(const std::vector<int64_t> &shape, uint64_t seed);

struct RandomSpec {
  int64_t batch = 1, heads = 2, seqLen = 16;
  uint64_t seed = 0;
  /// Range of PaTH's beta; (1.5, 2) stresses near-reflections.
  double betaLo = 0.0, betaHi = 2.0;
  /// Range of the forget gate f (the input is log f); lower fLo makes the
  /// FoX bias fall faster along the keys.
  double fLo = 0.9, fHi = 1.0;
  /// Packed sequences in a cu_seqlens argument of dynamic length: its
  /// N + 1 offsets cut [0, seqLen] at sorted uniform points.
  int64_t sequences = 3;
};

/// Random inputs for `func` following the [B, H, T, D] convention: dynamic
/// dims of 4-D arguments are B, H, T; of 3-D gates/betas B, H, T; of MTA
/// kernels [H, c_q, c_k] and head-mix weights [H, c_h] the head count; of
/// cu_seqlens `sequences` + 1.
llvm::Expected<std::vector<Tensor>> randomInputs(mlir::func::FuncOp func,
                                                 const RandomSpec &spec);

/// The shapes randomInputs gives the arguments (nothing is drawn).
llvm::Expected<std::vector<std::vector<int64_t>>>
randomInputShapes(mlir::func::FuncOp func, const RandomSpec &spec);

/// Conversions between host arrays and oracle tensors.
llvm::Expected<Tensor> fromHost(const NpyArray &a);
NpyArray toHost(const Tensor &t, DType dtype);

} // namespace attn::ref

#endif // ATTN_REFERENCE_PROGRAMORACLE_H
