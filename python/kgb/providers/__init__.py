"""Native providers: run the library an operator names on kgb's inputs and hand the
results back to kgb's validator."""
