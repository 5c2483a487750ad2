"""TLS for the server and its clients: PEM files read once, turned into gRPC credentials.

The server takes its certificate and key (``--tls-cert``, ``--tls-key``) and, with
``--ca``, asks every client for a certificate signed by that CA. A client takes the CA it
trusts for the server (``--ca``; the system's roots without it) and, for a server that
asks, its own certificate and key.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc

MOST_PEM = 1024 * 1024  # a certificate chain, a key or a CA bundle is a few KB


class TlsFileError(Exception):
    """A certificate, key or CA file that cannot be read: one line."""


def _read(path: str | None, what: str) -> bytes | None:
    if not path:
        return None
    try:
        with Path(path).open("rb") as file:
            data = file.read(MOST_PEM + 1)  # no more: it may be /dev/zero
    except OSError as failed:
        raise TlsFileError(f"cannot read the {what} {path}: {failed.strerror or failed}") from None
    if len(data) > MOST_PEM:
        raise TlsFileError(f"the {what} {path} is larger than a PEM file may be (1 MiB)")
    if b"-----BEGIN" not in data:
        raise TlsFileError(f"the {what} {path} is not a PEM file")
    return data


def _parse(cert: str | None, key: str | None, ca: str | None) -> None:
    """TlsFileError unless the PEM files hold what they are named for: gRPC takes any
    bytes here, then fails to listen (told as a port taken) or to connect, after lines of
    its own on stderr."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if cert and key:
        try:  # an encrypted key: no password to give it (gRPC takes none either)
            context.load_cert_chain(cert, key, password=lambda: b"")
        except (ssl.SSLError, ValueError) as bad:
            raise TlsFileError(
                f"{cert} and {key} are not a PEM certificate and its private key (a key "
                f"protected by a password cannot be used){_detail(bad)}"
            ) from None
    if ca:
        try:
            context.load_verify_locations(cafile=ca)
        except (ssl.SSLError, ValueError) as bad:
            raise TlsFileError(f"the CA file {ca} holds no PEM certificate{_detail(bad)}") from None


def _detail(error: Exception) -> str:
    """OpenSSL's reason, when it gives one that says more than where it failed."""
    reason = getattr(error, "reason", None)
    return f": {reason.lower().replace('_', ' ')}" if reason and reason != "PEM_LIB" else ""


@dataclass(frozen=True)
class Tls:
    """PEM bytes: this side's certificate and key, and the CA it trusts for the other side."""

    cert: bytes | None = None
    key: bytes | None = None
    ca: bytes | None = None

    @classmethod
    def load(cls, cert: str | None, key: str | None, ca: str | None) -> Tls | None:
        """The files read, or None when none is given; TlsFileError for a bad one."""
        if not (cert or key or ca):
            return None
        if bool(cert) != bool(key):
            raise TlsFileError("--tls-cert and --tls-key go together")
        found = cls(_read(cert, "certificate"), _read(key, "private key"), _read(ca, "CA file"))
        _parse(cert, key, ca)
        return found

    def server_credentials(self) -> grpc.ServerCredentials:
        """For a server: its certificate; with a CA, client certificates are required."""
        if self.cert is None or self.key is None:
            raise TlsFileError("a TLS server needs --tls-cert and --tls-key")
        return grpc.ssl_server_credentials(
            [(self.key, self.cert)], root_certificates=self.ca, require_client_auth=bool(self.ca)
        )

    def channel_credentials(self) -> grpc.ChannelCredentials:
        """For a client: the CA to trust (the system's without one) and its own certificate."""
        return grpc.ssl_channel_credentials(
            root_certificates=self.ca, private_key=self.key, certificate_chain=self.cert
        )
