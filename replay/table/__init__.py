"""The table: clocks, the desk (calls, holds, rewinds), its rule catalogue and the case
file an arbiter reads.
"""
