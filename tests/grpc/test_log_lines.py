"""What the server's own log lines may hold: never a credential (README, the request log)."""

from __future__ import annotations

import logging

import pytest

from feastlog.service.grpc.requestlog import GRPC_LOGGER, quiet_metadata_values


def test_grpcs_line_about_an_undecodable_metadata_value_keeps_the_value_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """gRPC's Python layer logs a metadata value it cannot decode whole, with a traceback
    ("Invalid encoding on b'Bearer <token>\\xff'", seen from a client sending such a
    header): a token with one stray byte was written out nearly whole.  The server's
    filter rewrites that line without the value; gRPC's other lines pass unchanged."""
    quiet_metadata_values()
    quiet_metadata_values()  # once per process, however many servers start
    logger = logging.getLogger(GRPC_LOGGER)
    assert len(logger.filters) == 1
    value = b"Bearer tok_secret_token_value\xff\xfe"
    with caplog.at_level(logging.INFO, logger=GRPC_LOGGER):
        try:
            value.decode()
        except UnicodeDecodeError:
            logger.exception("Invalid encoding on %s", value)  # as grpc_string.pyx does
        logger.error("some other line %s", "kept")
    assert "tok_secret" not in caplog.text and "Traceback" not in caplog.text
    first, second = caplog.records
    assert first.getMessage() == (
        "a call's metadata held a value that is not UTF-8 (not written here)"
    )
    assert first.levelname == "WARNING" and first.exc_info is None
    assert second.getMessage() == "some other line kept" and second.levelname == "ERROR"
