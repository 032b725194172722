"""Python model-building API: tracing to `nn` IR and JAX-style transforms."""
