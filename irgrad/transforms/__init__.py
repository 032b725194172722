"""Target-independent IR transforms (passes that belong to no lowering step), such as symbol-dce."""
