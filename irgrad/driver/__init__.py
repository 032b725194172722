"""Command-line drivers: irgrad-opt and irgrad-run. tools/ holds thin launchers over these."""
