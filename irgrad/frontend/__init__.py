"""Python model-building API: tracing to `nn` IR and JAX-style transforms."""

# The frontend is the API: its modules expect Tracer's operators (tensor_methods.install) and
# each other, so importing any of them loads the whole of irgrad/api.py, as `import irgrad`
# did before the API became lazy. (A partly imported irgrad.api is returned as it is.)
import irgrad.api  # noqa: E402, F401
