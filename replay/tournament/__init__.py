"""A tournament as a record: its format, its rule catalogue, the fold of its stream, the
pairing of its rounds and its standings (docs/tournament.md).

A tournament is a stream in the same log as its games: a ``Genesis`` of game kind
``tournament`` whose options spell out the format, then ``TournamentCommand`` rows, then
the seed reveal.  Everything here is pure: the same rows and seed give the same state,
the same pairings and the same standings.
"""
