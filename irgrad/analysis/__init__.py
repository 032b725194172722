"""Analyses over IR that passes, benchmarks and tests share (cost models, op counts, op graphs)."""
