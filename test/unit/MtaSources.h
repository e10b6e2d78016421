//===- MtaSources.h - MTA programs of the GPU-form tests --------*- C++ -*-===//
//
// attn.attention sources with MTA pieces over 16-bit q, k, v (the GPU
// form's operands) and f32 kernels, mixing weights and norm parameters:
// what MtaGpuFormCpuTest runs on the CPU and GpuMtaTest on the device.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_MTASOURCES_H
#define ATTN_TEST_UNIT_MTASOURCES_H

#include "ExecutionHelpers.h"
#include "ProgramOracle.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace attn::exec_test {

/// Which MTA pieces an attn.attention carries; ch = 0 means c_h = H
/// (weights [?, ?]); chPost -1: the post mix's c_h is ch.
struct MtaForm {
  int cq = 6, ck = 11, ch = 0, chPost = -1;
  bool pre = true, mixPre = true, post = true, mixPost = true;
  bool rope = false, fox = false, scaled = false, norm = true, gate = true;
  /// Packed sequences: a cu_seqlens argument (random cuts of T = S).
  bool packed = false;
  int d = 64, dv = 64;
  std::string elt = "bf16", attrs;
};

inline std::string mtaSource(const MtaForm &c) {
  auto act = [&](int d) {
    return "tensor<?x?x?x" + std::to_string(d) + "x" + c.elt + ">";
  };
  std::string kq =
      "tensor<?x" + std::to_string(c.cq) + "x" + std::to_string(c.ck) + "xf32>";
  auto mixType = [](int ch) {
    return "tensor<?x" + (ch ? std::to_string(ch) : std::string("?")) + "xf32>";
  };
  std::string mix = mixType(c.ch),
              mixPost = mixType(c.chPost < 0 ? c.ch : c.chPost);
  std::string vec = "tensor<" + std::to_string(c.dv) + "xf32>";
  std::vector<std::pair<std::string, std::string>> args = {
      {"%q", act(c.d)}, {"%k", act(c.d)}, {"%v", act(c.dv)}};
  std::string attrs;
  if (c.rope)
    attrs += " rope(1.000000e+04)";
  if (c.fox) {
    args.push_back({"%g", "tensor<?x?x?xf32>"});
    attrs += c.scaled ? " gate(%g) scaled" : " gate(%g)";
  }
  if (c.pre) {
    args.push_back({"%tp", kq});
    attrs += " kq_conv_pre(%tp)";
  }
  if (c.mixPre) {
    args.push_back({"%wp", mix});
    attrs += " head_mix_pre(%wp)";
  }
  if (c.post) {
    args.push_back({"%tq", kq});
    attrs += " kq_conv_post(%tq)";
  }
  if (c.mixPost) {
    args.push_back({"%wq", mixPost});
    attrs += " head_mix_post(%wq)";
  }
  if (c.norm) {
    args.push_back({"%gamma", vec});
    attrs += " norm(%gamma)";
    if (c.gate) {
      args.push_back({"%gw", vec});
      args.push_back({"%gb", "tensor<1xf32>"});
      attrs += " norm_gate(%gw, %gb)";
    }
  }
  if (c.packed) {
    args.push_back({"%cu", "tensor<?xi32>"});
    attrs += " cu_seqlens(%cu)";
  }
  if (!c.attrs.empty())
    attrs += " " + c.attrs;
  std::string sig, types;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string sep = i ? ", " : "";
    sig += sep + args[i].first + ": " + args[i].second;
    types += sep + args[i].second;
  }
  return "func.func @main(" + sig + ") -> " + act(c.dv) +
         " {\n  %o = attn.attention %q, %k, %v" + attrs + " : (" + types +
         ") -> " + act(c.dv) + "\n  return %o : " + act(c.dv) + "\n}\n";
}

inline std::string describe(const MtaForm &c) {
  std::ostringstream os;
  os << "kernel " << c.cq << "x" << c.ck << " c_h "
     << (c.ch ? std::to_string(c.ch) : "H") << (c.pre ? " pre" : "")
     << (c.mixPre ? " mix-pre" : "") << (c.post ? " post" : "")
     << (c.mixPost ? " mix-post" : "") << (c.norm ? " norm" : "")
     << (c.gate ? "+gate" : "")
     << (c.fox ? (c.scaled ? " fox scaled" : " fox") : "")
     << (c.rope ? " rope" : "") << (c.packed ? " packed" : "") << " D " << c.d
     << " Dv " << c.dv << " " << c.elt
     << (c.attrs.empty() ? "" : " " + c.attrs);
  return os.str();
}

inline attn::DType dtypeOf(const std::string &elt) {
  return elt == "f16" ? attn::DType::F16 : attn::DType::BF16;
}

/// Random inputs for `f` with [b, hq, t] queries, s keys and hk KV heads
/// (the oracle's randomInputs for the kernels, weights and norm
/// parameters); q, k, v rounded to the 16-bit type and the convolution
/// kernels ([H, c_q, c_k]) to f16, so that the oracle sees what the GPU
/// form's kernels see: its Toeplitz operands hold the taps in f16
/// (MtaToBlockGpu.cpp, "Precision"). With f32 taps a row whose mixed
/// probabilities nearly cancel can miss the per-row bound on rounding
/// alone (seed 25710341942455 of SixteenHeadsMixedInGroupsOfEightAndSixteen
/// gave 0.109 with f32 taps, 2.4e-3 with the same taps in f16).
inline std::vector<Tensor> mtaInputs(const MtaForm &f, int64_t b, int64_t hq,
                                     int64_t hk, int64_t t, int64_t s,
                                     uint64_t seed) {
  std::string src = mtaSource(f);
  Program p(src);
  EXPECT_TRUE(p.module) << src;
  if (!p.module)
    return {};
  attn::ref::RandomSpec spec;
  spec.batch = b;
  spec.heads = hq;
  spec.seqLen = s;
  spec.seed = seed;
  auto ins = attn::ref::randomInputs(p.main(), spec);
  EXPECT_TRUE(static_cast<bool>(ins)) << llvm::toString(ins.takeError());
  if (!ins)
    return {};
  (*ins)[0] = attn::ref::randn({b, hq, t, f.d}, seed + 100);
  (*ins)[1] = attn::ref::randn({b, hk, s, f.d}, seed + 101);
  (*ins)[2] = attn::ref::randn({b, hk, s, f.dv}, seed + 102);
  for (int i = 0; i < 3; ++i)
    (*ins)[i] =
        *attn::ref::fromHost(attn::ref::toHost((*ins)[i], dtypeOf(f.elt)));
  const std::vector<int64_t> taps = {hq, f.cq, f.ck};
  for (size_t i = 3; i < ins->size(); ++i)
    if ((*ins)[i].shape == taps)
      (*ins)[i] =
          *attn::ref::fromHost(attn::ref::toHost((*ins)[i], attn::DType::F16));
  return *ins;
}

/// Host arrays of `ins`: q, k, v in f's 16-bit type, cu_seqlens (last,
/// when packed) in i32, the rest f32.
inline std::vector<HostArray> mtaHostInputs(const MtaForm &f,
                                            const std::vector<Tensor> &ins) {
  std::vector<HostArray> host;
  for (size_t i = 0; i < ins.size(); ++i) {
    attn::DType t = i < 3 ? dtypeOf(f.elt) : attn::DType::F32;
    if (f.packed && i + 1 == ins.size())
      t = attn::DType::I32;
    host.push_back(attn::ref::toHost(ins[i], t));
  }
  return host;
}

} // namespace attn::exec_test

#endif // ATTN_TEST_UNIT_MTASOURCES_H
