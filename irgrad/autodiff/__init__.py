"""IR-level automatic differentiation: the `autodiff` pass and per-dialect derivative rules."""
