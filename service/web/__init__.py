"""The HTTP adapter (``serve --http``): live replay pages and the board, over the same
application."""
