//===- HostileInputTest.cpp - bad inputs to the runtime -------------------===//
//
// Inputs a hostile or careless user passes to the runtime: each must come
// back as an error value naming the problem (never a crash, never a silently
// wrong result), and the neighbouring valid input must still run and match
// the fp64 oracle, so that a check that refuses everything cannot pass.
//
//===----------------------------------------------------------------------===//

#include "JitAlloc.h"
#include "ProgramOracle.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Memory.h"
#include "attn/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sys/stat.h>

using attn::HostArray;

namespace {

/// Never destroyed: its kernels must not outlive LLVM's static state.
attn::Engine &engine() {
  static attn::Engine *e = [] {
    auto created = attn::Engine::create("cpu");
    if (!created) {
      ADD_FAILURE() << llvm::toString(created.takeError());
      std::abort();
    }
    return created->release();
  }();
  return *e;
}

uint64_t freshSeed() {
  uint64_t s = std::chrono::steady_clock::now().time_since_epoch().count();
  std::printf("seed %llu\n", static_cast<unsigned long long>(s));
  return s;
}

/// A parsed program with its oracle.
struct Program {
  std::string source;
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  explicit Program(std::string src) : source(std::move(src)) {
    mlir::DialectRegistry registry;
    registry.insert<mlir::attn::AttnDialect>();
    mlir::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &ctx);
  }
  mlir::func::FuncOp main() {
    return module->lookupSymbol<mlir::func::FuncOp>("main");
  }
  /// Random inputs (f32; integer arguments in their own type) and the
  /// oracle's result for them.
  std::pair<std::vector<HostArray>, attn::ref::Tensor>
  draw(int64_t b, int64_t h, int64_t t, uint64_t seed) {
    attn::ref::RandomSpec spec;
    spec.batch = b;
    spec.heads = h;
    spec.seqLen = t;
    spec.seed = seed;
    auto ins = attn::ref::randomInputs(main(), spec);
    EXPECT_TRUE(bool(ins)) << llvm::toString(ins.takeError());
    std::vector<HostArray> host;
    for (auto [x, type] : llvm::zip(*ins, main().getArgumentTypes())) {
      mlir::Type elt = mlir::getElementTypeOrSelf(type);
      host.push_back(attn::ref::toHost(x, elt.isInteger(32) ? attn::DType::I32
                                          : elt.isInteger(64)
                                              ? attn::DType::I64
                                              : attn::DType::F32));
    }
    auto ref = attn::ref::evaluate(main(), *ins);
    EXPECT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
    return {std::move(host), std::move(*ref)};
  }
};

std::string foxProgram(int64_t d) {
  std::string t = "tensor<?x?x?x" + std::to_string(d) + "xf32>";
  return "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
         ", %g: tensor<?x?x?xf32>) -> " + t +
         " {\n"
         "  %s = attn.scores %q, %k gate(%g) : (" +
         t + ", " + t +
         ", tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>\n"
         "  %p = attn.softmax %s : tensor<?x?x?x?xf32>\n"
         "  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, " +
         t + ") -> " + t + "\n  return %o : " + t + "\n}\n";
}

/// PaTH (no gate) on [B, H, T, d] f32 tensors; beta is argument 4.
std::string pathProgram(int64_t d) {
  std::string t = "tensor<?x?x?x" + std::to_string(d) + "xf32>";
  return "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
         ", %w: " + t + ", %beta: tensor<?x?x?xf32>) -> " + t +
         " {\n  %s = attn.scores %q, %k path(%w, %beta) : (" + t + ", " + t +
         ", " + t +
         ", tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>\n"
         "  %p = attn.softmax %s : tensor<?x?x?x?xf32>\n"
         "  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, " +
         t + ") -> " + t + "\n  return %o : " + t + "\n}\n";
}

std::shared_ptr<attn::Kernel> compile(const std::string &src) {
  auto k = engine().compile(src);
  EXPECT_TRUE(bool(k)) << llvm::toString(k.takeError());
  return k ? *k : nullptr;
}

/// Runs and compares with the oracle (max relative error <= 1e-5).
void expectMatches(attn::Kernel &k, const std::vector<HostArray> &ins,
                   const attn::ref::Tensor &ref) {
  auto out = k.run(ins);
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  auto got = attn::ref::fromHost(*out);
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  EXPECT_LE(attn::ref::relError(*got, ref), 1e-5);
}

std::string errorOf(llvm::Expected<HostArray> r) {
  if (r)
    return "";
  return llvm::toString(r.takeError());
}

std::string errorOf(llvm::Error e) {
  return e ? llvm::toString(std::move(e)) : "";
}

/// Kernel::launch on host views of `ins` (contiguous) into `out`, which is
/// allocated at the result's shape; `outStrides` empty: contiguous.
llvm::Error launchOn(attn::Kernel &k, std::vector<HostArray> &ins,
                     HostArray &out, std::vector<int64_t> outStrides = {}) {
  std::vector<attn::TensorView> views;
  for (HostArray &a : ins)
    views.push_back(attn::TensorView::of(a));
  auto shape = k.resultShape(views);
  if (!shape)
    return shape.takeError();
  out = HostArray{attn::DType::F32, *shape, {}};
  out.bytes.resize(out.numel() * 4);
  attn::TensorView o = attn::TensorView::of(out);
  o.strides.assign(outStrides.begin(), outStrides.end());
  return k.launch(views, o);
}

} // namespace

TEST(Sizes, CheckedBytes) {
  EXPECT_EQ(attn::checkedBytes({2, 3, 4}, 4), std::optional<uint64_t>(96));
  EXPECT_EQ(attn::checkedBytes({}, 8), std::optional<uint64_t>(8));
  EXPECT_EQ(attn::checkedBytes({0, int64_t(1) << 62}, 4),
            std::optional<uint64_t>(0));
  EXPECT_FALSE(attn::checkedBytes({int64_t(1) << 32, int64_t(1) << 32, 2}, 4));
  EXPECT_FALSE(
      attn::checkedBytes({1, 4, std::numeric_limits<int64_t>::max()}, 4));
  EXPECT_FALSE(attn::checkedBytes({-1, 4}, 4));
  EXPECT_FALSE(attn::checkedBytes({int64_t(1) << 60}, 8));
  EXPECT_EQ(attn::addBytes(~uint64_t(0) - 1, 5), ~uint64_t(0));
}

// An array whose shape wraps to a small element count must not run as an
// empty or short array.
TEST(Sizes, InputBytesMustMatchShape) {
  uint64_t seed = freshSeed();
  Program p(foxProgram(8));
  auto k = compile(p.source);
  ASSERT_TRUE(k);
  auto [ins, ref] = p.draw(1, 2, 5, seed);
  expectMatches(*k, ins, ref);
  std::vector<HostArray> bad = ins;
  bad[0].shape = {int64_t(1) << 32, int64_t(1) << 32, 2, 8};
  EXPECT_NE(errorOf(k->run(bad)).find("more than 2^62 bytes"),
            std::string::npos);
  bad = ins;
  bad[1].bytes.resize(bad[1].bytes.size() - 4);
  EXPECT_NE(errorOf(k->run(bad)).find("bytes) but holds"), std::string::npos);
}

// A float64 value finite in f64 but not in the argument's f32 is refused,
// not narrowed to inf; f64 values that fit still run.
TEST(Values, F64InputOverflowingF32) {
  uint64_t seed = freshSeed();
  Program p(foxProgram(8));
  auto k = compile(p.source);
  ASSERT_TRUE(k);
  auto [ins, ref] = p.draw(1, 2, 5, seed);
  HostArray q64{attn::DType::F64, ins[0].shape,
                std::vector<uint8_t>(ins[0].numel() * 8)};
  for (size_t i = 0; i < ins[0].numel(); ++i)
    q64.set(i, ins[0].get(i));
  std::vector<HostArray> ok = ins;
  ok[0] = q64;
  expectMatches(*k, ok, ref);
  q64.set(7, 1e300);
  ok[0] = q64;
  std::string err = errorOf(k->run(ok));
  EXPECT_NE(err.find("element 7"), std::string::npos) << err;
  EXPECT_NE(err.find("overflows f32"), std::string::npos) << err;
}

// A log forget gate of -inf would make the prefix-sum bias NaN: refused.
TEST(Values, GateMinusInfinity) {
  uint64_t seed = freshSeed();
  Program p(foxProgram(8));
  auto k = compile(p.source);
  ASSERT_TRUE(k);
  auto [ins, ref] = p.draw(1, 2, 5, seed);
  expectMatches(*k, ins, ref);
  std::vector<HostArray> bad = ins;
  bad[3].set(3, -std::numeric_limits<double>::infinity());
  std::string err = errorOf(k->run(bad));
  EXPECT_NE(err.find("input 3 (a log forget gate) holds -inf at element 3"),
            std::string::npos)
      << err;
  bad[3].set(3, std::numeric_limits<double>::infinity());
  EXPECT_NE(errorOf(k->run(bad)).find("+inf"), std::string::npos);
}

// launch() (the C++ and C APIs, Python) refuses the gate values that run()
// (attn-run) refuses: the checks are one function both go through.
TEST(Values, GateInfinityThroughLaunch) {
  uint64_t seed = freshSeed();
  Program p(foxProgram(8));
  auto k = compile(p.source);
  ASSERT_TRUE(k);
  auto [ins, ref] = p.draw(1, 2, 5, seed);
  HostArray out;
  ASSERT_EQ(errorOf(launchOn(*k, ins, out)), "");
  auto got = attn::ref::fromHost(out);
  ASSERT_TRUE(bool(got));
  EXPECT_LE(attn::ref::relError(*got, ref), 1e-5);
  for (double inf : {-std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::infinity()}) {
    std::vector<HostArray> bad = ins;
    bad[3].set(6, inf);
    std::string err = errorOf(launchOn(*k, bad, out));
    EXPECT_NE(err.find("input 3 (a log forget gate) holds " +
                       std::string(inf < 0 ? "-inf" : "+inf") +
                       " at element 6"),
              std::string::npos)
        << err;
  }
}

// PaTH's beta outside [0, 2] is refused by run() and launch(); the ends of
// the range run and match the oracle.
TEST(Values, PathBetaRange) {
  uint64_t seed = freshSeed();
  Program p(pathProgram(8));
  auto k = compile(p.source);
  ASSERT_TRUE(k);
  auto [ins, ref] = p.draw(1, 2, 70, seed);
  expectMatches(*k, ins, ref);
  std::vector<HostArray> edge = ins;
  for (size_t i = 0; i < edge[4].numel(); i += 3)
    edge[4].set(i, i % 2 ? 2.0 : 0.0);
  std::vector<attn::ref::Tensor> edgeIns;
  for (const HostArray &a : edge)
    edgeIns.push_back(*attn::ref::fromHost(a));
  auto edgeRef = attn::ref::evaluate(p.main(), edgeIns);
  ASSERT_TRUE(bool(edgeRef)) << llvm::toString(edgeRef.takeError());
  expectMatches(*k, edge, *edgeRef);
  for (double beta :
       {1e6, 2.0001, -1e-3, -1e30, std::numeric_limits<double>::infinity()}) {
    std::vector<HostArray> bad = ins;
    bad[4].set(9, beta);
    std::string err = errorOf(k->run(bad));
    EXPECT_NE(err.find("input 4 (PaTH's beta) holds"), std::string::npos)
        << beta << ": " << err;
    EXPECT_NE(err.find("at element 9: beta must lie in [0, 2]"),
              std::string::npos)
        << beta << ": " << err;
    HostArray out;
    std::string viaLaunch = errorOf(launchOn(*k, bad, out));
    EXPECT_EQ(viaLaunch, err);
  }
}

// Packed sequences' offsets that do not run from 0 to S without decreasing
// are refused by run() and launch() (the reference lowering reads every
// offset); valid ones, an empty sequence among them, match the oracle.
TEST(Values, PackedSequenceOffsets) {
  uint64_t seed = freshSeed();
  const std::string t = "tensor<1x2x?x8xf32>";
  Program p("func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
            ", %cu: tensor<?xi32>) -> " + t +
            " {\n  %o = attn.attention %q, %k, %v cu_seqlens(%cu) : (" + t +
            ", " + t + ", " + t + ", tensor<?xi32>) -> " + t +
            "\n  return %o : " + t + "\n}\n");
  auto k = compile(p.source);
  ASSERT_TRUE(k);
  auto [ins, ref] = p.draw(1, 2, 9, seed);
  expectMatches(*k, ins, ref);
  auto offsets = [&](std::vector<int32_t> cu) {
    std::vector<HostArray> bad = ins;
    bad[3] = HostArray{attn::DType::I32,
                       {static_cast<int64_t>(cu.size())},
                       std::vector<uint8_t>(cu.size() * 4)};
    std::memcpy(bad[3].bytes.data(), cu.data(), cu.size() * 4);
    std::string err = errorOf(k->run(bad));
    HostArray out;
    EXPECT_EQ(errorOf(launchOn(*k, bad, out)), err);
    return err;
  };
  EXPECT_NE(offsets({1, 4, 9}).find("holds 1 at element 0: offsets must start "
                                    "at 0 and never decrease"),
            std::string::npos);
  EXPECT_NE(offsets({0, 5, 4, 9}).find("holds 4 at element 2"),
            std::string::npos);
  EXPECT_NE(offsets({0, 4, 8}).find("ends at 8: the last offset must be the "
                                    "sequence length 9"),
            std::string::npos);
  EXPECT_NE(offsets({0, 4, 12}).find("ends at 12"), std::string::npos);
  EXPECT_NE(offsets({0}).find("N + 1 >= 2"), std::string::npos);
  EXPECT_EQ(offsets({0, 0, 4, 4, 9}), "");
}

// Output views whose elements share addresses are refused, a zero stride
// included; strides whose byte extent exceeds 2^62 or wraps 64 bits, and a
// view reaching past the end of the address space, are refused before any
// address is formed.
TEST(Views, OverlapAndOverflowingStrides) {
  uint64_t seed = freshSeed();
  Program p(foxProgram(8));
  auto k = compile(p.source);
  ASSERT_TRUE(k);
  auto [ins, ref] = p.draw(1, 2, 5, seed);
  HostArray out;
  // [1, 2, 5, 8]: the heads at one address, then the rows.
  for (std::vector<int64_t> strides :
       {std::vector<int64_t>{80, 0, 8, 1}, {80, 40, 0, 1}, {80, 40, 8, 0}}) {
    std::string err = errorOf(launchOn(*k, ins, out, strides));
    EXPECT_NE(err.find("the output's strides make elements overlap"),
              std::string::npos)
        << err;
  }
  // A zero stride over a dim of one element shares nothing.
  ASSERT_EQ(errorOf(launchOn(*k, ins, out, {0, 40, 8, 1})), "");
  auto got = attn::ref::fromHost(out);
  ASSERT_TRUE(bool(got));
  EXPECT_LE(attn::ref::relError(*got, ref), 1e-5);

  std::vector<attn::TensorView> views;
  for (HostArray &a : ins)
    views.push_back(attn::TensorView::of(a));
  attn::TensorView o = attn::TensorView::of(out);
  const int64_t big = std::numeric_limits<int64_t>::max();
  for (std::vector<int64_t> strides :
       {std::vector<int64_t>{80, int64_t(1) << 61, 8, 1},
        {80, big / 2, 8, 1},
        {80, 40, big, 1},
        {big, big, big, big}}) {
    attn::TensorView bad = views[1];
    bad.strides.assign(strides.begin(), strides.end());
    std::vector<attn::TensorView> in = views;
    in[1] = bad;
    std::string err = errorOf(k->launch(in, o));
    EXPECT_NE(err.find("input 1 (tensor<?x?x?x8xf32>): its strides reach "
                       "more than 2^62 bytes"),
              std::string::npos)
        << err;
  }
  std::vector<attn::TensorView> in = views;
  in[0].data = reinterpret_cast<void *>(~uintptr_t(63));
  std::string err = errorOf(k->launch(in, o));
  EXPECT_NE(err.find("its strides reach past the end of the address space"),
            std::string::npos)
      << err;
}

// Text nested deeper than the parser's recursion can take is an error
// value from compile (it overflowed the stack and killed the process);
// nesting at the limit compiles.
TEST(Parse, DeepNesting) {
  auto nested = [](int depth) {
    std::string s = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n";
    for (int i = 0; i < depth; ++i)
      s += "%r" + std::to_string(i) +
           " = scf.execute_region -> tensor<4xf32> {\n";
    s += "scf.yield %a : tensor<4xf32>\n";
    for (int i = depth; i-- > 0;)
      s +=
          "}\n" + (i ? "scf.yield %r" + std::to_string(i) + " : tensor<4xf32>\n"
                     : std::string());
    return s + "return %r0 : tensor<4xf32>\n}\n";
  };
  for (int depth : {30000, 300}) {
    auto k = engine().compile(nested(depth));
    ASSERT_FALSE(bool(k));
    std::string err = llvm::toString(k.takeError());
    EXPECT_NE(err.find("brackets nested deeper than 256 levels: refused "
                       "before parsing"),
              std::string::npos)
        << err;
  }
  auto k = engine().compile(nested(200));
  EXPECT_TRUE(bool(k)) << llvm::toString(k.takeError());
}

// The fused CPU kernel takes D <= 1024; wider heads run through the
// reference lowering (with a remark), both exact.
TEST(HeadDim, FusedLimitAndFallback) {
  uint64_t seed = freshSeed();
  for (int64_t d : {1024, 1025}) {
    Program p(foxProgram(d));
    auto k = compile(p.source);
    ASSERT_TRUE(k);
    bool fellBack = false;
    for (const std::string &r : k->remarks())
      fellBack |= r.find("head dim 1025 > 1024") != std::string::npos;
    EXPECT_EQ(fellBack, d == 1025) << "D = " << d;
    auto [ins, ref] = p.draw(1, 1, 3, seed);
    expectMatches(*k, ins, ref);
  }
}

// An allocation that fails inside generated code (after the up-front
// estimate let the run through) is an error naming its size, and the kernel
// still runs afterwards: the fused PaTH kernels' scratch (O(B·H·S·D), made
// by the host function) and the reference lowering's score maps. (The
// output is the caller's buffer: no whole-run allocation for plain/FoX.)
TEST(Memory, GeneratedCodeAllocationFailure) {
  uint64_t seed = freshSeed();
  std::string t = "tensor<?x?x?x64xf32>";
  Program p("func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
            ", %w: " + t + ", %beta: tensor<?x?x?xf32>) -> " + t +
            " {\n  %s = attn.scores %q, %k path(%w, %beta) : (" + t + ", " + t +
            ", " + t +
            ", tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32>\n"
            "  %p = attn.softmax %s : tensor<?x?x?x?xf32>\n"
            "  %o = attn.weighted_sum %p, %v : (tensor<?x?x?x?xf32>, " +
            t + ") -> " + t + "\n  return %o : " + t + "\n}\n");
  ASSERT_TRUE(p.module);
  auto [ins, ref] = p.draw(1, 2, 300, seed);
  for (attn::Pipeline pipeline :
       {attn::Pipeline::Fused, attn::Pipeline::Reference}) {
    attn::CompileOptions opts;
    opts.pipeline = pipeline;
    auto k = engine().compile(p.source, opts);
    ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
    // A scratch buffer is 1x2x300x64 f32 = 153600 bytes (a score map
    // 720000); program instances' tiles stay under 64x64 f32 = 16 KiB.
    attn::jit::setAllocationLimitForTesting(128 * 1024);
    std::string err = errorOf((*k)->run(ins));
    attn::jit::setAllocationLimitForTesting(0);
    EXPECT_NE(err.find("out of memory: generated code could not allocate"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("bytes) while running @main on the CPU"),
              std::string::npos)
        << err;
    expectMatches(**k, ins, ref);
  }
}

// An ATTN_LIBOMP that names no file is an error, not a silent fall back to
// one thread.
TEST(Environment, MissingLibomp) {
  ASSERT_EQ(setenv("ATTN_LIBOMP", "/nonexistent/libomp.so", 1), 0);
  // A text of its own: the engine caches compiles by text.
  auto k = engine().compile(foxProgram(16) + "// libomp\n");
  unsetenv("ATTN_LIBOMP");
  ASSERT_FALSE(bool(k));
  std::string err = llvm::toString(k.takeError());
  EXPECT_NE(err.find("ATTN_LIBOMP='/nonexistent/libomp.so' does not exist"),
            std::string::npos)
      << err;
}

// A device or a file that is not a .npy is refused from its first bytes;
// a header announcing more data than the file holds is refused before the
// data is read.
TEST(Npy, NotReadWhole) {
  auto zero = attn::readNpy("/dev/zero");
  ASSERT_FALSE(bool(zero));
  EXPECT_NE(llvm::toString(zero.takeError())
                .find("/dev/zero: not a regular file (a character device)"),
            std::string::npos);
  // A FIFO with no writer is refused at once, not waited on.
  {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-fifo", dir));
    std::string fifo = (dir + "/in.npy").str();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto r = attn::readNpy(fifo);
    llvm::sys::fs::remove_directories(dir);
    ASSERT_FALSE(bool(r));
    std::string err = llvm::toString(r.takeError());
    EXPECT_NE(err.find("in.npy: not a regular file (a FIFO)"),
              std::string::npos)
        << err;
  }

  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("attn-huge", "npy", path));
  {
    std::string header =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }";
    header.resize(128 - 10 - 1, ' ');
    header += '\n';
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << "\x93NUMPY" << '\x01' << '\x00' << char(header.size() & 0xff)
       << char(header.size() >> 8) << header << "1234";
  }
  auto huge = attn::readNpy(path);
  llvm::sys::fs::remove(path);
  ASSERT_FALSE(bool(huge));
  std::string err = llvm::toString(huge.takeError());
  EXPECT_NE(err.find("need 4000000000000 bytes but the file has 4"),
            std::string::npos)
      << err;
}
