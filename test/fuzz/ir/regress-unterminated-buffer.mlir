// (UN: tra-opt %s K-Luitofp %{{// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/reference.py gen rmsnorm %t
// RUN: tra-interpret %s --input x=%t/x.npy --input w=%t/w.npy --output y=%t/out_y.npy
// RUN: %python %S/Inputs/reference.py ch.*}} :  : i1 to i64
// eck C
H