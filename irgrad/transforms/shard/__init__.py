"""Passes over the `shard` dialect: partitioning a global program into per-device programs, and erasing annotations."""
