//===- HostApiSupport.h - launch() tests on either device -------*- C++ -*-===//
//
// One harness for the host-program API on the CPU (attn-hostapi-tests, in
// CI) and on the GPU (attn-gpu-tests): fresh random inputs (seed printed on
// failure) are laid out in caller-owned memory as BHSD or BSHD views,
// the output is poisoned with all-ones bytes (NaN in every float type) and
// guarded by a poisoned tail, Kernel::launch runs on them, and the result
// is compared with the fp64 oracle on the same rounded inputs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_HOSTAPISUPPORT_H
#define ATTN_TEST_UNIT_HOSTAPISUPPORT_H

#include "ParsedModule.h"
#include "ProgramOracle.h"
#include "attn/Dialect/AttnDialect.h"
#include "attn/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace attn::hostapi {

using ref::Tensor;

/// Memory the caller owns, on one device; freed with the Memory.
class Memory {
public:
  virtual ~Memory() = default;
  virtual Device device() const = 0;
  virtual void *alloc(size_t bytes) = 0;
  virtual void upload(void *dst, const void *src, size_t bytes) = 0;
  virtual void download(void *dst, const void *src, size_t bytes) = 0;
  virtual void fill(void *dst, unsigned char byte, size_t bytes) = 0;
  /// A stream for launches (nullptr on the CPU) and a wait for it.
  virtual void *stream() { return nullptr; }
  virtual void wait(void *stream) {}
};

class HostMemory : public Memory {
public:
  Device device() const override { return Device::CPU; }
  void *alloc(size_t bytes) override {
    // 64-byte aligned, like any allocator a framework uses.
    blocks.emplace_back(bytes + 64);
    auto p = reinterpret_cast<uintptr_t>(blocks.back().data());
    return reinterpret_cast<void *>((p + 63) & ~uintptr_t(63));
  }
  void upload(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void download(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void fill(void *dst, unsigned char byte, size_t bytes) override {
    std::memset(dst, byte, bytes);
  }

private:
  std::vector<std::vector<uint8_t>> blocks;
};

using attn::ref::freshSeed;

/// The CPU engine the host-API tests share (one per process).
inline Engine &cpuEngine() {
  // Never destroyed: JIT-compiled kernels must not outlive LLVM's static
  // state, which static destruction at exit does not order.
  static Engine *e = [] {
    auto created = Engine::create("cpu");
    if (!created) {
      ADD_FAILURE() << llvm::toString(created.takeError());
      std::abort();
    }
    return created->release();
  }();
  return *e;
}

/// A parsed program for the oracle (one context per instance: threads each
/// parse their own).
using Parsed = attn::test_util::ParsedModule;

/// attn.attention on dynamic [B, H, T, D] tensors: "plain", "rope", "fox"
/// or "rope_fox", with `extra` attributes (e.g. "mask none").
inline std::string attentionProgram(const std::string &variant, int64_t D,
                                    const std::string &elt,
                                    const std::string &extra = "") {
  std::string t = "tensor<?x?x?x" + std::to_string(D) + "x" + elt + ">";
  bool gate = variant == "fox" || variant == "rope_fox";
  bool rope = variant == "rope" || variant == "rope_fox";
  std::string g = "tensor<?x?x?xf32>";
  std::string args =
      "%q: " + t + ", %k: " + t + ", %v: " + t + (gate ? ", %g: " + g : "");
  std::string types = t + ", " + t + ", " + t + (gate ? ", " + g : "");
  return "func.func @main(" + args + ") -> " + t +
         " {\n  %o = attn.attention %q, %k, %v" +
         (rope ? " rope(1.000000e+04)" : "") + (gate ? " gate(%g)" : "") +
         (extra.empty() ? "" : " " + extra) + " : (" + types + ") -> " + t +
         "\n  return %o : " + t + "\n}\n";
}

enum class Layout { BHSD, BSHD };

/// A caller-owned copy of `t` in `layout` (4-D tensors; 3-D gates [B,H,S]
/// as [B,S,H] when `gateTransposed`), and the view of it.
inline TensorView place(Memory &mem, const Tensor &t, DType dtype,
                        Layout layout, bool gateTransposed,
                        size_t guardBytes = 0) {
  HostArray dense = ref::toHost(t, dtype);
  size_t esz = dtypeSize(dtype), n = dense.numel();
  std::vector<int64_t> strides;
  std::vector<uint8_t> bytes(n * esz);
  auto scatter = [&](const std::vector<int64_t> &st) {
    // Element (i0..ik) of the dense array to its strided place.
    size_t rank = t.shape.size();
    std::vector<int64_t> idx(rank, 0);
    for (size_t lin = 0; lin < n; ++lin) {
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d)
        off += idx[d] * st[d];
      std::memcpy(&bytes[off * esz], &dense.bytes[lin * esz], esz);
      for (size_t d = rank; d-- > 0;)
        if (++idx[d] < t.shape[d])
          break;
        else
          idx[d] = 0;
    }
    strides = st;
  };
  const auto &s = t.shape;
  if (s.size() == 4 && layout == Layout::BSHD)
    scatter({s[2] * s[1] * s[3], s[3], s[1] * s[3], 1});
  else if (s.size() == 3 && gateTransposed)
    scatter({s[2] * s[1], 1, s[1]});
  else
    bytes = dense.bytes;
  void *p = mem.alloc(bytes.size() + guardBytes);
  mem.upload(p, bytes.data(), bytes.size());
  return TensorView(p, dtype, t.shape, strides, mem.device());
}

/// The output view in `layout`, poisoned, with `guardBytes` poisoned bytes
/// after it.
inline TensorView placeOutput(Memory &mem, const std::vector<int64_t> &shape,
                              DType dtype, Layout layout, size_t guardBytes) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  size_t bytes = n * dtypeSize(dtype) + guardBytes;
  void *p = mem.alloc(bytes);
  mem.fill(p, 0xFF, bytes);
  std::vector<int64_t> strides;
  if (layout == Layout::BSHD)
    strides = {shape[2] * shape[1] * shape[3], shape[3], shape[1] * shape[3],
               1};
  return TensorView(p, dtype, shape, strides, mem.device());
}

/// The output read back as a dense oracle tensor; `guardOk` tells whether
/// the bytes after it are still poison.
inline Tensor readOutput(Memory &mem, const TensorView &out, size_t guardBytes,
                         bool &guardOk) {
  size_t esz = dtypeSize(out.dtype), n = out.numel();
  std::vector<uint8_t> raw(n * esz + guardBytes);
  mem.download(raw.data(), out.data, raw.size());
  guardOk = true;
  for (size_t i = n * esz; i < raw.size(); ++i)
    guardOk &= raw[i] == 0xFF;
  HostArray dense{out.dtype,
                  std::vector<int64_t>(out.shape.begin(), out.shape.end()),
                  std::vector<uint8_t>(n * esz)};
  size_t rank = out.shape.size();
  std::vector<int64_t> idx(rank, 0);
  for (size_t lin = 0; lin < n; ++lin) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d)
      off += idx[d] * out.stride(d);
    std::memcpy(&dense.bytes[lin * esz], &raw[off * esz], esz);
    for (size_t d = rank; d-- > 0;)
      if (++idx[d] < out.shape[d])
        break;
      else
        idx[d] = 0;
  }
  auto t = ref::fromHost(dense);
  return t ? std::move(*t) : Tensor();
}

struct Shape {
  int64_t B, H, T;
};

struct Outcome {
  double err = INFINITY;
  size_t nonFinite = 0;
  bool guardOk = false;
  std::string error; // launch() failed
};

/// Draws inputs for `src` at `shape` from `seed`, launches `kernel` on them
/// in `layout` through `mem`, and measures the error vs the oracle
/// (relative max error for f32, relative RMS otherwise).
inline Outcome launchAndCompare(Kernel &kernel, const std::string &src,
                                Memory &mem, Shape shape, Layout layout,
                                uint64_t seed) {
  Outcome o;
  Parsed p(src);
  if (!p.module) {
    o.error = "program does not parse";
    return o;
  }
  ref::RandomSpec spec;
  spec.batch = shape.B;
  spec.heads = shape.H;
  spec.seqLen = shape.T;
  spec.seed = seed;
  auto ins = ref::randomInputs(p.main(), spec);
  if (!ins) {
    o.error = llvm::toString(ins.takeError());
    return o;
  }
  std::vector<Tensor> rounded;
  std::vector<TensorView> views;
  for (size_t i = 0; i < ins->size(); ++i) {
    DType dt = kernel.arguments()[i].dtype;
    auto r = ref::fromHost(ref::toHost((*ins)[i], dt));
    rounded.push_back(r ? std::move(*r) : Tensor());
    // The gate goes transposed on the CPU (any strides work there); on
    // the GPU its innermost stride must stay 1.
    views.push_back(
        place(mem, rounded.back(), dt, layout,
              layout == Layout::BSHD && mem.device() == Device::CPU));
  }
  auto want = ref::evaluate(p.main(), rounded);
  if (!want) {
    o.error = llvm::toString(want.takeError());
    return o;
  }
  auto shapeOut = kernel.resultShape(views);
  if (!shapeOut) {
    o.error = llvm::toString(shapeOut.takeError());
    return o;
  }
  const size_t guard = 256;
  TensorView out =
      placeOutput(mem, *shapeOut, kernel.result().dtype, layout, guard);
  void *stream = mem.stream();
  if (llvm::Error e = kernel.launch(views, out, stream)) {
    o.error = llvm::toString(std::move(e));
    return o;
  }
  mem.wait(stream);
  Tensor got = readOutput(mem, out, guard, o.guardOk);
  for (double x : got.data)
    o.nonFinite += !std::isfinite(x);
  o.err = kernel.result().dtype == DType::F32 ? ref::relError(got, *want)
                                              : ref::relRmsError(got, *want);
  return o;
}

using MemoryFactory = std::function<std::unique_ptr<Memory>()>;

/// One compile serves every B, H, T: the engine hands back the same kernel
/// for the same text, and each shape matches the oracle.
inline void anyShapeOneKernel(Engine &engine, const MemoryFactory &memory,
                              const std::string &elt, double tol) {
  std::string src = attentionProgram("fox", 64, elt);
  auto kernel = engine.compile(src);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  std::unique_ptr<Memory> mem = memory();
  ASSERT_EQ((*kernel)->device(), mem->device());
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 65}, Shape{1, 4, 130},
                  Shape{3, 2, 17}, Shape{1, 2, 300}}) {
    auto again = engine.compile(src);
    ASSERT_TRUE(static_cast<bool>(again));
    EXPECT_EQ(again->get(), kernel->get()) << "recompiled for a new shape";
    uint64_t seed = freshSeed();
    Outcome o = launchAndCompare(**kernel, src, *mem, s, Layout::BHSD, seed);
    ASSERT_TRUE(o.error.empty()) << o.error;
    EXPECT_EQ(o.nonFinite, 0u) << "unwritten outputs, seed " << seed;
    EXPECT_TRUE(o.guardOk) << "wrote past the output, seed " << seed;
    EXPECT_LE(o.err, tol) << "B=" << s.B << " H=" << s.H << " T=" << s.T
                          << " seed " << seed;
  }
}

/// BSHD inputs and output (strided views of [B, S, H, D] buffers) give the
/// BHSD result, for each variant.
inline void stridedLayouts(Engine &engine, const MemoryFactory &memory,
                           const std::string &elt, double tol) {
  std::unique_ptr<Memory> mem = memory();
  for (const char *variant : {"plain", "rope", "fox"}) {
    std::string src = attentionProgram(variant, 64, elt);
    auto kernel = engine.compile(src);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    for (Layout layout : {Layout::BHSD, Layout::BSHD}) {
      uint64_t seed = freshSeed();
      Outcome o =
          launchAndCompare(**kernel, src, *mem, Shape{2, 3, 77}, layout, seed);
      const char *name = layout == Layout::BSHD ? "BSHD" : "BHSD";
      ASSERT_TRUE(o.error.empty()) << variant << " " << name << ": " << o.error;
      EXPECT_EQ(o.nonFinite, 0u) << variant << " " << name << " seed " << seed;
      EXPECT_TRUE(o.guardOk) << variant << " " << name << " seed " << seed;
      EXPECT_LE(o.err, tol) << variant << " " << name << " seed " << seed;
    }
  }
}

/// 8 threads, each compiling (two threads per program text, so the cache
/// is contended too) and launching at its own shapes and layouts.
inline void concurrentCompileAndLaunch(const std::string &device,
                                       const MemoryFactory &memory,
                                       const std::string &elt, double tol) {
  auto engine = Engine::create(device);
  ASSERT_TRUE(static_cast<bool>(engine)) << llvm::toString(engine.takeError());
  const char *variants[] = {"plain", "rope", "fox", "rope_fox"};
  const uint64_t seed = freshSeed();
  std::vector<std::string> failures(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::string src = attentionProgram(variants[t % 4], 64, elt);
      auto kernel = (*engine)->compile(src);
      if (!kernel) {
        failures[t] = "compile: " + llvm::toString(kernel.takeError());
        return;
      }
      std::unique_ptr<Memory> mem = memory();
      for (int i = 0; i < 3; ++i) {
        Shape s{1 + (t + i) % 2, 1 + t % 3, 20 + 37 * i + t};
        Layout layout = (t + i) % 2 ? Layout::BSHD : Layout::BHSD;
        Outcome o =
            launchAndCompare(**kernel, src, *mem, s, layout, seed + 16 * t + i);
        if (!o.error.empty() || o.nonFinite || !o.guardOk || !(o.err <= tol)) {
          failures[t] =
              std::string(variants[t % 4]) + " T=" + std::to_string(s.T) +
              ": error " + std::to_string(o.err) + ", non-finite " +
              std::to_string(o.nonFinite) +
              (o.guardOk ? "" : ", wrote past the output") + " " + o.error;
          return;
        }
      }
    });
  for (std::thread &th : threads)
    th.join();
  for (int t = 0; t < 8; ++t)
    EXPECT_TRUE(failures[t].empty())
        << "thread " << t << " (seed " << seed << "): " << failures[t];
}

} // namespace attn::hostapi

#endif // ATTN_TEST_UNIT_HOSTAPISUPPORT_H
