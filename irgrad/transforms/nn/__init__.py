"""Rewrites of `nn` IR into other `nn` IR, run before convert-nn-to-linalg."""
