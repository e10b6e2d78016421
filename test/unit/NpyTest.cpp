//===- NpyTest.cpp - Tests for .npy I/O and f16/bf16 conversions ----------===//

#include "attn/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace attn;

namespace {

/// A fresh temporary directory, removed at the end of the test.
class TempDir {
public:
  TempDir() {
    std::error_code ec = llvm::sys::fs::createUniqueDirectory("attn-npy", dir);
    EXPECT_FALSE(ec) << ec.message();
  }
  ~TempDir() { llvm::sys::fs::remove_directories(dir); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      out.push_back(std::string(llvm::sys::path::filename(it->path())));
    return out;
  }

private:
  llvm::SmallString<256> dir;
};

template <typename T>
NpyArray makeArray(DType dtype, std::vector<int64_t> shape,
                   const std::vector<T> &values) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.bytes.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

template <typename T> std::vector<T> values(const NpyArray &a) {
  std::vector<T> out(a.bytes.size() / sizeof(T));
  if (!out.empty())
    std::memcpy(out.data(), a.bytes.data(), a.bytes.size());
  return out;
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// A .npy byte stream with an arbitrary header dict (v1.0 unless told).
std::string npyWithHeader(const std::string &dict, const std::string &data,
                          unsigned major = 1, unsigned minor = 0) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  std::string header = dict;
  const size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  uint32_t len = static_cast<uint32_t>(header.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  return out + header + data;
}

std::string f32Bytes(std::vector<float> v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * 4);
}

/// Expects an error whose message names `name` and contains `what`.
void expectError(llvm::Expected<NpyArray> result, llvm::StringRef name,
                 llvm::StringRef what) {
  ASSERT_FALSE(static_cast<bool>(result))
      << "accepted input for: " << what.str();
  std::string msg = llvm::toString(result.takeError());
  EXPECT_NE(msg.find(name.str()), std::string::npos) << msg;
  EXPECT_NE(msg.find(what.str()), std::string::npos)
      << "message '" << msg << "' lacks '" << what.str() << "'";
}

const std::string kValidDict =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
const std::string kSixFloats = f32Bytes({1, 2, 3, 4, 5, 6});

} // namespace

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

TEST(Npy, RoundTripEveryDType) {
  TempDir tmp;
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {5}, {2, 3, 4}, {2, 0, 3}, {1, 1, 1, 1, 7}};
  for (const auto &shape : shapes) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::vector<NpyArray> arrays;
    {
      std::vector<float> f32(n);
      std::vector<double> f64(n);
      std::vector<uint16_t> f16(n);
      std::vector<int64_t> i64(n);
      std::vector<int32_t> i32(n);
      for (int64_t i = 0; i < n; ++i) {
        f32[i] = 0.5f * i - 3.25f;
        f64[i] = std::sqrt(2.0) * i - 1e300 * (i == 1);
        f16[i] = floatToHalf(0.25f * i - 1);
        i64[i] = (int64_t(1) << 40) * i - 7;
        i32[i] = -100000 * i + 3;
      }
      arrays.push_back(makeArray(DType::F32, shape, f32));
      arrays.push_back(makeArray(DType::F64, shape, f64));
      arrays.push_back(makeArray(DType::F16, shape, f16));
      arrays.push_back(makeArray(DType::I64, shape, i64));
      arrays.push_back(makeArray(DType::I32, shape, i32));
    }
    for (const NpyArray &a : arrays) {
      const std::string path = tmp.file("a.npy");
      ASSERT_FALSE(static_cast<bool>(writeNpy(path, a)));
      llvm::Expected<NpyArray> back = readNpy(path);
      ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
      EXPECT_EQ(back->dtype, a.dtype) << dtypeName(a.dtype).str();
      EXPECT_EQ(back->shape, a.shape);
      EXPECT_EQ(back->bytes, a.bytes);
      EXPECT_EQ(back->numel(), static_cast<size_t>(n));

      // The in-memory encoder produces exactly the file's bytes, with the
      // data 64-byte aligned after a NumPy-style header.
      llvm::Expected<std::string> enc = writeNpyBuffer(a, "mem");
      ASSERT_TRUE(static_cast<bool>(enc));
      EXPECT_EQ((enc->size() - a.bytes.size()) % 64, 0u);
      EXPECT_EQ(enc->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
      llvm::Expected<NpyArray> mem = readNpyBuffer(*enc, "mem");
      ASSERT_TRUE(static_cast<bool>(mem));
      EXPECT_EQ(mem->bytes, a.bytes);
    }
  }
  // Atomic write leaves no temporary files behind.
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"a.npy"});
}

TEST(Npy, HeaderTextMatchesNumPy) {
  NpyArray a = makeArray<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  llvm::Expected<std::string> enc = writeNpyBuffer(a, "x");
  ASSERT_TRUE(static_cast<bool>(enc));
  // numpy.save(np.arange(1, 7, dtype='<f4').reshape(2, 3)) writes exactly
  // this 128-byte prefix.
  std::string want = npyWithHeader(kValidDict, "");
  EXPECT_EQ(enc->substr(0, want.size()), want);
  EXPECT_EQ(want.size(), 128u);

  NpyArray v = makeArray<int32_t>(DType::I32, {4}, {1, 2, 3, 4});
  enc = writeNpyBuffer(v, "x");
  ASSERT_TRUE(static_cast<bool>(enc));
  EXPECT_NE(enc->find("'shape': (4,), }"), std::string::npos);
  NpyArray s = makeArray<double>(DType::F64, {}, {2.5});
  enc = writeNpyBuffer(s, "x");
  ASSERT_TRUE(static_cast<bool>(enc));
  EXPECT_NE(enc->find("'descr': '<f8', 'fortran_order': False, 'shape': (), }"),
            std::string::npos);
}

TEST(Npy, Bf16IsWrittenAsF32) {
  std::vector<uint16_t> bf = {floatToBf16(1.0f), floatToBf16(-2.5f),
                              floatToBf16(3.140625f), 0x7f80 /*inf*/};
  NpyArray a = makeArray(DType::BF16, {2, 2}, bf);
  llvm::Expected<std::string> enc = writeNpyBuffer(a, "bf");
  ASSERT_TRUE(static_cast<bool>(enc));
  llvm::Expected<NpyArray> back = readNpyBuffer(*enc, "bf");
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(back->dtype, DType::F32);
  EXPECT_EQ(back->shape, (std::vector<int64_t>{2, 2}));
  std::vector<float> f = values<float>(*back);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -2.5f);
  EXPECT_EQ(f[2], 3.140625f);
  EXPECT_EQ(f[3], std::numeric_limits<float>::infinity());
}

TEST(Npy, AcceptsOtherValidSpellings) {
  // Version 2.0 and 3.0 (4-byte header length), including a header > 64 KiB.
  for (unsigned major : {2u, 3u}) {
    llvm::Expected<NpyArray> a =
        readNpyBuffer(npyWithHeader(kValidDict, kSixFloats, major), "v");
    ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
    EXPECT_EQ(values<float>(*a), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
  std::string big = kValidDict + std::string(70000, ' ');
  llvm::Expected<NpyArray> b =
      readNpyBuffer(npyWithHeader(big, kSixFloats, 2), "big");
  ASSERT_TRUE(static_cast<bool>(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->shape, (std::vector<int64_t>{2, 3}));

  // Double quotes, other key order, no trailing comma, Python-2 long suffix.
  llvm::Expected<NpyArray> c =
      readNpyBuffer(npyWithHeader("{\"shape\":(2L,3L),\"fortran_order\":False,"
                                  "\"descr\":\"<f4\"}",
                                  kSixFloats),
                    "c");
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->shape, (std::vector<int64_t>{2, 3}));
  // Unpadded header with no newline.
  std::string raw("\x93NUMPY\x01\x00", 8);
  std::string dict = "{'descr':'<i4','fortran_order':False,'shape':(1,)}";
  raw += static_cast<char>(dict.size());
  raw += '\0';
  raw += dict;
  raw += std::string("\x2a\x00\x00\x00", 4);
  llvm::Expected<NpyArray> d = readNpyBuffer(raw, "d");
  ASSERT_TRUE(static_cast<bool>(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(values<int32_t>(*d), std::vector<int32_t>{42});
  EXPECT_EQ(d->dtype, DType::I32);
}

//===----------------------------------------------------------------------===//
// Malformed inputs: every one must be an llvm::Error naming file + problem
//===----------------------------------------------------------------------===//

TEST(Npy, MalformedInputsAreErrors) {
  const std::string valid = npyWithHeader(kValidDict, kSixFloats);
  auto dictWith = [](const std::string &descr, const std::string &fortran,
                     const std::string &shape) {
    return "{'descr': " + descr + ", 'fortran_order': " + fortran +
           ", 'shape': " + shape + ", }";
  };
  struct Case {
    std::string what;  // expected message fragment
    std::string bytes; // file contents
  };
  std::vector<Case> cases = {
      {"bad magic", ""},
      {"bad magic", "\x93NUMPZ\x01\x00\x10\x00"},
      {"bad magic", "PK\x03\x04 this is a zip file"},
      {"no version", std::string("\x93NUMPY\x01", 7)},
      {"version 4.0", npyWithHeader(kValidDict, kSixFloats, 4)},
      {"version 1.1", npyWithHeader(kValidDict, kSixFloats, 1, 1)},
      {"version 0.0", npyWithHeader(kValidDict, kSixFloats, 0)},
      {"no header length", std::string("\x93NUMPY\x01\x00\x10", 9)},
      {"no header length", std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11)},
      {"truncated header", valid.substr(0, 60)},
      {"truncated header",
       std::string("\x93NUMPY\x01\x00\xff\xff", 10) + kValidDict},
      {"not a Python dict", npyWithHeader("[1, 2, 3]", kSixFloats)},
      {"not a Python dict", npyWithHeader("", kSixFloats)},
      {"fortran_order True",
       npyWithHeader(dictWith("'<f4'", "True", "(2, 3)"), kSixFloats)},
      {"not True or False",
       npyWithHeader(dictWith("'<f4'", "'no'", "(2, 3)"), kSixFloats)},
      {"unsupported descr '<u2'",
       npyWithHeader(dictWith("'<u2'", "False", "(6,)"),
                     std::string(12, '\0'))},
      {"unsupported descr '|b1'",
       npyWithHeader(dictWith("'|b1'", "False", "(6,)"), std::string(6, '\0'))},
      {"unsupported descr '<c8'",
       npyWithHeader(dictWith("'<c8'", "False", "(3,)"), kSixFloats)},
      {"only simple dtypes",
       npyWithHeader(dictWith("[('a', '<f4')]", "False", "(6,)"), kSixFloats)},
      {"big-endian",
       npyWithHeader(dictWith("'>f4'", "False", "(2, 3)"), kSixFloats)},
      {"data size mismatch", valid.substr(0, valid.size() - 1)},
      {"data size mismatch", valid + "x"},
      {"data size mismatch",
       npyWithHeader(dictWith("'<f8'", "False", "(2, 3)"), kSixFloats)},
      {"data size mismatch",
       npyWithHeader(dictWith("'<f4'", "False", "()"), kSixFloats)},
      {"no 'shape' key",
       npyWithHeader("{'descr': '<f4', 'fortran_order': False}", kSixFloats)},
      {"no 'descr' key",
       npyWithHeader("{'fortran_order': False, 'shape': (6,)}", kSixFloats)},
      {"unexpected header key 'order'",
       npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (6,),"
                     " 'order': 1}",
                     kSixFloats)},
      {"duplicate key 'shape'",
       npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (6,),"
                     " 'shape': (6,)}",
                     kSixFloats)},
      {"non-negative integers",
       npyWithHeader(dictWith("'<f4'", "False", "(-6,)"), kSixFloats)},
      {"too large",
       npyWithHeader(dictWith("'<f4'", "False", "(99999999999999999999,)"),
                     kSixFloats)},
      {"too many elements",
       npyWithHeader(dictWith("'<f4'", "False", "(4294967296, 4294967296)"),
                     kSixFloats)},
      {"missing ','",
       npyWithHeader(dictWith("'<f4'", "False", "(6)"), kSixFloats)},
      {"not a tuple",
       npyWithHeader(dictWith("'<f4'", "False", "6"), kSixFloats)},
      {"expected ','",
       npyWithHeader(dictWith("'<f4'", "False", "(2 3)"), kSixFloats)},
      {"unterminated string", npyWithHeader("{'descr': '<f4}", kSixFloats)},
      {"NUL byte",
       npyWithHeader(std::string("{'descr'\0: 1}", 13), kSixFloats)},
      {"trailing characters", npyWithHeader(kValidDict + " junk", kSixFloats)},
      {"expected ',' or '}'",
       npyWithHeader("{'descr': '<f4' 'fortran_order': False}", kSixFloats)},
      {"expected ':'", npyWithHeader("{'descr' '<f4'}", kSixFloats)},
  };
  ASSERT_GE(cases.size(), 12u);
  for (const Case &c : cases)
    expectError(readNpyBuffer(c.bytes, "bad.npy"), "bad.npy", c.what);

  // The same through the file API.
  TempDir tmp;
  const std::string path = tmp.file("corrupt.npy");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << valid.substr(0, valid.size() - 3);
  }
  expectError(readNpy(path), path, "data size mismatch");
  expectError(readNpy(tmp.file("missing.npy")), tmp.file("missing.npy"),
              "cannot read file");
}

TEST(Npy, EveryTruncationAndByteFlipIsHandled) {
  const std::string valid = npyWithHeader(kValidDict, kSixFloats);
  for (size_t len = 0; len < valid.size(); ++len) {
    llvm::Expected<NpyArray> r = readNpyBuffer(valid.substr(0, len), "t.npy");
    ASSERT_FALSE(static_cast<bool>(r)) << "prefix of length " << len;
    EXPECT_NE(llvm::toString(r.takeError()).find("t.npy"), std::string::npos);
  }
  // Flip every byte of the preamble and header to a few values: the reader
  // must return (success or error), never crash.
  int accepted = 0, rejected = 0;
  for (size_t pos = 0; pos < 128; ++pos)
    for (unsigned char v : {0x00, 0x20, 0x27, 0x28, 0x29, 0x2c, 0x31, 0x39,
                            0x7b, 0x7d, 0x80, 0xff}) {
      std::string s = valid;
      s[pos] = static_cast<char>(v);
      llvm::Expected<NpyArray> r = readNpyBuffer(s, "f.npy");
      if (r)
        ++accepted;
      else {
        ++rejected;
        llvm::consumeError(r.takeError());
      }
    }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0); // e.g. changes inside the padding
}

TEST(Npy, WriteErrors) {
  TempDir tmp;
  NpyArray bad = makeArray<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5});
  llvm::Error e = writeNpy(tmp.file("bad.npy"), bad);
  ASSERT_TRUE(static_cast<bool>(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("bad.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("do not match"), std::string::npos) << msg;

  NpyArray neg = makeArray<float>(DType::F32, {-1}, {});
  e = writeNpy(tmp.file("neg.npy"), neg);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("invalid shape"),
            std::string::npos);

  NpyArray ok = makeArray<float>(DType::F32, {1}, {1});
  const std::string noDir = tmp.file("no/such/dir/x.npy");
  e = writeNpy(noDir, ok);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(std::move(e)).find(noDir), std::string::npos);

  // Overwriting an existing file replaces it.
  const std::string path = tmp.file("x.npy");
  ASSERT_FALSE(static_cast<bool>(writeNpy(path, ok)));
  NpyArray two = makeArray<int64_t>(DType::I64, {2}, {5, 6});
  ASSERT_FALSE(static_cast<bool>(writeNpy(path, two)));
  llvm::Expected<NpyArray> back = readNpy(path);
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(values<int64_t>(*back), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"x.npy"});
}

TEST(Npy, DTypeNames) {
  EXPECT_EQ(dtypeName(DType::F32), "f32");
  EXPECT_EQ(dtypeName(DType::F16), "f16");
  EXPECT_EQ(dtypeName(DType::BF16), "bf16");
  EXPECT_EQ(dtypeName(DType::F64), "f64");
  EXPECT_EQ(dtypeName(DType::I64), "i64");
  EXPECT_EQ(dtypeName(DType::I32), "i32");
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
}

//===----------------------------------------------------------------------===//
// f16 / bf16 conversions
//===----------------------------------------------------------------------===//

TEST(Half, EdgeCases) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);   // max finite
  EXPECT_EQ(floatToHalf(65519.996f), 0x7bff); // just below the tie
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);   // tie rounds to inf
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(inf), 0x7c00);
  EXPECT_EQ(floatToHalf(-inf), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400); // min normal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // min subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03ff);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);    // tie -> even 0
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -25)), 0x8000);   // signed zero
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);    // above the tie
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);    // 1.5 ulp -> even
  EXPECT_EQ(floatToHalf(std::ldexp(5.0f, -25)), 0x0002);    // 2.5 ulp -> even
  EXPECT_EQ(floatToHalf(std::ldexp(2047.0f, -25)), 0x0400); // -> min normal
  EXPECT_EQ(floatToHalf(1e-30f), 0x0000);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie, even
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            0x3c01);
  // NaN stays a (quiet) NaN of the same sign.
  uint16_t n = floatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(n & 0x7c00, 0x7c00);
  EXPECT_NE(n & 0x03ff, 0);
  uint16_t sn = floatToHalf(floatOf(0xff800001u)); // signalling, tiny payload
  EXPECT_EQ(sn & 0xfc00, 0xfc00);
  EXPECT_NE(sn & 0x03ff, 0);

  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(bitsOf(halfToFloat(0x8000)), 0x80000000u);
  EXPECT_EQ(halfToFloat(0x7c00), inf);
  EXPECT_EQ(halfToFloat(0xfc00), -inf);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
}

TEST(Half, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    const bool isNan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (isNan) {
      ASSERT_TRUE(std::isnan(f)) << h;
      // Quiet NaNs round-trip exactly; signalling ones come back quieted.
      EXPECT_EQ(floatToHalf(f), h | 0x200) << h;
    } else {
      ASSERT_EQ(floatToHalf(f), h) << std::hex << h;
    }
  }
}

TEST(Half, MidpointsRoundToEven) {
  // For each pair of adjacent finite halves, the exact midpoint rounds to the
  // one with an even mantissa, and anything off the midpoint rounds to the
  // nearer one.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const double lo = halfToFloat(static_cast<uint16_t>(h));
    const double hi = halfToFloat(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((lo + hi) / 2); // exact in f32
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
    const uint32_t even = (h & 1) ? h + 1 : h;
    ASSERT_EQ(floatToHalf(mid), even) << std::hex << h;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, 0.0f)), h) << std::hex << h;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, 1e9f)), h + 1) << std::hex << h;
    ASSERT_EQ(floatToHalf(-mid), even | 0x8000) << std::hex << h;
  }
}

#ifdef __FLT16_MAX__
TEST(Half, MatchesCompilerFloat16) {
  // Independent check against the compiler's _Float16 conversion (RNE).
  uint64_t state = 12345;
  for (int n = 0; n < 2000000; ++n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint32_t bits = static_cast<uint32_t>(state >> 32);
    const float f = floatOf(bits);
    if (std::isnan(f))
      continue;
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, 2);
    ASSERT_EQ(floatToHalf(f), refBits) << std::hex << bits;
  }
}
#endif

TEST(Bf16, EdgeCases) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(-2.0f), 0xc000);
  EXPECT_EQ(floatToBf16(0.0f), 0x0000);
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBf16(floatOf(0x3f808000u)), 0x3f80); // tie -> even
  EXPECT_EQ(floatToBf16(floatOf(0x3f818000u)), 0x3f82); // tie -> even (up)
  EXPECT_EQ(floatToBf16(floatOf(0x3f808001u)), 0x3f81); // above tie
  EXPECT_EQ(floatToBf16(floatOf(0x3f807fffu)), 0x3f80); // below tie
  EXPECT_EQ(floatToBf16(floatOf(0x7f7fffffu)), 0x7f80); // max float -> inf
  EXPECT_EQ(floatToBf16(floatOf(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(floatToBf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(floatToBf16(floatOf(0x00018000u)), 0x0002); // subnormal tie
  // NaNs must not round into infinity.
  uint16_t n = floatToBf16(floatOf(0x7f800001u));
  EXPECT_EQ(n & 0x7f80, 0x7f80);
  EXPECT_NE(n & 0x007f, 0);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(floatOf(0xffffffffu)))));
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0x4049), 3.140625f);
}

TEST(Bf16, ExhaustiveRoundTrip) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bf16ToFloat(static_cast<uint16_t>(b));
    EXPECT_EQ(bitsOf(f), b << 16);
    const bool isNan = (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    if (isNan)
      EXPECT_EQ(floatToBf16(f), b | 0x40) << std::hex << b;
    else
      ASSERT_EQ(floatToBf16(f), b) << std::hex << b;
  }
}
