//===- attn-fuzz.cpp - bounded mutation fuzzer of the attn front end ------===//
//
// Mutates the .mlir seeds under the given directories (split at `// -----`)
// with byte flips, cut and duplicated ranges and tokens that broke the tools
// before, and runs each mutant through the parser, the verifier, attn-fuse
// and attn-to-cpu. Diagnostics are expected; a crash, abort or hang is a bug,
// and --last (default attn-fuzz-last.mlir) keeps its reproducer. Usage and
// options: docs/reference/testing.md.
//
//   attn-fuzz [--seed=N] [--seconds=S] [--runs=N] [--last=FILE] DIR...
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Dialect/AttnLaunchDialect.h"
#include "attn/Dialect/SourceLimits.h"
#include "attn/Passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <random>

using namespace llvm;
namespace cl = llvm::cl;

static cl::list<std::string> seedDirs(cl::Positional, cl::OneOrMore,
                                      cl::desc("<seed dir>..."));
static cl::opt<uint64_t> seedOpt("seed", cl::desc("PRNG seed (0: from time)"),
                                 cl::init(0));
static cl::opt<double> seconds("seconds", cl::desc("time budget"),
                               cl::init(30));
static cl::opt<uint64_t> maxRuns("runs", cl::desc("at most this many inputs"),
                                 cl::init(~uint64_t(0)));
static cl::opt<std::string> lastPath("last",
                                     cl::desc("file holding the input now "
                                              "running (a crash reproducer)"),
                                     cl::init("attn-fuzz-last.mlir"));

/// Tokens that hit bugs in the tools before, and pieces of attn syntax.
static const char *const kTokens[] = {"gate()",
                                      "norm()",
                                      "positions()",
                                      "path(,)",
                                      "kq_conv_pre()",
                                      "head_mix_post()",
                                      "norm_gate(,)",
                                      "9223372036854775808",
                                      "-9223372036854775809",
                                      "18446744073709551615",
                                      "0",
                                      "-1",
                                      "1.0e+300",
                                      "1e-320",
                                      "1e-50",
                                      "0x7FF0000000000000",
                                      "0x7FF8000000000000",
                                      "inf",
                                      "tensor<?x?x?x65536xf32>",
                                      "tensor<0x0x0x0xf32>",
                                      "tensor<?xi64>",
                                      "tensor<1x1x1x1xbf16>",
                                      "xf16>",
                                      "x?x",
                                      "mask sliding_window window 0",
                                      "mask none",
                                      "scaled",
                                      "scale 0.0",
                                      "eps 0.0",
                                      "theta -1.0",
                                      "rotary_dim 3",
                                      "offset -5",
                                      "rope(1.0e+04)",
                                      "rope_dim 0",
                                      "rope_q_offset 1",
                                      "pre",
                                      "post",
                                      "silu",
                                      "%q",
                                      "%k",
                                      "%v",
                                      "%g",
                                      ",",
                                      ")",
                                      "(",
                                      ":",
                                      "->",
                                      "attn.attention",
                                      "attn.scores",
                                      "attn.softmax",
                                      "attn.weighted_sum",
                                      "attn.head_norm",
                                      "attn.kq_conv",
                                      "attn.head_mix",
                                      "attn.rope",
                                      "attn.l2norm",
                                      "attn.short_conv"};

static std::vector<std::string> loadSeeds() {
  std::vector<std::string> seeds;
  for (const std::string &dir : seedDirs) {
    std::error_code ec;
    for (sys::fs::recursive_directory_iterator it(dir, ec), end;
         it != end && !ec; it.increment(ec)) {
      if (sys::path::extension(it->path()) != ".mlir")
        continue;
      auto buf = MemoryBuffer::getFile(it->path());
      if (!buf)
        continue;
      SmallVector<StringRef> chunks;
      (*buf)->getBuffer().split(chunks, "// -----");
      for (StringRef c : chunks)
        if (c.contains("attn."))
          seeds.push_back(c.str());
    }
  }
  return seeds;
}

static std::string mutate(std::string s, std::mt19937_64 &rng) {
  auto pick = [&](size_t n) {
    return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng) : 0;
  };
  size_t steps = 1 + pick(4);
  for (size_t i = 0; i < steps && !s.empty(); ++i) {
    size_t at = pick(s.size());
    switch (pick(6)) {
    case 0: // flip a byte to a printable one
      s[at] = static_cast<char>(' ' + pick(95));
      break;
    case 1: // cut a range
      s.erase(at, 1 + pick(16));
      break;
    case 2: // duplicate a range
      s.insert(at, s.substr(pick(s.size()), 1 + pick(32)));
      break;
    case 3: // insert a token
      s.insert(at, std::string(" ") + kTokens[pick(std::size(kTokens))] + " ");
      break;
    case 4: { // replace a number with another
      size_t d = s.find_first_of("0123456789", at);
      if (d == std::string::npos)
        break;
      size_t e = s.find_first_not_of("0123456789.e+-", d);
      s.replace(d, (e == std::string::npos ? s.size() : e) - d,
                kTokens[7 + pick(11)]);
      break;
    }
    default: // swap in a token for a word
      size_t e = s.find_first_of(" ,():<>", at);
      s.replace(at, (e == std::string::npos ? s.size() : e) - at,
                kTokens[pick(std::size(kTokens))]);
      break;
    }
  }
  return s;
}

/// Parse, verify, attn-fuse, attn-to-cpu. Errors are fine; only a crash
/// counts, and a crash ends the process.
static void runOne(mlir::MLIRContext &ctx, StringRef text) {
  if (mlir::attn::checkSourceNesting(text, "fuzz"))
    return;
  SourceMgr mgr;
  mgr.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(text, "fuzz"), SMLoc());
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(mgr, &ctx);
  if (!module || failed(mlir::verify(*module)))
    return;
  mlir::PassManager pm(&ctx);
  pm.addPass(mlir::attn::createAttnFuse());
  mlir::attn::buildCPUPipeline(pm, /*threads=*/false);
  (void)pm.run(*module);
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "attn front-end fuzzer\n");
  uint64_t seed =
      seedOpt ? uint64_t(seedOpt)
              : std::chrono::steady_clock::now().time_since_epoch().count();
  outs() << "attn-fuzz: seed " << seed << " (repeat with --seed=" << seed
         << ")\n";
  outs().flush();
  std::vector<std::string> seeds = loadSeeds();
  if (seeds.empty()) {
    errs() << "attn-fuzz: error: no .mlir seeds with attn ops found\n";
    return 1;
  }
  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, mlir::attn_block::AttnBlockDialect,
                  mlir::attn_launch::AttnLaunchDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  uint64_t diagnostics = 0;
  mlir::ScopedDiagnosticHandler quiet(&ctx, [&](mlir::Diagnostic &) {
    ++diagnostics;
    return mlir::success();
  });

  std::mt19937_64 rng(seed);
  auto start = std::chrono::steady_clock::now();
  uint64_t runs = 0;
  while (runs < maxRuns &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                 .count() < seconds) {
    std::string input = mutate(
        seeds[std::uniform_int_distribution<size_t>(0, seeds.size() - 1)(rng)],
        rng);
    {
      std::error_code ec;
      raw_fd_ostream last(lastPath, ec);
      if (ec) {
        errs() << "attn-fuzz: error: cannot write '" << lastPath
               << "': " << ec.message() << "\n";
        return 1;
      }
      last << "// attn-fuzz seed " << seed << " run " << runs << "\n" << input;
    }
    runOne(ctx, input);
    ++runs;
  }
  outs() << "attn-fuzz: " << runs << " inputs from " << seeds.size()
         << " seeds, " << diagnostics << " diagnostics, no crash\n";
  return 0;
}
