"""Presentation: a game told in words (narrative, explanations), its typed views and its
HTML pages with their assets, from the pure core's folds; no I/O."""
