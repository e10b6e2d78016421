//===- Npy.h - NumPy .npy reading and writing -------------------*- C++ -*-===//
//
// Minimal, defensive .npy I/O for test data and benchmark harnesses.
//
// Supported: format versions 1.0, 2.0 and 3.0; C order; little-endian
// '<f4' (F32), '<f2' (F16), '<f8' (F64), '<i8' (I64), '<i4' (I32). BF16 has
// no NumPy type code: BF16 arrays are written as '<f4' (exact conversion),
// and reading never produces BF16. Every malformed input yields an
// llvm::Error whose message names the file and the problem; no input bytes
// can crash the reader. Writes are atomic (temporary file + rename).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_NPY_H
#define ATTN_NPY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class DType { F32, F16, BF16, F64, I64, I32 };

/// Short lower-case name: "f32", "f16", "bf16", "f64", "i64", "i32".
llvm::StringRef dtypeName(DType dtype);
/// Size of one element in bytes.
size_t dtypeSize(DType dtype);

/// A dense C-order array. `bytes` holds numel() * dtypeSize(dtype) bytes of
/// element data in host byte order. A rank-0 array (empty shape) has one
/// element.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  size_t numel() const;

  /// Element i (row-major) as a double, whatever the dtype.
  double get(size_t i) const;
  /// Stores `v` as element i, rounded to the dtype (f16/bf16 through f32,
  /// integers truncated).
  void set(size_t i, double v);
};

/// Reads and validates the .npy file at `path`, which must be a regular
/// file (a FIFO or a device is an error, without blocking on it).
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);
/// Parses .npy `contents`; `name` is used in error messages.
llvm::Expected<NpyArray> readNpyBuffer(llvm::StringRef contents,
                                       llvm::StringRef name);

/// Atomically writes `array` to `path` (format 1.0, or 2.0 when the header
/// does not fit in 1.0). Fails if the array is inconsistent (byte count vs
/// shape, negative dimensions).
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);
/// Serialises `array` to the .npy byte stream that writeNpy would write;
/// `name` is used in error messages.
llvm::Expected<std::string> writeNpyBuffer(const NpyArray &array,
                                           llvm::StringRef name);

/// IEEE binary16 <-> binary32. floatToHalf rounds to nearest even, overflows
/// to infinity, produces subnormals, and keeps NaNs quiet NaNs (sign and top
/// payload bits preserved).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);

/// bfloat16 <-> binary32. floatToBf16 rounds to nearest even; NaNs stay NaN.
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

} // namespace attn

#endif // ATTN_NPY_H
