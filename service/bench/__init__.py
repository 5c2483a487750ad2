"""Benchmarks' workloads: records built from a seed and stored as the service would."""
