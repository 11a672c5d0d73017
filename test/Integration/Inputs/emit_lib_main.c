/* Calls a model compiled with `tra-compile --emit=lib` from C: the 16x32 by
   32x24 matmul of test/Interpreter/matmul.mlir (entry @main, a, b -> c),
   through the generated header's buffer enum and the descriptor; checks the
   result against a plain loop nest and prints "emit-lib: OK". */
#include "mm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { M = 16, K = 32, N = 24 };

int main(void) {
  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i)
    a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < K * N; ++i)
    b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  if (tra_exec_program.abiVersion != TRA_EXEC_ABI_VERSION ||
      tra_exec_program.numInputs != 2 || tra_exec_program.numOutputs != 1 ||
      TRA_NUM_BUFFERS != 3 ||
      strcmp(tra_exec_program.inputs[TRA_INPUT_b].name, "b") != 0 ||
      strcmp(tra_exec_program.outputs[TRA_OUTPUT_c - 2].name, "c") != 0 ||
      tra_exec_program.outputs[0].shape[1] != N) {
    printf("emit-lib: unexpected descriptor\n");
    return 1;
  }
  void *buffers[TRA_NUM_BUFFERS];
  buffers[TRA_INPUT_a] = a;
  buffers[TRA_INPUT_b] = b;
  buffers[TRA_OUTPUT_c] = c;
  tra_exec_set_num_threads(1);
  tra_exec_program.run(buffers);
  /* A failed run-time check (an index out of range) leaves results that are
   * not the model's. */
  const char *failed = tra_exec_take_check_failure();
  if (failed) {
    fprintf(stderr, "run-time check failed: %s\n", failed);
    return 1;
  }
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k)
        want += (double)a[i * K + k] * b[k * N + j];
      double err = fabs(want - c[i * N + j]);
      if (err > worst)
        worst = err;
    }
  printf("emit-lib: entry @%s, max abs error %.2e\n",
         tra_exec_program.entryName, worst);
  if (!(worst < 1e-4))
    return 1;
  printf("emit-lib: OK\n");
  return 0;
}
