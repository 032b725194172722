"""jax.scipy's names: `ig.special` (special.py).
"""

