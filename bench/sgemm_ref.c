/*===- sgemm_ref.c - Direct cblas_sgemm timing for aot_bench.py ----------===*\
|*                                                                            *|
|*   sgemm_ref M N K THREADS REPEAT                                           *|
|*                                                                            *|
|* Times C = A * B (row-major f32, M x K times K x N) with one cblas_sgemm    *|
|* call on THREADS OpenBLAS threads, REPEAT times, and prints the fastest and *|
|* the median time in milliseconds: "min MS median MS".                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void openblas_set_num_threads(int);

static double nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int compareDoubles(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s M N K THREADS REPEAT\n", argv[0]);
    return 1;
  }
  int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
  int threads = atoi(argv[4]), repeat = atoi(argv[5]);
  float *a = malloc(sizeof(float) * m * k);
  float *b = malloc(sizeof(float) * k * n);
  float *c = malloc(sizeof(float) * m * n);
  double *times = malloc(sizeof(double) * repeat);
  for (long i = 0; i < (long)m * k; ++i)
    a[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (long i = 0; i < (long)k * n; ++i)
    b[i] = (float)((i * 104729) % 1000) / 1000.0f - 0.5f;
  openblas_set_num_threads(threads);
  for (int r = 0; r < repeat; ++r) {
    double start = nowMs();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k,
                b, n, 0.0f, c, n);
    times[r] = nowMs() - start;
  }
  qsort(times, repeat, sizeof(double), compareDoubles);
  printf("min %.3f median %.3f\n", times[0], times[repeat / 2]);
  return 0;
}
