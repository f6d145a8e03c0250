"""Model diff: match two ONNX models' nodes (names, then structure) and list what was added, removed, changed."""
