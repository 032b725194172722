"""irgrad: an MLIR-style multi-level IR compiler toolkit for differentiable tensor programs.

The package reads as the pipeline: frontend/ -> dialects/ -> autodiff/ -> lowering/ -> backends/;
driver/ holds the command-line tools (irgrad-opt, irgrad-run).
"""

__version__ = "0.1.0"
