"""Stage "gpu": parallel loops to `gpu.launch` kernels, outlined kernels, NVVM (docs/design/gpu-pipeline.md)."""
