/*===- CApiTest.c - attn/attn.h from a C program --------------------------===*
 *
 * Compiled as C and linked against libattn.so only. Checks the signature
 * query, a launch on BSHD buffers (strided DLTensors) against a naive fp64
 * loop, the same kernel at a second shape, a kernel with three results
 * (attn_launch_outputs), a training pair (attn_compile_training) against
 * naive fp64 gradients, and that every misuse returns a non-zero status
 * with a message naming the problem. Inputs are fresh
 * random numbers (the seed is printed); the output is poisoned with NaN.
 *
 *===----------------------------------------------------------------------===*/

#include "attn/attn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* Expects `status` to be the failure `code` with `needle` in the message. */
static void expect_error(int status, int code, const char *needle) {
  CHECK(status == code, "status %d, expected %d (%s)", status, code,
        attn_last_error());
  CHECK(strstr(attn_last_error(), needle) != NULL, "message '%s' lacks '%s'",
        attn_last_error(), needle);
}

static const char *kProgram =
    "func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>,\n"
    "                %v: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {\n"
    "  %o = attn.attention %q, %k, %v : (tensor<?x?x?x16xf32>,\n"
    "       tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> "
    "tensor<?x?x?x16xf32>\n"
    "  return %o : tensor<?x?x?x16xf32>\n"
    "}\n";

/* Three results: attention, attention with q and k swapped, and q itself
 * (an argument returned: copied into its output). */
static const char *kThreeResults =
    "func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>,\n"
    "                %v: tensor<?x?x?x16xf32>) -> (tensor<?x?x?x16xf32>,\n"
    "                tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) {\n"
    "  %o = attn.attention %q, %k, %v : (tensor<?x?x?x16xf32>,\n"
    "       tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> "
    "tensor<?x?x?x16xf32>\n"
    "  %o2 = attn.attention %k, %q, %v : (tensor<?x?x?x16xf32>,\n"
    "       tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> "
    "tensor<?x?x?x16xf32>\n"
    "  return %o, %o2, %q : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,\n"
    "         tensor<?x?x?x16xf32>\n"
    "}\n";

enum { D = 16 };

static uint64_t rng;
static double uniform(void) { /* splitmix64 */
  uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

/* Element (b, h, t, d) of a [B, T, H, D] (BSHD) buffer. */
static size_t bshd(int64_t H, int64_t T, int64_t b, int64_t h, int64_t t,
                   int64_t d) {
  return (size_t)(((b * T + t) * H + h) * D + d);
}

/* Causal softmax attention, scale 1/sqrt(D), in fp64; max |got - want| /
 * max |want| over the output. */
static double naive_error(const float *q, const float *k, const float *v,
                          const float *o, int64_t B, int64_t H, int64_t T) {
  double maxErr = 0, maxRef = 1e-30;
  double *p = malloc(sizeof(double) * (size_t)T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double s = 0;
          for (int d = 0; d < D; ++d)
            s += (double)q[bshd(H, T, b, h, i, d)] * k[bshd(H, T, b, h, j, d)];
          p[j] = s / sqrt((double)D);
          if (p[j] > m)
            m = p[j];
        }
        for (int64_t j = 0; j <= i; ++j)
          sum += (p[j] = exp(p[j] - m));
        for (int d = 0; d < D; ++d) {
          double want = 0;
          for (int64_t j = 0; j <= i; ++j)
            want += p[j] / sum * v[bshd(H, T, b, h, j, d)];
          double got = o[bshd(H, T, b, h, i, d)];
          double err = fabs(got - want);
          if (!(err <= maxErr)) /* NaN counts */
            maxErr = isnan(err) ? INFINITY : err;
          if (fabs(want) > maxRef)
            maxRef = fabs(want);
        }
      }
  free(p);
  return maxErr / maxRef;
}

/* A BHSD-shaped DLTensor over a BSHD buffer. */
static DLTensor tensor(float *data, int64_t *shape, int64_t *strides, int64_t B,
                       int64_t H, int64_t T) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  shape[0] = B, shape[1] = H, shape[2] = T, shape[3] = D;
  strides[0] = T * H * D, strides[1] = D, strides[2] = H * D, strides[3] = 1;
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 4;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  return t;
}

static void run_shape(attn_kernel *kernel, int64_t B, int64_t H, int64_t T) {
  size_t n = (size_t)(B * H * T * D);
  float *q = malloc(n * sizeof(float)), *k = malloc(n * sizeof(float)),
        *v = malloc(n * sizeof(float)), *o = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    q[i] = (float)(2 * uniform() - 1);
    k[i] = (float)(2 * uniform() - 1);
    v[i] = (float)(2 * uniform() - 1);
    o[i] = NAN;
  }
  int64_t shapes[4][4], strides[4][4];
  DLTensor in[3] = {tensor(q, shapes[0], strides[0], B, H, T),
                    tensor(k, shapes[1], strides[1], B, H, T),
                    tensor(v, shapes[2], strides[2], B, H, T)};
  DLTensor out = tensor(o, shapes[3], strides[3], B, H, T);
  int64_t rshape[4] = {0, 0, 0, 0};
  int s = attn_kernel_result_shape(kernel, in, 3, rshape);
  CHECK(s == 0, "%s", attn_last_error());
  CHECK(rshape[0] == B && rshape[1] == H && rshape[2] == T && rshape[3] == D,
        "result shape %lld x %lld x %lld x %lld", (long long)rshape[0],
        (long long)rshape[1], (long long)rshape[2], (long long)rshape[3]);
  s = attn_launch(kernel, in, 3, &out, NULL);
  CHECK(s == 0, "attn_launch: %s", attn_last_error());
  double err = naive_error(q, k, v, o, B, H, T);
  printf("C API, BSHD B=%lld H=%lld T=%lld: max relative error %.3e\n",
         (long long)B, (long long)H, (long long)T, err);
  CHECK(err <= 1e-5, "relative error %.3e above 1e-5", err);

  /* Misuse: each a status and a message naming the argument. */
  in[1].dtype.bits = 16;
  expect_error(attn_launch(kernel, in, 3, &out, NULL), ATTN_ERROR_LAUNCH,
               "input 1 (tensor<?x?x?x16xf32>): element type f16");
  in[1].dtype.bits = 32;
  in[2].dtype.code = kDLComplex;
  expect_error(attn_launch(kernel, in, 3, &out, NULL), ATTN_ERROR_LAUNCH,
               "input 2: unsupported DLPack dtype");
  in[2].dtype.code = kDLFloat;
  expect_error(attn_launch(kernel, in, 2, &out, NULL), ATTN_ERROR_LAUNCH,
               "takes 3 inputs, got 2");
  in[0].device.device_type = kDLVulkan;
  expect_error(attn_launch(kernel, in, 3, &out, NULL), ATTN_ERROR_LAUNCH,
               "input 0: unsupported DLPack device type");
  in[0].device.device_type = kDLCPU;
  shapes[3][3] = 8;
  expect_error(attn_launch(kernel, in, 3, &out, NULL), ATTN_ERROR_LAUNCH,
               "the output (tensor<?x?x?x16xf32>): got shape");
  shapes[3][3] = D;
  /* Views no launch may trust (attn_launch crashed or wrote rows into one
   * place on these): no data but an offset, an offset that wraps the
   * address space, an output whose rows share one address, strides whose
   * byte extent wraps 64 bits. */
  in[0].data = NULL;
  in[0].byte_offset = 64;
  expect_error(attn_launch(kernel, in, 3, &out, NULL), ATTN_ERROR_LAUNCH,
               "input 0: null data pointer with byte_offset 64");
  in[0].data = q;
  in[0].byte_offset = UINT64_MAX - 3;
  expect_error(attn_launch(kernel, in, 3, &out, NULL), ATTN_ERROR_LAUNCH,
               "input 0: data pointer plus byte_offset");
  in[0].byte_offset = 0;
  if (T > 1) {
    strides[3][2] = 0;
    expect_error(attn_launch(kernel, in, 3, &out, NULL), ATTN_ERROR_LAUNCH,
                 "the output's strides make elements overlap");
    strides[3][2] = H * D;
  }
  strides[1][1] = INT64_MAX / 2;
  expect_error(attn_launch(kernel, in, 3, &out, NULL), ATTN_ERROR_LAUNCH,
               "input 1 (tensor<?x?x?x16xf32>): its strides reach more than "
               "2^62 bytes");
  strides[1][1] = D;
  free(q), free(k), free(v), free(o);
}

/* The three-result kernel on BSHD buffers against the naive loop, and the
 * misuses particular to several results. */
static void run_three_results(attn_engine *engine, int64_t B, int64_t H,
                              int64_t T) {
  attn_kernel *kernel = NULL;
  int s =
      attn_compile(engine, kThreeResults, strlen(kThreeResults), NULL, &kernel);
  CHECK(s == 0 && kernel, "attn_compile: %s", attn_last_error());
  if (!kernel)
    return;
  size_t nres = 0;
  CHECK(attn_kernel_num_results(kernel, &nres) == 0 && nres == 3, "%zu results",
        nres);
  attn_tensor_info info;
  CHECK(attn_kernel_result_info_at(kernel, 2, &info) == 0 && info.ndim == 4 &&
            info.shape[0] == -1 && info.shape[3] == D,
        "result 2 info: %s", attn_last_error());
  expect_error(attn_kernel_result_info_at(kernel, 3, &info),
               ATTN_ERROR_INVALID_ARGUMENT, "result 3 of 3");
  expect_error(attn_kernel_result_info(kernel, &info),
               ATTN_ERROR_INVALID_ARGUMENT,
               "returns 3 results; use attn_kernel_result_info_at");

  size_t n = (size_t)(B * H * T * D);
  float *buf[6];
  for (int i = 0; i < 6; ++i)
    buf[i] = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    buf[0][i] = (float)(2 * uniform() - 1);
    buf[1][i] = (float)(2 * uniform() - 1);
    buf[2][i] = (float)(2 * uniform() - 1);
    buf[3][i] = buf[4][i] = buf[5][i] = NAN;
  }
  int64_t shapes[6][4], strides[6][4];
  DLTensor t[6];
  for (int i = 0; i < 6; ++i)
    t[i] = tensor(buf[i], shapes[i], strides[i], B, H, T);
  int64_t rshape[4] = {0, 0, 0, 0};
  s = attn_kernel_result_shape_at(kernel, 1, t, 3, rshape);
  CHECK(s == 0 && rshape[0] == B && rshape[2] == T && rshape[3] == D,
        "result 1 shape: %s", attn_last_error());
  expect_error(attn_kernel_result_shape(kernel, t, 3, rshape),
               ATTN_ERROR_INVALID_ARGUMENT,
               "returns 3 results; use attn_kernel_result_shape_at");
  expect_error(attn_kernel_result_shape_at(kernel, 5, t, 3, rshape),
               ATTN_ERROR_INVALID_ARGUMENT, "result 5 of 3");

  s = attn_launch_outputs(kernel, t, 3, t + 3, 3, NULL);
  CHECK(s == 0, "attn_launch_outputs: %s", attn_last_error());
  double err0 = naive_error(buf[0], buf[1], buf[2], buf[3], B, H, T);
  double err1 = naive_error(buf[1], buf[0], buf[2], buf[4], B, H, T);
  CHECK(memcmp(buf[5], buf[0], n * sizeof(float)) == 0,
        "result 2 is not a copy of q");
  printf("C API, three results, BSHD B=%lld H=%lld T=%lld: max relative "
         "errors %.3e, %.3e\n",
         (long long)B, (long long)H, (long long)T, err0, err1);
  CHECK(err0 <= 1e-5 && err1 <= 1e-5, "relative errors %.3e, %.3e", err0, err1);

  expect_error(attn_launch(kernel, t, 3, t + 3, NULL),
               ATTN_ERROR_INVALID_ARGUMENT,
               "returns 3 results; use attn_launch_outputs");
  expect_error(attn_launch_outputs(kernel, t, 3, t + 3, 2, NULL),
               ATTN_ERROR_LAUNCH, "@main returns 3 results, got 2 outputs");
  expect_error(attn_launch_outputs(kernel, t, 3, NULL, 3, NULL),
               ATTN_ERROR_LAUNCH, "null outputs array for 3 outputs");
  t[4].dtype.bits = 16;
  expect_error(attn_launch_outputs(kernel, t, 3, t + 3, 3, NULL),
               ATTN_ERROR_LAUNCH,
               "output 1 (tensor<?x?x?x16xf32>): element type f16");
  t[4].dtype.bits = 32;
  shapes[5][2] = T + 1;
  expect_error(attn_launch_outputs(kernel, t, 3, t + 3, 3, NULL),
               ATTN_ERROR_LAUNCH, "output 2 must be tensor<");
  shapes[5][2] = T;
  t[5].data = buf[4];
  expect_error(attn_launch_outputs(kernel, t, 3, t + 3, 3, NULL),
               ATTN_ERROR_LAUNCH, "outputs 1 and 2 overlap in memory");
  for (int i = 0; i < 6; ++i)
    free(buf[i]);
  attn_kernel_destroy(kernel);
}

/* The fp64 gradients of causal attention (scale 1/sqrt(D)) given dO, all
 * [B, T, H, D] (BSHD), and each row's log-sum-exp of the scaled scores
 * ([B, H, T]). */
static void naive_grads(const float *q, const float *k, const float *v,
                        const float *dO, int64_t B, int64_t H, int64_t T,
                        double *dq, double *dk, double *dv, double *lse) {
  size_t n = (size_t)(B * H * T * D);
  double *p = malloc(sizeof(double) * (size_t)T);
  double scale = 1 / sqrt((double)D);
  memset(dq, 0, n * sizeof(double));
  memset(dk, 0, n * sizeof(double));
  memset(dv, 0, n * sizeof(double));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        double m = -INFINITY, sum = 0, dOo = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double s = 0;
          for (int d = 0; d < D; ++d)
            s += (double)q[bshd(H, T, b, h, i, d)] * k[bshd(H, T, b, h, j, d)];
          p[j] = s * scale;
          m = p[j] > m ? p[j] : m;
        }
        for (int64_t j = 0; j <= i; ++j)
          sum += (p[j] = exp(p[j] - m));
        lse[(b * H + h) * T + i] = m + log(sum);
        for (int64_t j = 0; j <= i; ++j)
          p[j] /= sum;
        /* dO_i . o_i: the softmax's VJP subtracts it from each dp_ij. */
        for (int d = 0; d < D; ++d) {
          double o = 0;
          for (int64_t j = 0; j <= i; ++j)
            o += p[j] * v[bshd(H, T, b, h, j, d)];
          dOo += o * dO[bshd(H, T, b, h, i, d)];
        }
        for (int64_t j = 0; j <= i; ++j) {
          double dp = 0;
          for (int d = 0; d < D; ++d) {
            dp +=
                (double)dO[bshd(H, T, b, h, i, d)] * v[bshd(H, T, b, h, j, d)];
            dv[bshd(H, T, b, h, j, d)] += p[j] * dO[bshd(H, T, b, h, i, d)];
          }
          double ds = p[j] * (dp - dOo) * scale;
          for (int d = 0; d < D; ++d) {
            dq[bshd(H, T, b, h, i, d)] += ds * k[bshd(H, T, b, h, j, d)];
            dk[bshd(H, T, b, h, j, d)] += ds * q[bshd(H, T, b, h, i, d)];
          }
        }
      }
  free(p);
}

/* max |got - want| / max |want| over n values. */
static double rel_error(const float *got, const double *want, size_t n) {
  double maxErr = 0, maxRef = 1e-30;
  for (size_t i = 0; i < n; ++i) {
    double err = fabs(got[i] - want[i]);
    if (!(err <= maxErr))
      maxErr = isnan(err) ? INFINITY : err;
    if (fabs(want[i]) > maxRef)
      maxRef = fabs(want[i]);
  }
  return maxErr / maxRef;
}

/* attn_compile_training on kProgram: the forward's output and saved
 * log-sum-exp, then the backward's gradients, against the naive loops
 * (BSHD buffers); and the misuses particular to training. */
static void run_training(attn_engine *engine, int64_t B, int64_t H, int64_t T) {
  attn_kernel *fwd = NULL, *bwd = NULL;
  int s = attn_compile_training(engine, kProgram, strlen(kProgram), NULL, &fwd,
                                &bwd);
  CHECK(s == 0 && fwd && bwd, "attn_compile_training: %s", attn_last_error());
  if (!fwd || !bwd)
    return;
  size_t nres = 0, nargs = 0, arg = 99;
  CHECK(attn_kernel_num_results(fwd, &nres) == 0 && nres == 2,
        "forward: %zu results", nres);
  CHECK(attn_kernel_num_args(bwd, &nargs) == 0 && nargs == 6,
        "backward: %zu arguments", nargs);
  CHECK(attn_kernel_num_results(bwd, &nres) == 0 && nres == 3,
        "backward: %zu results", nres);
  for (size_t i = 0; i < 3; ++i)
    CHECK(attn_kernel_grad_arg(bwd, i, &arg) == 0 && arg == i,
          "gradient %zu: argument %zu (%s)", i, arg, attn_last_error());
  expect_error(attn_kernel_grad_arg(bwd, 3, &arg), ATTN_ERROR_INVALID_ARGUMENT,
               "gradient 3 of 3");
  expect_error(attn_kernel_grad_arg(fwd, 0, &arg), ATTN_ERROR_INVALID_ARGUMENT,
               "not a backward from attn_compile_training");

  /* q, k, v, o, dO, dq, dk, dv; lse apart ([B, H, T]). */
  size_t n = (size_t)(B * H * T * D), nl = (size_t)(B * H * T);
  float *buf[8], *lse = malloc(nl * sizeof(float));
  double *want[4];
  for (int i = 0; i < 8; ++i)
    buf[i] = malloc(n * sizeof(float));
  for (int i = 0; i < 3; ++i)
    want[i] = malloc(n * sizeof(double));
  want[3] = malloc(nl * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j)
      buf[j][i] = (float)(2 * uniform() - 1);
    buf[4][i] = (float)(2 * uniform() - 1);
    buf[3][i] = buf[5][i] = buf[6][i] = buf[7][i] = NAN;
  }
  for (size_t i = 0; i < nl; ++i)
    lse[i] = NAN;
  int64_t shapes[8][4], strides[8][4], lshape[3] = {B, H, T};
  DLTensor t[8];
  for (int i = 0; i < 8; ++i)
    t[i] = tensor(buf[i], shapes[i], strides[i], B, H, T);
  DLTensor tl = t[0];
  tl.data = lse, tl.ndim = 3, tl.shape = lshape, tl.strides = NULL;

  /* Forward: (q, k, v) -> (o, lse); backward: (q, k, v, o, lse, dO). */
  DLTensor fouts[2] = {t[3], tl};
  s = attn_launch_outputs(fwd, t, 3, fouts, 2, NULL);
  CHECK(s == 0, "forward: %s", attn_last_error());
  DLTensor bins[6] = {t[0], t[1], t[2], t[3], tl, t[4]};
  s = attn_launch_outputs(bwd, bins, 6, t + 5, 3, NULL);
  CHECK(s == 0, "backward: %s", attn_last_error());
  naive_grads(buf[0], buf[1], buf[2], buf[4], B, H, T, want[0], want[1],
              want[2], want[3]);
  double errO = naive_error(buf[0], buf[1], buf[2], buf[3], B, H, T);
  double errL = rel_error(lse, want[3], nl);
  printf("C API, training, BSHD B=%lld H=%lld T=%lld: max relative errors o "
         "%.3e, lse %.3e",
         (long long)B, (long long)H, (long long)T, errO, errL);
  CHECK(errO <= 1e-5 && errL <= 1e-5, "o %.3e, lse %.3e", errO, errL);
  for (int i = 0; i < 3; ++i) {
    double err = rel_error(buf[5 + i], want[i], n);
    printf(", d%c %.3e", "qkv"[i], err);
    CHECK(err <= 1e-5, "gradient of %c: relative error %.3e", "qkv"[i], err);
  }
  printf("\n");
  expect_error(attn_launch_outputs(bwd, bins, 4, t + 5, 3, NULL),
               ATTN_ERROR_LAUNCH, "takes 6 inputs, got 4");

  for (int i = 0; i < 8; ++i)
    free(buf[i]);
  for (int i = 0; i < 4; ++i)
    free(want[i]);
  free(lse);
  attn_kernel_destroy(fwd);
  attn_kernel_destroy(bwd);

  expect_error(attn_compile_training(engine, kThreeResults,
                                     strlen(kThreeResults), NULL, &fwd, &bwd),
               ATTN_ERROR_COMPILE, "must return one float tensor");
  CHECK(fwd == NULL && bwd == NULL, "handles set on failure");
  expect_error(attn_compile_training(engine, kProgram, strlen(kProgram), NULL,
                                     &fwd, NULL),
               ATTN_ERROR_INVALID_ARGUMENT, "null output pointer");
}

int main(void) {
  rng = (uint64_t)time(NULL) ^ (uint64_t)clock();
  printf("seed %llu\n", (unsigned long long)rng);

  attn_engine *engine = NULL;
  expect_error(attn_engine_create("tpu", &engine), ATTN_ERROR_INVALID_ARGUMENT,
               "unknown device 'tpu'");
  CHECK(engine == NULL, "engine set on failure");
  int s = attn_engine_create("cpu", &engine);
  CHECK(s == 0 && engine, "attn_engine_create: %s", attn_last_error());
  if (!engine)
    return 1;
  DLDevice dev;
  CHECK(attn_engine_device(engine, &dev) == 0 && dev.device_type == kDLCPU,
        "engine device");

  run_three_results(engine, 2, 3, 29);
  run_training(engine, 2, 3, 13);

  attn_kernel *kernel = NULL;
  expect_error(attn_compile(engine, "func.func @main(", 16, NULL, &kernel),
               ATTN_ERROR_COMPILE, "cannot parse");
  expect_error(
      attn_compile(engine, kProgram, strlen(kProgram), "nope", &kernel),
      ATTN_ERROR_COMPILE, "no function @nope");
  {
    /* Nested too deep for the parser's recursion: an error, not a stack
     * overflow that kills this process. */
    size_t depth = 30000, len = 0;
    char *deep = malloc(depth * 2 + 64);
    len += (size_t)sprintf(deep, "func.func @main() attributes {a = ");
    memset(deep + len, '[', depth), len += depth;
    memset(deep + len, ']', depth), len += depth;
    len += (size_t)sprintf(deep + len, "} { return }");
    expect_error(attn_compile(engine, deep, len, NULL, &kernel),
                 ATTN_ERROR_COMPILE, "brackets nested deeper than 256 levels");
    free(deep);
  }
  expect_error(attn_compile(NULL, kProgram, strlen(kProgram), NULL, &kernel),
               ATTN_ERROR_INVALID_ARGUMENT, "null engine");
  s = attn_compile(engine, kProgram, strlen(kProgram), "main", &kernel);
  CHECK(s == 0 && kernel, "attn_compile: %s", attn_last_error());
  if (!kernel)
    return 1;
  /* The kernel outlives its engine. */
  attn_engine_destroy(engine);

  size_t nargs = 0;
  CHECK(attn_kernel_num_args(kernel, &nargs) == 0 && nargs == 3,
        "%zu arguments", nargs);
  attn_tensor_info info;
  CHECK(attn_kernel_arg_info(kernel, 1, &info) == 0, "%s", attn_last_error());
  CHECK(
      info.ndim == 4 && info.dtype.code == kDLFloat && info.dtype.bits == 32 &&
          info.shape[0] == -1 && info.shape[2] == -1 && info.shape[3] == D,
      "argument 1: ndim %d shape[3] %lld", info.ndim, (long long)info.shape[3]);
  expect_error(attn_kernel_arg_info(kernel, 3, &info),
               ATTN_ERROR_INVALID_ARGUMENT, "argument 3 of 3");
  CHECK(attn_kernel_result_info(kernel, &info) == 0 && info.ndim == 4 &&
            info.shape[3] == D,
        "result info");
  size_t nres = 0;
  CHECK(attn_kernel_num_results(kernel, &nres) == 0 && nres == 1, "%zu results",
        nres);
  CHECK(attn_kernel_device(kernel, &dev) == 0 && dev.device_type == kDLCPU,
        "kernel device");
  CHECK(attn_kernel_remark(kernel, 1000) == NULL, "remark past the end");

  /* One compile, two shapes. */
  run_shape(kernel, 2, 3, 37);
  run_shape(kernel, 1, 2, 70);

  expect_error(attn_launch(NULL, NULL, 0, NULL, NULL),
               ATTN_ERROR_INVALID_ARGUMENT, "null kernel");
  attn_kernel_destroy(kernel);
  attn_kernel_destroy(NULL);
  attn_engine_destroy(NULL);
  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("all C API checks passed\n");
  return failures ? 1 : 0;
}
