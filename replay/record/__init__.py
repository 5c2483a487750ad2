"""The record: rows and their hash chain, canonical bytes, the seeded RNG, what a viewer
may see of it (visibility), its export and check, its history and its audit.
"""
