//===- Npy.cpp - NumPy .npy reading and writing ---------------------------===//
//
// File layout
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
//   "\x93NUMPY" major minor  header_len (u16 LE for 1.x, u32 LE for 2.x/3.x)
//   header: a Python dict literal
//     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//   padded with spaces and a final '\n' so the data starts 64-byte aligned,
//   then the raw C-order element data.
//
//===----------------------------------------------------------------------===//

#include "attn/Npy.h"
#include "attn/Memory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>

using namespace attn;
using llvm::StringRef;
using llvm::Twine;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
/// Upper bound on the element count we accept (keeps byte counts far from
/// size_t overflow).
constexpr uint64_t kMaxNumel = uint64_t(1) << 56;

llvm::Error makeError(StringRef name, const Twine &msg) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), name + ": " + msg);
}

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// Reverses the bytes of every element in place (big-endian hosts only).
void swapElements(std::vector<uint8_t> &bytes, size_t elemSize) {
  for (size_t i = 0; i + elemSize <= bytes.size(); i += elemSize)
    std::reverse(bytes.begin() + i, bytes.begin() + i + elemSize);
}

//===----------------------------------------------------------------------===//
// Header dict parser: the subset of Python literal syntax NumPy writes.
//===----------------------------------------------------------------------===//

struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortranOrder;
  std::optional<std::vector<int64_t>> shape;
};

class HeaderParser {
public:
  HeaderParser(StringRef text, StringRef name) : text(text), name(name) {}

  llvm::Expected<Header> parse() {
    Header h;
    skipSpace();
    if (!consume('{'))
      return error("header is not a Python dict literal");
    skipSpace();
    while (!consume('}')) {
      std::string key;
      if (llvm::Error e = parseString(key, "dict key"))
        return e;
      skipSpace();
      if (!consume(':'))
        return error("expected ':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (h.descr)
          return error("duplicate key 'descr'");
        std::string d;
        if (llvm::Error e = parseString(d, "'descr' value (only simple "
                                           "dtypes are supported)"))
          return e;
        h.descr = std::move(d);
      } else if (key == "fortran_order") {
        if (h.fortranOrder)
          return error("duplicate key 'fortran_order'");
        if (consumeWord("True"))
          h.fortranOrder = true;
        else if (consumeWord("False"))
          h.fortranOrder = false;
        else
          return error("'fortran_order' is not True or False");
      } else if (key == "shape") {
        if (h.shape)
          return error("duplicate key 'shape'");
        std::vector<int64_t> s;
        if (llvm::Error e = parseShape(s))
          return e;
        h.shape = std::move(s);
      } else {
        return error("unexpected header key '" + key + "'");
      }
      skipSpace();
      if (consume(','))
        skipSpace();
      else if (peek() != '}')
        return error("expected ',' or '}' in header dict");
    }
    skipSpace();
    if (pos != text.size())
      return error("trailing characters after the header dict");
    if (!h.descr)
      return error("header has no 'descr' key");
    if (!h.fortranOrder)
      return error("header has no 'fortran_order' key");
    if (!h.shape)
      return error("header has no 'shape' key");
    return h;
  }

private:
  StringRef text;
  StringRef name;
  size_t pos = 0;

  char peek() const { return pos < text.size() ? text[pos] : '\0'; }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool consumeWord(StringRef w) {
    if (!text.substr(pos).starts_with(w))
      return false;
    size_t end = pos + w.size();
    if (end < text.size() &&
        (std::isalnum(static_cast<unsigned char>(text[end])) ||
         text[end] == '_'))
      return false;
    pos = end;
    return true;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  llvm::Error error(const Twine &msg) const {
    return makeError(name, "malformed header: " + msg + " (at offset " +
                               Twine(pos) + " of the header dict)");
  }

  llvm::Error parseString(std::string &out, StringRef what) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return error("expected a string for " + what);
    ++pos;
    size_t start = pos;
    while (pos < text.size() && text[pos] != quote) {
      if (text[pos] == '\n')
        return error("unterminated string literal");
      if (text[pos] == '\\')
        return error("unsupported escape in string literal");
      ++pos;
    }
    if (pos >= text.size())
      return error("unterminated string literal");
    out = text.substr(start, pos - start).str();
    ++pos; // closing quote
    return llvm::Error::success();
  }

  llvm::Error parseInt(int64_t &out) {
    size_t start = pos;
    uint64_t value = 0;
    while (pos < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[pos]))) {
      value = value * 10 + static_cast<uint64_t>(text[pos] - '0');
      if (value > kMaxNumel)
        return error("shape dimension too large");
      ++pos;
    }
    if (pos == start)
      return error("'shape' is not a tuple of non-negative integers");
    consume('L'); // Python 2 long suffix, seen in old files
    out = static_cast<int64_t>(value);
    return llvm::Error::success();
  }

  llvm::Error parseShape(std::vector<int64_t> &out) {
    if (!consume('('))
      return error("'shape' is not a tuple");
    skipSpace();
    bool sawComma = false;
    while (!consume(')')) {
      if (!out.empty() && !sawComma)
        return error("expected ',' between shape dimensions");
      if (out.size() >= 64)
        return error("too many shape dimensions");
      int64_t d;
      if (llvm::Error e = parseInt(d))
        return e;
      out.push_back(d);
      skipSpace();
      sawComma = consume(',');
      skipSpace();
    }
    // "(3)" is the integer 3 in Python, not a tuple.
    if (out.size() == 1 && !sawComma)
      return error("'shape' is not a tuple (missing ',' in a 1-tuple)");
    return llvm::Error::success();
  }
};

std::optional<DType> descrToDType(StringRef descr) {
  if (descr == "<f4")
    return DType::F32;
  if (descr == "<f2")
    return DType::F16;
  if (descr == "<f8")
    return DType::F64;
  if (descr == "<i8")
    return DType::I64;
  if (descr == "<i4")
    return DType::I32;
  return std::nullopt;
}

StringRef dtypeDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::BF16: // written as f32
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::F64:
    return "<f8";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  }
  return "<f4";
}

/// Product of `shape` with overflow and sign checks.
std::optional<uint64_t> checkedNumel(const std::vector<int64_t> &shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > kMaxNumel / static_cast<uint64_t>(d))
      return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  // A zero dimension anywhere makes the product zero even after a large
  // prefix; that is fine.
  return n;
}

} // namespace

//===----------------------------------------------------------------------===//
// DType helpers and conversions
//===----------------------------------------------------------------------===//

StringRef attn::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  }
  return "unknown";
}

size_t attn::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  return 0;
}

size_t NpyArray::numel() const {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

double NpyArray::get(size_t i) const {
  const uint8_t *p = bytes.data() + i * dtypeSize(dtype);
  auto read = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (dtype) {
  case DType::F32:
    return read(float());
  case DType::F64:
    return read(double());
  case DType::F16:
    return halfToFloat(read(uint16_t()));
  case DType::BF16:
    return bf16ToFloat(read(uint16_t()));
  case DType::I64:
    return static_cast<double>(read(int64_t()));
  case DType::I32:
    return read(int32_t());
  }
  return 0;
}

void NpyArray::set(size_t i, double v) {
  uint8_t *p = bytes.data() + i * dtypeSize(dtype);
  auto write = [p](auto x) { std::memcpy(p, &x, sizeof(x)); };
  switch (dtype) {
  case DType::F32:
    return write(static_cast<float>(v));
  case DType::F64:
    return write(v);
  case DType::F16:
    return write(floatToHalf(static_cast<float>(v)));
  case DType::BF16:
    return write(floatToBf16(static_cast<float>(v)));
  case DType::I64:
    return write(static_cast<int64_t>(v));
  case DType::I32:
    return write(static_cast<int32_t>(v));
  }
}

float attn::halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in binary32.
    float mag = static_cast<float>(mant) * 0x1.0p-24f;
    return bitsFloat(sign | floatBits(mag));
  }
  if (exp == 0x1f) // inf / NaN (payload kept)
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  return bitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t attn::floatToHalf(float f) {
  const uint32_t x = floatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN: quiet, keep the top payload bits
    return sign | 0x7e00 | static_cast<uint16_t>((a >> 13) & 0x3ff);
  if (a >= 0x477ff000u) // >= 65520 rounds to infinity (also inf itself)
    return sign | 0x7c00;
  if (a >= 0x38800000u) { // normal half: >= 2^-14
    uint32_t h = (((a >> 23) - 127 + 15) << 10) | ((a >> 13) & 0x3ff);
    const uint32_t rem = a & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
      ++h; // may carry into the exponent, which is correct
    return sign | static_cast<uint16_t>(h);
  }
  if (a <= 0x33000000u) // <= 2^-25: rounds to (signed) zero
    return sign;
  // Subnormal half: value / 2^-24 = mant * 2^(exp - 126), shift in [14, 24].
  const uint32_t exp = a >> 23;
  const uint32_t mant = (a & 0x7fffff) | 0x800000;
  const uint32_t shift = 126 - exp;
  uint32_t h = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1)))
    ++h; // may become the smallest normal, 0x400
  return sign | static_cast<uint16_t>(h);
}

float attn::bf16ToFloat(uint16_t b) {
  return bitsFloat(static_cast<uint32_t>(b) << 16);
}

uint16_t attn::floatToBf16(float f) {
  const uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: keep sign/top payload, quiet
    return static_cast<uint16_t>((x >> 16) | 0x40);
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(rounded >> 16);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// What the preamble and header say: element type, shape and where the
/// data starts; `dataBytes` is checked against overflow.
struct NpyLayout {
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t dataOffset;
  uint64_t dataBytes;
};

/// Parses the preamble and header at the start of `prefix`, which holds at
/// least the first `kMagicLen + 6` bytes of the file or all of it;
/// `wantHeader` is set to the bytes needed when the header is longer than
/// `prefix` (then nothing else is checked).
llvm::Expected<NpyLayout> parseLayout(StringRef prefix, StringRef name,
                                      uint64_t &wantHeader) {
  wantHeader = 0;
  if (prefix.size() < kMagicLen ||
      prefix.substr(0, kMagicLen) != StringRef(kMagic, kMagicLen))
    return makeError(name, "not a .npy file (bad magic string)");
  if (prefix.size() < kMagicLen + 2)
    return makeError(name, "truncated .npy preamble (no version)");
  const unsigned major = static_cast<unsigned char>(prefix[6]);
  const unsigned minor = static_cast<unsigned char>(prefix[7]);
  if (major < 1 || major > 3 || minor != 0)
    return makeError(name, "unsupported .npy format version " + Twine(major) +
                               "." + Twine(minor));
  const size_t lenBytes = major == 1 ? 2 : 4;
  const size_t preamble = kMagicLen + 2 + lenBytes;
  if (prefix.size() < preamble)
    return makeError(name, "truncated .npy preamble (no header length)");
  const uint64_t headerLen =
      major == 1 ? llvm::support::endian::read16le(prefix.data() + 8)
                 : llvm::support::endian::read32le(prefix.data() + 8);
  if (headerLen > prefix.size() - preamble) {
    wantHeader = preamble + headerLen;
    return makeError(name, "truncated header: header length " +
                               Twine(headerLen) + " but only " +
                               Twine(prefix.size() - preamble) +
                               " bytes follow");
  }
  StringRef headerText = prefix.substr(preamble, headerLen);
  if (headerText.find('\0') != StringRef::npos)
    return makeError(name, "malformed header: contains a NUL byte");

  llvm::Expected<Header> header = HeaderParser(headerText, name).parse();
  if (!header)
    return header.takeError();

  const std::string &descr = *header->descr;
  std::optional<DType> dtype = descrToDType(descr);
  if (!dtype) {
    if (!descr.empty() && descr[0] == '>')
      return makeError(name,
                       "big-endian data ('" + descr + "') is not supported");
    return makeError(name, "unsupported descr '" + descr +
                               "' (supported: <f4 <f2 <f8 <i8 <i4)");
  }
  if (*header->fortranOrder)
    return makeError(name, "fortran_order True is not supported (C order "
                           "only)");

  std::optional<uint64_t> numel = checkedNumel(*header->shape);
  if (!numel)
    return makeError(name, "shape has too many elements");
  return NpyLayout{*dtype, std::move(*header->shape), preamble + headerLen,
                   *numel * dtypeSize(*dtype)};
}

NpyArray arrayOf(NpyLayout layout, const char *data) {
  NpyArray array;
  array.dtype = layout.dtype;
  array.shape = std::move(layout.shape);
  array.bytes.assign(reinterpret_cast<const uint8_t *>(data),
                     reinterpret_cast<const uint8_t *>(data) +
                         layout.dataBytes);
  if (llvm::sys::IsBigEndianHost)
    swapElements(array.bytes, dtypeSize(array.dtype));
  return array;
}

llvm::Error sizeMismatch(StringRef name, uint64_t want, uint64_t have) {
  return makeError(name, "data size mismatch: shape and dtype need " +
                             Twine(want) + " bytes but the file has " +
                             Twine(have) + " after the header");
}
} // namespace

llvm::Expected<NpyArray> attn::readNpyBuffer(StringRef contents,
                                             StringRef name) {
  uint64_t wantHeader;
  auto layout = parseLayout(contents, name, wantHeader);
  if (!layout)
    return layout.takeError();
  const uint64_t available = contents.size() - layout->dataOffset;
  if (available != layout->dataBytes)
    return sizeMismatch(name, layout->dataBytes, available);
  return arrayOf(std::move(*layout), contents.data() + layout->dataOffset);
}

llvm::Expected<NpyArray> attn::readNpy(StringRef path) {
  // The header is read and checked before the data, and only as much data
  // as it announces: a huge unrelated file is refused without reading it
  // whole. Only regular files: a FIFO would block and a device such as
  // /dev/zero never ends.
  auto cannot = [&](std::error_code ec) {
    return llvm::createStringError(
        ec, path + ": cannot read file: " + ec.message());
  };
  llvm::Expected<RegularFile> file = RegularFile::open(path);
  if (!file)
    return file.takeError();
  auto readMore = [&](std::string &buf, uint64_t n) {
    return file->readMore(buf, n);
  };
  std::string head;
  if (std::error_code ec = readMore(head, 4096))
    return cannot(ec);
  uint64_t wantHeader;
  auto layout = parseLayout(head, path, wantHeader);
  if (!layout && wantHeader > head.size() && head.size() == 4096) {
    llvm::consumeError(layout.takeError());
    // .npy 2.x headers may be up to 4 GiB; anything that large is not a
    // header NumPy writes for a tensor.
    if (wantHeader > (uint64_t(1) << 24))
      return makeError(path, "header length " + Twine(wantHeader) +
                                 " is implausibly large (over 16 MiB)");
    if (std::error_code ec = readMore(head, wantHeader - head.size()))
      return cannot(ec);
    layout = parseLayout(head, path, wantHeader);
  }
  if (!layout)
    return layout.takeError();
  const uint64_t offset = layout->dataOffset, want = layout->dataBytes;
  if (file->size() != offset + want)
    return sizeMismatch(path, want,
                        file->size() > offset ? file->size() - offset : 0);
  if (llvm::Error e = checkAllocatable(want, (path + ": the data").str()))
    return std::move(e);
  // What is left to read, plus one byte to detect data appended since.
  const uint64_t have = head.size() - std::min<uint64_t>(head.size(), offset);
  if (have <= want)
    if (std::error_code ec = readMore(head, want - have + 1))
      return cannot(ec);
  const uint64_t got = head.size() - offset;
  if (got != want)
    return sizeMismatch(path, want, got);
  return arrayOf(std::move(*layout), head.data() + offset);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

llvm::Expected<std::string> attn::writeNpyBuffer(const NpyArray &array,
                                                 StringRef name) {
  std::optional<uint64_t> numel = checkedNumel(array.shape);
  if (!numel)
    return makeError(name, "cannot write: invalid shape (negative dimension "
                           "or too many elements)");
  const uint64_t inSize = dtypeSize(array.dtype);
  if (array.bytes.size() != *numel * inSize)
    return makeError(name, "cannot write: " + Twine(array.bytes.size()) +
                               " data bytes do not match " +
                               dtypeName(array.dtype) + " shape with " +
                               Twine(*numel) + " elements");

  std::string header = "{'descr': '" + dtypeDescr(array.dtype).str() +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    header += std::to_string(array.shape[i]);
    if (array.shape.size() == 1 || i + 1 < array.shape.size())
      header += ",";
    if (i + 1 < array.shape.size())
      header += " ";
  }
  header += "), }";

  // Pad with spaces and a final newline so the data is 64-byte aligned.
  auto padded = [&](size_t preamble) {
    size_t total = preamble + header.size() + 1;
    return header.size() + 1 + (64 - total % 64) % 64;
  };
  unsigned major = 1;
  size_t headerLen = padded(kMagicLen + 4);
  if (headerLen > 0xffff) {
    major = 2;
    headerLen = padded(kMagicLen + 6);
  }
  header.resize(headerLen - 1, ' ');
  header += '\n';

  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  char len[4];
  if (major == 1) {
    llvm::support::endian::write16le(len, static_cast<uint16_t>(headerLen));
    out.append(len, 2);
  } else {
    llvm::support::endian::write32le(len, static_cast<uint32_t>(headerLen));
    out.append(len, 4);
  }
  out += header;

  const size_t dataStart = out.size();
  if (array.dtype == DType::BF16) {
    out.resize(dataStart + *numel * 4);
    for (uint64_t i = 0; i < *numel; ++i) {
      uint16_t b;
      std::memcpy(&b, array.bytes.data() + 2 * i, 2);
      llvm::support::endian::write32le(&out[dataStart + 4 * i],
                                       floatBits(bf16ToFloat(b)));
    }
  } else {
    out.append(reinterpret_cast<const char *>(array.bytes.data()),
               array.bytes.size());
    if (llvm::sys::IsBigEndianHost)
      for (size_t i = dataStart; i + inSize <= out.size(); i += inSize)
        std::reverse(out.begin() + i, out.begin() + i + inSize);
  }
  return out;
}

llvm::Error attn::writeNpy(StringRef path, const NpyArray &array) {
  llvm::Expected<std::string> contents = writeNpyBuffer(array, path);
  if (!contents)
    return contents.takeError();

  int fd = -1;
  llvm::SmallString<256> tmpPath;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tmpPath))
    return llvm::createStringError(
        ec, path + ": cannot create temporary file: " + ec.message());

  std::error_code writeError;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << *contents;
    os.close();
    if (os.has_error()) {
      writeError = os.error();
      os.clear_error(); // otherwise the destructor reports a fatal error
    }
  }
  if (writeError) {
    llvm::sys::fs::remove(tmpPath);
    return llvm::createStringError(
        writeError, path + ": write failed: " + writeError.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmpPath, path)) {
    llvm::sys::fs::remove(tmpPath);
    return llvm::createStringError(
        ec,
        path + ": cannot rename temporary file into place: " + ec.message());
  }
  return llvm::Error::success();
}
