/*===- host.c - a C host program using attn's C API -----------------------===*
 *
 * Compiles a causal attention program at start-up and runs it on buffers
 * this program owns in BSHD layout ([B, S, H, D]), passed as strided
 * DLTensors, then checks the result against a naive loop.
 *
 *===----------------------------------------------------------------------===*/

#include <attn/attn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define D 64

static const char *program =
    "func.func @main(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,\n"
    "                %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {\n"
    "  %o = attn.attention %q, %k, %v : (tensor<?x?x?x64xf32>,\n"
    "    tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>\n"
    "  return %o : tensor<?x?x?x64xf32>\n"
    "}\n";

int main(void) {
  const int64_t B = 2, H = 3, T = 150;
  attn_engine *engine;
  attn_kernel *kernel;
  if (attn_engine_create("cpu", &engine) ||
      attn_compile(engine, program, strlen(program), "main", &kernel)) {
    fprintf(stderr, "attn: %s\n", attn_last_error());
    return 1;
  }
  size_t n = (size_t)(B * T * H * D);
  float *buf[4];
  for (int i = 0; i < 4; ++i)
    buf[i] = malloc(n * sizeof(float));
  unsigned seed = (unsigned)time(NULL);
  srand(seed);
  printf("seed %u\n", seed);
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j)
      buf[j][i] = (float)rand() / RAND_MAX * 2 - 1;
    buf[3][i] = NAN;
  }
  /* [B, H, T, D] views of the BSHD buffers: strides in elements. */
  int64_t shape[4] = {B, H, T, D}, strides[4] = {T * H * D, D, H * D, 1};
  DLTensor t[4];
  for (int i = 0; i < 4; ++i) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].data = buf[i];
    t[i].device.device_type = kDLCPU;
    t[i].ndim = 4;
    t[i].dtype.code = kDLFloat;
    t[i].dtype.bits = 32;
    t[i].dtype.lanes = 1;
    t[i].shape = shape;
    t[i].strides = strides;
  }
  if (attn_launch(kernel, t, 3, &t[3], NULL)) {
    fprintf(stderr, "attn: %s\n", attn_last_error());
    return 1;
  }
  /* The naive loop: causal softmax(q k^T / sqrt(D)) v in double. */
  double maxErr = 0, maxRef = 1e-30, p[150];
#define AT(x, b, h, s, d) x[(((b)*T + (s)) * H + (h)) * D + (d)]
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double s = 0;
          for (int d = 0; d < D; ++d)
            s += (double)AT(buf[0], b, h, i, d) * AT(buf[1], b, h, j, d);
          p[j] = s / sqrt(D);
          m = p[j] > m ? p[j] : m;
        }
        for (int64_t j = 0; j <= i; ++j)
          sum += (p[j] = exp(p[j] - m));
        for (int d = 0; d < D; ++d) {
          double want = 0;
          for (int64_t j = 0; j <= i; ++j)
            want += p[j] / sum * AT(buf[2], b, h, j, d);
          double err = fabs(AT(buf[3], b, h, i, d) - want);
          maxErr = isnan(err) ? INFINITY : (err > maxErr ? err : maxErr);
          maxRef = fabs(want) > maxRef ? fabs(want) : maxRef;
        }
      }
  double rel = maxErr / maxRef;
  printf("C API, attention on BSHD buffers, B=%lld H=%lld T=%lld: max "
         "relative error vs a naive loop %.3e\n",
         (long long)B, (long long)H, (long long)T, rel);
  attn_kernel_destroy(kernel);
  attn_engine_destroy(engine);
  for (int i = 0; i < 4; ++i)
    free(buf[i]);
  return rel <= 1e-5 ? 0 : 1;
}
