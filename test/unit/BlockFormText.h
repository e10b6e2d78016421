//===- BlockFormText.h - attn-to-block's output as text ---------*- C++ -*-===//
//
// The block program attn-to-block{target=...} makes of a source, printed:
// what the GPU-form tests run on the CPU through attn-to-cpu.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_BLOCKFORMTEXT_H
#define ATTN_TEST_UNIT_BLOCKFORMTEXT_H

#include "ExecutionHelpers.h"
#include "attn/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <string>

namespace attn::exec_test {

/// `source` after the passes `addPasses` puts into a pass manager, printed
/// ("" on failure).
inline std::string
passedText(const std::string &source,
           llvm::function_ref<void(mlir::PassManager &)> addPasses) {
  Program p(source);
  if (!p.module)
    return "";
  mlir::PassManager pm(&p.ctx);
  addPasses(pm);
  if (mlir::failed(pm.run(*p.module)))
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  p.module->print(os);
  return text;
}

/// attn-to-block{target=`target` warps=`warps` block-n=`blockN`
/// path-transport=`pathTransport` path-chunk-wgmma=`pathChunkWgmma`
/// path-attention-wgmma=`pathAttentionWgmma`} of `source`, as text ("" on
/// failure).
inline std::string blockFormText(const std::string &source,
                                 const std::string &target, int64_t warps = 4,
                                 int64_t blockN = 64,
                                 const std::string &pathTransport = "f16",
                                 bool pathChunkWgmma = false,
                                 bool pathAttentionWgmma = false) {
  mlir::attn::AttnToBlockOptions options;
  options.target = target;
  options.warps = warps;
  options.blockN = blockN;
  options.pathTransport = pathTransport;
  options.pathChunkWgmma = pathChunkWgmma;
  options.pathAttentionWgmma = pathAttentionWgmma;
  return passedText(source, [&](mlir::PassManager &pm) {
    pm.addPass(mlir::attn::createAttnToBlock(options));
  });
}

} // namespace attn::exec_test

#endif // ATTN_TEST_UNIT_BLOCKFORMTEXT_H
