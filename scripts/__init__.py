"""Developer scripts: proto generation, fixtures, benchmarks, the one-machine cluster."""
