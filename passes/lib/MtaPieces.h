//===- MtaPieces.h - what an MTA attn.attention fuses -----------*- C++ -*-===//
//
// The MTA pieces of one attn.attention and the halo sizes derived from them
// (spec/mta.md §1.2: p = c_q - 1 rows above, c = (c_k - 1) / 2 columns each
// side), read once by the CPU form (MtaToBlock.cpp) and the GPU form
// (MtaToBlockGpu.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_MTAPIECES_H
#define ATTN_PASSES_MTAPIECES_H

#include "attn/Dialect/AttnDialect.h"

namespace mlir::attn {

struct MtaPieces {
  mutable AttentionOp op;
  int64_t d, dv;
  int64_t cqPre = 1, ckPre = 1, cqPost = 1, ckPost = 1;
  bool convPre, convPost, mixPre, mixPost, norm, gate, fox, rope;
  MaskKind mask;

  explicit MtaPieces(AttentionOp op) : op(op) {
    d = cast<ShapedType>(op.getQ().getType()).getDimSize(3);
    dv = cast<ShapedType>(op.getV().getType()).getDimSize(3);
    convPre = static_cast<bool>(op.getKqConvPre());
    convPost = static_cast<bool>(op.getKqConvPost());
    mixPre = static_cast<bool>(op.getHeadMixPre());
    mixPost = static_cast<bool>(op.getHeadMixPost());
    norm = static_cast<bool>(op.getNorm());
    gate = static_cast<bool>(op.getNormGateW());
    fox = static_cast<bool>(op.getG());
    rope = static_cast<bool>(op.getRopeTheta());
    mask = op.getMask();
    if (convPre) {
      auto t = cast<ShapedType>(op.getKqConvPre().getType());
      cqPre = t.getDimSize(1);
      ckPre = t.getDimSize(2);
    }
    if (convPost) {
      auto t = cast<ShapedType>(op.getKqConvPost().getType());
      cqPost = t.getDimSize(1);
      ckPost = t.getDimSize(2);
    }
  }
  /// Any post-softmax piece: the LSE pass, then the output pass.
  bool twoPass() const { return convPost || mixPost; }
  /// Pre-conv halo: rows above, columns each side.
  int64_t p() const { return cqPre - 1; }
  int64_t c() const { return (ckPre - 1) / 2; }
  /// Post-conv halo.
  int64_t p2() const { return cqPost - 1; }
  int64_t c2() const { return (ckPost - 1) / 2; }
  /// Scores are zeroed at masked sources only where a linear map follows.
  bool sourceMask() const { return convPre || mixPre; }
};

} // namespace mlir::attn

#endif // ATTN_PASSES_MTAPIECES_H
