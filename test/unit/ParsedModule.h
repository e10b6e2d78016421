//===- ParsedModule.h - an attn program parsed for the oracle ---*- C++ -*-===//
//
// A program's text parsed into a module of its own context (threads each
// parse their own), for the oracle and for tests that read its @main.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_PARSEDMODULE_H
#define ATTN_TEST_UNIT_PARSEDMODULE_H

#include "attn/Dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"

#include <string>

namespace attn::test_util {

struct ParsedModule {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  explicit ParsedModule(const std::string &src) {
    mlir::DialectRegistry registry;
    registry.insert<mlir::attn::AttnDialect>();
    mlir::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(src, &ctx);
  }
  mlir::func::FuncOp main() {
    return module->lookupSymbol<mlir::func::FuncOp>("main");
  }
};

} // namespace attn::test_util

#endif // ATTN_TEST_UNIT_PARSEDMODULE_H
