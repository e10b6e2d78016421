//===- MtaSources.h - MTA programs of the GPU-form tests --------*- C++ -*-===//
//
// attn.attention sources with MTA pieces over 16-bit q, k, v (the GPU
// form's operands) and f32 kernels, mixing weights and norm parameters:
// what MtaGpuFormCpuTest runs on the CPU and GpuMtaTest on the device.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_MTASOURCES_H
#define ATTN_TEST_UNIT_MTASOURCES_H

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace attn::exec_test {

/// Which MTA pieces an attn.attention carries; ch = 0 means c_h = H
/// (weights [?, ?]).
struct MtaForm {
  int cq = 6, ck = 11, ch = 0;
  bool pre = true, mixPre = true, post = true, mixPost = true;
  bool rope = false, fox = false, scaled = false, norm = true, gate = true;
  int d = 64, dv = 64;
  std::string elt = "bf16", attrs;
};

inline std::string mtaSource(const MtaForm &c) {
  auto act = [&](int d) {
    return "tensor<?x?x?x" + std::to_string(d) + "x" + c.elt + ">";
  };
  std::string kq =
      "tensor<?x" + std::to_string(c.cq) + "x" + std::to_string(c.ck) + "xf32>";
  std::string mix =
      "tensor<?x" + (c.ch ? std::to_string(c.ch) : std::string("?")) + "xf32>";
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
    args.push_back({"%wq", mix});
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
     << (c.rope ? " rope" : "") << " D " << c.d << " Dv " << c.dv << " "
     << c.elt << (c.attrs.empty() ? "" : " " + c.attrs);
  return os.str();
}

} // namespace attn::exec_test

#endif // ATTN_TEST_UNIT_MTASOURCES_H
