"""Proof: the log tree (RFC 9162, ``merkle``) and the bytes the server signs (``signed``)."""
