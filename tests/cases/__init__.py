"""Plain functions (``ops_cases``) and the harness (``harness``) of the numerical op corpus."""
