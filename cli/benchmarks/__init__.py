"""The benchmarks behind ``feastlog bench``, ``bench-audit`` and ``bench-scale`` (``cli/bench.py``):
each drives a real server or file as a user would and returns its report's lines."""
