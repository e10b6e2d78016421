//===- Exp2ToCPU.h - exp2 of the fused kernels as a polynomial --*- C++ -*-===//

#ifndef ATTN_CODEGEN_CPU_EXP2TOCPU_H
#define ATTN_CODEGEN_CPU_EXP2TOCPU_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {

/// f32 math.exp2 inside block kernels -> arith/math.fma ops (Exp2ToCPU.cpp).
void populateExp2ToCPUPatterns(RewritePatternSet &patterns);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_CPU_EXP2TOCPU_H
