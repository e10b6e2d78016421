//===- attn-run.cpp - run a function of an attn program -------------------===//
//
// Compiles one function of a .mlir file for the default device (or
// --device), runs it on .npy inputs or on seeded random ones, writes its
// results as .npy, and optionally checks each against the fp64 oracle and
// times it; --grad runs the function's training pair (forward, then
// backward) and checks the output and every gradient. Every failure is a
// message and a non-zero exit status.
//
//===----------------------------------------------------------------------===//

#include "ProgramOracle.h"
#include "attn/Dialect/AttnBlockDialect.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Dialect/AttnLaunchDialect.h"
#include "attn/Memory.h"
#include "attn/Runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

using namespace llvm;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                                  cl::init("main"), cl::cat(category));
static cl::opt<std::string>
    inputs("inputs", cl::desc("Comma-separated .npy inputs, in argument order"),
           cl::cat(category));
static cl::opt<std::string>
    output("output",
           cl::desc("Write the result .npy (several results: PATH without "
                    ".npy, then 0.npy, 1.npy, ...)"),
           cl::cat(category));
static cl::opt<std::string>
    device("device",
           cl::desc("cpu or cuda (default: ATTN_DEVICE, else the "
                    "best device present)"),
           cl::cat(category));
static cl::opt<std::string> pipeline("pipeline",
                                     cl::desc("auto (default) or reference"),
                                     cl::init("auto"), cl::cat(category));
static cl::opt<std::string> randomShape(
    "random",
    cl::desc("Random inputs of batch x heads x seqlen, e.g. 1x4x128; each "
             "argument is drawn for its role (see README)"),
    cl::cat(category));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed for --random (and --grad's dO)"),
                              cl::init(0), cl::cat(category));
static cl::opt<std::string>
    betaRange("beta-range", cl::desc("lo,hi range of random PaTH betas"),
              cl::init("0,2"), cl::cat(category));
static cl::opt<std::string>
    saveInputs("save-inputs",
               cl::desc("Write the inputs as PREFIX0.npy, PREFIX1.npy, ..."),
               cl::cat(category));
static cl::opt<bool> check("check",
                           cl::desc("Compare with the fp64 oracle; fail above "
                                    "--tol"),
                           cl::cat(category));
static cl::opt<double>
    tol("tol",
        cl::desc("Relative error bound for --check: max|err|/max|ref| "
                 "(default 1e-5 for f32 results, 5e-3 RMS for f16/bf16)"),
        cl::init(-1), cl::cat(category));
static cl::opt<double>
    rowTol("row-tol",
           cl::desc("Worst-row relative error bound for --check on f16/bf16 "
                    "results (default 2e-2)"),
           cl::init(-1), cl::cat(category));
static cl::opt<bool>
    grad("grad",
         cl::desc("Run the training pair (attn-grad): the forward, then the "
                  "backward on dO (a file after the inputs in --inputs, else "
                  "drawn from --seed); --output names a directory for o.npy "
                  "and d<argument>.npy"),
         cl::cat(category));
static cl::opt<bool> timeIt("time",
                            cl::desc("Print compile and run times (with "
                                     "--grad: forward and backward apart)"),
                            cl::cat(category));
/// More runs than this is a mistake (each may take seconds), not a
/// measurement.
constexpr unsigned kMaxRepeat = 100000;
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Runs to time with --time (median), "
                                         "1 to 100000"),
                                cl::init(5), cl::cat(category));

static int fail(const Twine &msg) {
  errs() << "attn-run: error: " << msg << "\n";
  return 1;
}

static int fail(Error e) { return fail(toString(std::move(e))); }

/// Options the command line parser accepts but attn-run cannot use: a bound
/// that is negative or NaN would otherwise fall back to the default (-1 is
/// the default's marker) or pass every result.
static Error checkOptions() {
  if (repeat == 0 || repeat > kMaxRepeat)
    return createStringError("--repeat must be in [1, " + Twine(kMaxRepeat) +
                             "], got " + Twine(unsigned(repeat)));
  for (auto [opt, name] : {std::pair<cl::opt<double> *, StringRef>{&tol, "tol"},
                           {&rowTol, "row-tol"}}) {
    double x = *opt;
    if (!opt->getNumOccurrences() || (std::isfinite(x) && x >= 0))
      continue;
    std::string value;
    raw_string_ostream(value) << format("%g", x);
    return createStringError("--" + name.str() +
                             " must be a finite number >= 0, got " + value);
  }
  return Error::success();
}

static double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// --random's inputs of `func` (shape BxHxT), each stored as f32 (i64
/// where `kernel` takes i64).
static Expected<std::vector<attn::HostArray>>
randomArgs(mlir::func::FuncOp func, const attn::Kernel &kernel) {
  SmallVector<StringRef> parts;
  StringRef(randomShape).split(parts, 'x');
  int64_t dims[3];
  if (parts.size() != 3 || parts[0].getAsInteger(10, dims[0]) ||
      parts[1].getAsInteger(10, dims[1]) ||
      parts[2].getAsInteger(10, dims[2]) || dims[0] < 1 || dims[1] < 1 ||
      dims[2] < 1)
    return createStringError("--random must be BxHxT with positive "
                             "integers, got '" +
                             randomShape + "'");
  attn::ref::RandomSpec spec;
  spec.batch = dims[0];
  spec.heads = dims[1];
  spec.seqLen = dims[2];
  spec.seed = seed;
  std::pair<StringRef, StringRef> range = StringRef(betaRange).split(',');
  if (range.first.getAsDouble(spec.betaLo) ||
      range.second.getAsDouble(spec.betaHi) || !std::isfinite(spec.betaLo) ||
      !std::isfinite(spec.betaHi) || spec.betaLo > spec.betaHi)
    return createStringError("--beta-range must be lo,hi (finite) with lo "
                             "<= hi, got '" +
                             betaRange + "'");
  // Sizes first: a product that wraps must not become an empty array,
  // and inputs that cannot fit must not be drawn (the oracle draws them
  // as doubles, then they are stored as f32).
  auto shapes = attn::ref::randomInputShapes(func, spec);
  if (!shapes)
    return shapes.takeError();
  uint64_t drawBytes = 0;
  for (auto [i, shape] : enumerate(*shapes)) {
    std::optional<uint64_t> b = attn::checkedBytes(shape, 8 + 4);
    if (!b)
      return createStringError(("--random=" + randomShape + ": argument " +
                                Twine(i) + " would be " +
                                attn::TensorSig{attn::DType::F32, shape}.str() +
                                ", more than 2^62 bytes")
                                   .str());
    drawBytes = attn::addBytes(drawBytes, *b);
  }
  if (Error e = attn::checkAllocatable(drawBytes, "--random=" + randomShape +
                                                      ": drawing the inputs"))
    return std::move(e);
  auto random = attn::ref::randomInputs(func, spec);
  if (!random)
    return random.takeError();
  std::vector<attn::HostArray> args;
  // Integer arguments (positions, cu_seqlens) in their own type, floats as
  // f32 (converted to the argument's type by the runtime).
  for (auto [i, t] : enumerate(*random)) {
    attn::DType want = kernel.arguments()[i].dtype;
    args.push_back(attn::ref::toHost(t, want == attn::DType::I64 ||
                                                want == attn::DType::I32
                                            ? want
                                            : attn::DType::F32));
  }
  return args;
}

/// The --inputs files, as many as `kernel` takes; with --grad one more may
/// follow (dO).
static Expected<std::vector<attn::HostArray>>
fileArgs(const attn::Kernel &kernel) {
  std::vector<attn::HostArray> args;
  SmallVector<StringRef> paths;
  if (!inputs.empty())
    StringRef(inputs).split(paths, ',');
  for (StringRef p : paths) {
    auto a = attn::readNpy(p);
    if (!a)
      return a.takeError();
    args.push_back(std::move(*a));
  }
  size_t want = kernel.arguments().size();
  if (args.size() != want && !(grad && args.size() == want + 1)) {
    std::string sig;
    for (auto &a : kernel.arguments())
      sig += " " + a.str();
    return createStringError(
        ("@" + entry + " takes " + Twine(want) + " inputs (" +
         StringRef(sig).ltrim() + "), got " + Twine(args.size()) +
         "; pass them with --inputs=a.npy,b.npy,..." +
         (grad ? " (then dO.npy, optional)" : "") + " or use --random")
            .str());
  }
  return args;
}

/// The inputs from --random or --inputs (as many as `kernel` takes, and
/// with --grad perhaps dO after them), saved to --save-inputs.
static Expected<std::vector<attn::HostArray>>
drawArgs(mlir::func::FuncOp func, const attn::Kernel &kernel) {
  if (!randomShape.empty() && !inputs.empty())
    return createStringError("give either --inputs or --random, not both");
  auto drawn =
      randomShape.empty() ? fileArgs(kernel) : randomArgs(func, kernel);
  if (!drawn)
    return drawn.takeError();
  if (!saveInputs.empty())
    for (auto [i, a] : enumerate(*drawn))
      if (Error e = attn::writeNpy((saveInputs + Twine(i) + ".npy").str(), a))
        return std::move(e);
  return drawn;
}

/// Refuses `args` when the fp64 oracle of --check cannot get the memory
/// (with the gradients, twice: every value and its cotangent).
static Error checkOracleMemory(mlir::func::FuncOp func,
                               ArrayRef<attn::HostArray> args, bool withGrads) {
  std::vector<std::vector<int64_t>> inShapes;
  for (const attn::HostArray &a : args)
    inShapes.push_back(a.shape);
  uint64_t bytes = attn::materializedBytes(func, inShapes,
                                           /*bytesPerElement=*/8);
  return attn::checkAllocatable(
      withGrads ? attn::addBytes(bytes, bytes) : bytes,
      "--check: the fp64 oracle (every op's result in doubles)");
}

/// --output's file of result `i` of `n`: the path itself for one result,
/// else the path without ".npy" followed by i and ".npy".
static std::string outputPath(size_t i, size_t n) {
  if (n == 1)
    return output;
  StringRef stem = StringRef(output);
  stem.consume_back(".npy");
  return (stem + Twine(i) + ".npy").str();
}

/// `args` as the oracle sees them: as the kernel saw them, rounded to each
/// argument's element type in `sigs` (f16/bf16 storage, f64 files read as
/// f32).
static Expected<std::vector<attn::ref::Tensor>>
oracleInputs(ArrayRef<attn::TensorSig> sigs, ArrayRef<attn::HostArray> args) {
  std::vector<attn::ref::Tensor> ins;
  for (auto [i, a] : enumerate(args)) {
    auto t = attn::ref::fromHost(a);
    if (!t)
      return t.takeError();
    attn::DType want = sigs[i].dtype;
    if (want != a.dtype && want != attn::DType::I64 && want != attn::DType::I32)
      t = attn::ref::fromHost(attn::ref::toHost(*t, want));
    if (!t)
      return t.takeError();
    ins.push_back(std::move(*t));
  }
  return ins;
}

/// --check: `result` against the oracle's `ref`, as the text of the result
/// line and whether it is within the bounds.
struct CheckOutcome {
  std::string text;
  bool ok = true;
};
/// The bound of a result of element type `dtype`: f32 1e-5 max relative
/// error, f16/bf16 the relative RMS and worst-row bounds, integers exact.
static attn::ref::ErrorBound resultBound(attn::DType dtype) {
  if (dtype == attn::DType::F16 || dtype == attn::DType::BF16)
    return {true, attn::ref::kHalfRmsBound, attn::ref::kHalfRowBound};
  if (dtype == attn::DType::I64 || dtype == attn::DType::I32)
    return {false, 0, 0};
  return {};
}

/// `result` against `ref` within `b` (--tol and --row-tol override it).
static Expected<CheckOutcome> checkResult(const attn::ref::Tensor &ref,
                                          const attn::HostArray &result,
                                          attn::ref::ErrorBound b) {
  auto got = attn::ref::fromHost(result);
  if (!got)
    return got.takeError();
  double err = b.rms ? attn::ref::relRmsError(*got, ref)
                     : attn::ref::relError(*got, ref);
  double bound = tol >= 0 ? double(tol) : b.bound;
  CheckOutcome c;
  c.text = formatv(", {0} error vs fp64 oracle {1:e3} (bound {2:e0})",
                   b.rms ? "relative RMS" : "max relative", err, bound)
               .str();
  c.ok = err <= bound;
  // An RMS over millions of values can hide one wrong row: bound the
  // worst row too.
  if (b.rms) {
    int64_t row = 0;
    double rowErr = attn::ref::worstRowRelError(*got, ref, &row, b.rowFloor);
    double rowBound = rowTol >= 0 ? double(rowTol) : b.rowBound;
    c.text +=
        formatv(", worst row {0}: {1:e3} (bound {2:e0})", row, rowErr, rowBound)
            .str();
    c.ok = c.ok && rowErr <= rowBound;
  }
  return c;
}

/// What a second, plain parse of the program needs (for the oracle and
/// --random; a program may already be a block program: attn-opt
/// --attn-to-block's).
static mlir::DialectRegistry plainRegistry() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, mlir::attn_block::AttnBlockDialect,
                  mlir::attn_launch::AttnLaunchDialect>();
  mlir::registerAllDialects(registry);
  return registry;
}

static mlir::OwningOpRef<mlir::ModuleOp> parsePlain(StringRef source,
                                                    mlir::MLIRContext &ctx) {
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      MemoryBuffer::getMemBufferCopy(source, inputFile), SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &ctx);
}

/// The median of `ms` (sorted in place).
static double median(std::vector<double> &ms) {
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// --grad --check: the forward's output and each gradient against the
/// oracle (evaluateGrad on the same inputs and dO): appends the outcome to
/// each one's line in `lines` (o first) and returns whether all are within
/// their bounds.
static Expected<bool>
checkTraining(mlir::func::FuncOp func, const attn::TrainingKernels &pair,
              ArrayRef<attn::HostArray> args, const attn::HostArray &o,
              const attn::HostArray &dO, ArrayRef<attn::HostArray> grads,
              std::vector<std::string> &lines) {
  const std::vector<attn::TensorSig> &sigs = pair.backward->arguments();
  auto ins = oracleInputs(sigs, args);
  if (!ins)
    return ins.takeError();
  auto refDO = oracleInputs(ArrayRef(sigs).take_back(), dO);
  if (!refDO)
    return refDO.takeError();
  auto refO = attn::ref::evaluate(func, *ins);
  if (!refO)
    return refO.takeError();
  auto refGrads = attn::ref::evaluateGrad(func, *ins, refDO->front());
  if (!refGrads)
    return refGrads.takeError();
  const attn::ref::TrainingBounds bounds = attn::ref::trainingBounds(func);
  bool ok = true;
  auto add = [&](std::string &line, const attn::ref::Tensor &ref,
                 const attn::HostArray &got,
                 attn::ref::ErrorBound bound) -> Error {
    auto c = checkResult(ref, got, bound);
    if (!c)
      return c.takeError();
    line += c->text + (c->ok ? "" : " [FAIL]");
    ok = ok && c->ok;
    return Error::success();
  };
  if (Error e = add(lines[0], *refO, o, bounds.output))
    return std::move(e);
  for (auto [i, arg] : enumerate(pair.gradArgs)) {
    if (!(*refGrads)[arg])
      return createStringError("the oracle has no gradient for argument " +
                               std::to_string(arg));
    if (Error e =
            add(lines[i + 1], *(*refGrads)[arg], grads[i], bounds.args[arg]))
      return std::move(e);
  }
  return ok;
}

/// --grad: compiles @entry's training pair, runs the forward on the inputs
/// and the backward on them, the forward's saved state and dO; writes,
/// checks and times both. Returns the exit status.
static int runTraining(attn::Engine &engine, StringRef source,
                       const attn::CompileOptions &options,
                       mlir::MLIRContext &ctx) {
  auto t0 = std::chrono::steady_clock::now();
  auto pair = engine.compileTraining(source, options, inputFile);
  if (!pair)
    return fail(pair.takeError());
  double compileSeconds = seconds(std::chrono::steady_clock::now() - t0);
  for (auto [what, kernel] : {std::pair{"forward", pair->forward.get()},
                              {"backward", pair->backward.get()}})
    for (const std::string &remark : kernel->remarks())
      errs() << "attn-run: remark: " << what << ": " << remark << "\n";
  auto module = parsePlain(source, ctx);
  if (!module)
    return fail("cannot parse '" + inputFile + "'");
  auto func = module->lookupSymbol<mlir::func::FuncOp>(entry);
  auto drawn = drawArgs(func, *pair->forward);
  if (!drawn)
    return fail(drawn.takeError());
  std::vector<attn::HostArray> args = std::move(*drawn);
  std::optional<attn::HostArray> dOFile;
  if (args.size() > pair->forward->arguments().size()) {
    dOFile = std::move(args.back());
    args.pop_back();
  }
  if (check)
    if (Error e = checkOracleMemory(func, args, /*withGrads=*/true))
      return fail(std::move(e));

  auto fwd = pair->forward->runAll(args);
  if (!fwd)
    return fail(fwd.takeError());
  const attn::HostArray &o = fwd->front();
  const std::string oType = attn::TensorSig{o.dtype, o.shape}.str();
  attn::HostArray dO =
      dOFile ? std::move(*dOFile)
             : attn::ref::toHost(attn::ref::randomCotangent(o.shape, seed),
                                 attn::DType::F32);
  if (dO.shape != o.shape)
    return fail("dO (the --inputs file after the arguments) is " +
                attn::TensorSig{dO.dtype, dO.shape}.str() +
                ", but the output is " + oType);
  // Saved after the inputs, so that --inputs can replay the whole run.
  if (!dOFile && !saveInputs.empty())
    if (Error e = attn::writeNpy(
            (saveInputs + Twine(args.size()) + ".npy").str(), dO))
      return fail(std::move(e));
  std::vector<attn::HostArray> bwdArgs = args;
  bwdArgs.insert(bwdArgs.end(), fwd->begin(), fwd->end());
  bwdArgs.push_back(dO);
  auto grads = pair->backward->runAll(bwdArgs);
  if (!grads)
    return fail(grads.takeError());
  std::vector<double> fwdTimes, bwdTimes;
  if (timeIt) {
    auto f = pair->forward->benchmark(args, repeat);
    if (!f)
      return fail(f.takeError());
    auto b = pair->backward->benchmark(bwdArgs, repeat);
    if (!b)
      return fail(b.takeError());
    fwdTimes = std::move(*f);
    bwdTimes = std::move(*b);
  }

  // One line each: o, then each gradient, named for its argument.
  std::vector<std::string> names = {"o"};
  std::vector<std::string> lines = {"  o " + oType};
  for (auto [i, arg] : enumerate(pair->gradArgs)) {
    names.push_back("d" + pair->argNames[arg]);
    lines.push_back(
        "  " + names.back() + " " +
        attn::TensorSig{(*grads)[i].dtype, (*grads)[i].shape}.str());
  }
  if (!output.empty()) {
    if (std::error_code ec = sys::fs::create_directories(output))
      return fail("cannot create --output directory '" + output +
                  "': " + ec.message());
    for (auto [i, name] : enumerate(names))
      if (Error e = attn::writeNpy(output + "/" + name + ".npy",
                                   i ? (*grads)[i - 1] : o))
        return fail(std::move(e));
  }
  bool ok = true;
  if (check) {
    auto c = checkTraining(func, *pair, args, o, dO, *grads, lines);
    if (!c)
      return fail(c.takeError());
    ok = *c;
  }

  outs() << inputFile << ": @" << entry << " training pair, forward on "
         << attn::deviceName(pair->forward->device()) << ", backward on "
         << attn::deviceName(pair->backward->device()) << ", saved state "
         << pair->numSaved() << " row log-sum-exp(s), dO "
         << (dOFile ? "from --inputs"
                    : "N(0, 1) with seed " + std::to_string(seed))
         << "\n";
  for (const std::string &line : lines)
    outs() << line << "\n";
  if (timeIt)
    outs() << format("  compile %.3f s, forward %.3f ms, backward %.3f ms "
                     "(median of %u)\n",
                     compileSeconds, median(fwdTimes), median(bwdTimes),
                     unsigned(repeat));
  if (!ok)
    errs() << "attn-run: error: the output or a gradient differs from the "
              "fp64 oracle beyond the bound (lines marked [FAIL])\n";
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "attn-run: run an attn program on the CPU or "
                              "GPU\n");

  if (Error e = checkOptions())
    return fail(std::move(e));
  auto buffer = MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer)
    return fail("cannot read '" + inputFile +
                "': " + buffer.getError().message());
  StringRef source = (*buffer)->getBuffer();

  auto pipe = attn::parsePipeline(pipeline);
  if (!pipe)
    return fail(pipe.takeError());
  auto engine = attn::Engine::create(device);
  if (!engine)
    return fail(engine.takeError());

  attn::CompileOptions options;
  options.entry = entry;
  options.pipeline = *pipe;
  mlir::MLIRContext ctx(plainRegistry());
  if (grad)
    return runTraining(**engine, source, options, ctx);
  auto t0 = std::chrono::steady_clock::now();
  auto kernel = (*engine)->compile(source, options, inputFile);
  if (!kernel)
    return fail(kernel.takeError());
  double compileSeconds = seconds(std::chrono::steady_clock::now() - t0);
  for (const std::string &remark : (*kernel)->remarks())
    errs() << "attn-run: remark: " << remark << "\n";

  auto module = parsePlain(source, ctx);
  if (!module)
    return fail("cannot parse '" + inputFile + "'");
  auto func = module->lookupSymbol<mlir::func::FuncOp>(entry);
  auto drawn = drawArgs(func, **kernel);
  if (!drawn)
    return fail(drawn.takeError());
  std::vector<attn::HostArray> args = std::move(*drawn);
  // The oracle's needs are known now: refuse before the kernel runs.
  if (check)
    if (Error e = checkOracleMemory(func, args, /*withGrads=*/false))
      return fail(std::move(e));

  std::vector<attn::HostArray> results;
  {
    auto out = (*kernel)->runAll(args);
    if (!out)
      return fail(out.takeError());
    results = std::move(*out);
  }
  // Timed runs: device time of the kernels on a GPU (inputs uploaded once),
  // wall time of whole runs on the CPU.
  std::vector<double> runTimes;
  if (timeIt) {
    auto times = (*kernel)->benchmark(args, repeat);
    if (!times)
      return fail(times.takeError());
    runTimes = std::move(*times);
  }
  if (!output.empty())
    for (auto [i, r] : enumerate(results))
      if (Error e = attn::writeNpy(outputPath(i, results.size()), r))
        return fail(std::move(e));

  // The oracle first, so that its failure cannot cut the result line.
  std::vector<CheckOutcome> checked(results.size());
  if (check) {
    auto ins = oracleInputs((*kernel)->arguments(), args);
    if (!ins)
      return fail(ins.takeError());
    auto refs = attn::ref::evaluateAll(func, *ins);
    if (!refs)
      return fail(refs.takeError());
    for (auto [i, r] : enumerate(results)) {
      auto c = checkResult((*refs)[i], r, resultBound(r.dtype));
      if (!c)
        return fail(c.takeError());
      checked[i] = std::move(*c);
    }
  }
  outs() << inputFile << ": @" << entry << " on "
         << attn::deviceName((*kernel)->device());
  for (auto [i, r] : enumerate(results)) {
    outs() << (i ? "; " : ", ") << "result ";
    if (results.size() > 1)
      outs() << i << " ";
    outs() << attn::TensorSig{r.dtype, r.shape}.str() << checked[i].text;
  }
  if (timeIt)
    outs() << format(", compile %.3f s, run %.3f ms (median of %u)",
                     compileSeconds, median(runTimes),
                     unsigned(runTimes.size()));
  outs() << "\n";
  int status = 0;
  for (auto [i, c] : enumerate(checked))
    if (!c.ok) {
      errs() << "attn-run: error: result "
             << (results.size() > 1 ? std::to_string(i) + " " : "")
             << "differs from the fp64 oracle beyond the bound\n";
      status = 1;
    }
  return status;
}
