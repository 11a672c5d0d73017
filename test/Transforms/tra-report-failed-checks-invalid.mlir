// RUN: tra-opt %s --tra-report-failed-checks --verify-diagnostics

// A function that takes the runtime's name with another type is an error,
// not a call of the wrong function.
// expected-error @+1 {{has the name of the runtime's tra_exec_check_failed but another type}}
func.func private @tra_exec_check_failed(i64)

func.func @check(%ok: i1) {
  cf.assert %ok, "a check"
  return
}
