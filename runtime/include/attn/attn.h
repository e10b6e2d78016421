/*===- attn/attn.h - the C API of the attn runtime ------------------------===*
 *
 * A C interface over attn/Runtime.h for FFI (Python ctypes, other
 * languages) and C programs: opaque handles, DLPack tensors, status codes.
 * Nothing here aborts or lets a C++ exception out: every failure returns a
 * non-zero attn_status and leaves a message for attn_last_error().
 *
 *   attn_engine *e;  attn_kernel *k;
 *   if (attn_engine_create("auto", &e) ||
 *       attn_compile(e, text, strlen(text), "main", &k) ||
 *       attn_launch(k, inputs, 3, &output, stream))
 *     fprintf(stderr, "attn: %s\n", attn_last_error());
 *
 * Lives in libattn.so (CMake: find_package(attn), target attn::attn).
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTN_ATTN_H
#define ATTN_ATTN_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct attn_engine attn_engine;
typedef struct attn_kernel attn_kernel;

/* Return codes: 0 on success. */
typedef enum {
  ATTN_OK = 0,
  ATTN_ERROR_INVALID_ARGUMENT = 1, /* null handle or pointer, bad name */
  ATTN_ERROR_DEVICE = 2,           /* no such device, driver failure */
  ATTN_ERROR_COMPILE = 3,          /* the program does not parse/compile */
  ATTN_ERROR_LAUNCH = 4,           /* inputs do not fit, launch failed */
  ATTN_ERROR_INTERNAL = 5          /* an unexpected failure (a bug) */
} attn_status;

/* The largest tensor rank attn_tensor_info describes. */
#define ATTN_MAX_RANK 8

/* One argument or one result of a kernel's entry function. */
typedef struct {
  DLDataType dtype; /* f32, f16, bf16 (kDLBfloat), i64 */
  int32_t ndim;
  int64_t shape[ATTN_MAX_RANK]; /* -1 marks a dynamic dim (B, H, T, S) */
} attn_tensor_info;

/* The message of the last call that failed on the calling thread ("" when
 * none has). Valid until the next failing call on that thread. */
const char *attn_last_error(void);

/* device: "cpu", "cuda", "auto" or NULL (NULL and "" mean $ATTN_DEVICE,
 * else auto: CUDA when a GPU and its driver are present, else the CPU). */
int attn_engine_create(const char *device, attn_engine **out);
void attn_engine_destroy(attn_engine *engine);
/* kDLCPU or kDLCUDA (device 0). */
int attn_engine_device(const attn_engine *engine, DLDevice *out);

/* Compiles function `entry` (NULL: "main") of the MLIR text `mlir` (`len`
 * bytes, no terminator needed). Identical text and entry hit the engine's
 * cache. The kernel serves every B, H, T, S and outlives the engine. */
int attn_compile(attn_engine *engine, const char *mlir, size_t len,
                 const char *entry, attn_kernel **out);
void attn_kernel_destroy(attn_kernel *kernel);

/* The kernel's signature: argument count, each argument, the result, the
 * device it runs on (a program the GPU cannot run falls back to the CPU
 * on an "auto" engine). attn_kernel_result_info and
 * attn_kernel_result_shape serve one-result kernels; on a kernel with
 * several results they return ATTN_ERROR_INVALID_ARGUMENT (use the _at
 * functions below). */
int attn_kernel_num_args(const attn_kernel *kernel, size_t *out);
int attn_kernel_arg_info(const attn_kernel *kernel, size_t index,
                         attn_tensor_info *out);
int attn_kernel_result_info(const attn_kernel *kernel, attn_tensor_info *out);
int attn_kernel_device(const attn_kernel *kernel, DLDevice *out);
/* The result's shape for these inputs (`shape` holds the result's ndim
 * values); the inputs are checked as attn_launch checks them. */
int attn_kernel_result_shape(attn_kernel *kernel, const DLTensor *inputs,
                             size_t n, int64_t *shape);
/* Kernels with several results (e.g. a training forward's output and
 * log-sum-exp): how many (at least one), result `index`'s signature, and
 * its shape for these inputs (`shape` holds its ndim values; the inputs are
 * checked as attn_launch_outputs checks them). */
int attn_kernel_num_results(const attn_kernel *kernel, size_t *out);
int attn_kernel_result_info_at(const attn_kernel *kernel, size_t index,
                               attn_tensor_info *out);
int attn_kernel_result_shape_at(attn_kernel *kernel, size_t index,
                                const DLTensor *inputs, size_t n,
                                int64_t *shape);

/* The compiler's remarks (what runs unfused, which GPU kernel), in order;
 * NULL past the end. Owned by the kernel. */
const char *attn_kernel_remark(const attn_kernel *kernel, size_t index);

/* Runs the kernel on `n` caller-owned inputs (argument order) and writes the
 * result into `output`, which has the result's dtype and shape. `strides`
 * (in elements) may be NULL for contiguous tensors; any non-negative
 * strides work (on the GPU the innermost must be 1). CPU: host memory, the
 * call returns when the output is written. CUDA: device memory, `stream` is
 * a CUstream (NULL: the legacy default stream); the work is enqueued and the
 * call returns without waiting. Thread-safe. */
int attn_launch(attn_kernel *kernel, const DLTensor *inputs, size_t n,
                const DLTensor *output, void *stream);
/* attn_launch for any number of results: `outputs` holds one tensor per
 * result, in result order (n_outputs = attn_kernel_num_results), each with
 * its result's dtype and shape; outputs sharing memory are refused.
 * attn_launch on a kernel with several results returns
 * ATTN_ERROR_INVALID_ARGUMENT naming this function. */
int attn_launch_outputs(attn_kernel *kernel, const DLTensor *inputs,
                        size_t n_inputs, const DLTensor *outputs,
                        size_t n_outputs, void *stream);

/* Compiles function `entry` (NULL: "main") of `mlir` for training
 * (docs/training.md): the attn-grad pass derives the forward
 * (args) -> (o, saved_1, ..., saved_n), which also returns the state the
 * backward needs (one f32 [B, H, T] row log-sum-exp per attention or
 * softmax), and the backward (args, o, saved_1, ..., saved_n, dO) -> one
 * gradient per float argument, in argument order. Both are ordinary kernels
 * (attn_launch_outputs, attn_kernel_num_results, attn_kernel_destroy each). The
 * function must return one float tensor. Both run on one device: where the
 * GPU backend has no backward for the program (PaTH, MTA), a "cuda" engine
 * returns ATTN_ERROR_COMPILE naming why and an "auto" one runs the pair on
 * the CPU (see attn_kernel_remark). On failure both handles are NULL. */
int attn_compile_training(attn_engine *engine, const char *mlir, size_t len,
                          const char *entry, attn_kernel **forward,
                          attn_kernel **backward);
/* The argument (index into the entry's arguments) that gradient `index` of a
 * backward from attn_compile_training belongs to; integer arguments (RoPE
 * positions) have no gradient. ATTN_ERROR_INVALID_ARGUMENT on any other
 * kernel or an index past its results. */
int attn_kernel_grad_arg(const attn_kernel *backward, size_t index,
                         size_t *out);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_ATTN_H */
