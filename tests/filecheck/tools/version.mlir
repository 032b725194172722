// RUN: irgrad-opt --version | filecheck %s

// CHECK: irgrad-opt {{[0-9]+\.[0-9]+\.[0-9]+}} (xDSL 0.75.0)
