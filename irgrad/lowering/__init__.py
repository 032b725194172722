"""Progressive lowering passes, one per file, named X_to_Y."""
