"""Dialects irgrad declares itself: `nn` (high-level tensors) and `autodiff` (differentiation requests)."""
