"""tuning: float models over the exact formulas - the GEMM schedule space and its analytic time
model, the L2 estimate, and (later) search.  It sits below :mod:`verify` and above :mod:`symbolic`:
it may use the exact formulas, never the executors, and nothing here is a count."""
