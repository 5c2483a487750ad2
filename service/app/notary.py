"""What the server signs and how a signature is checked: receipts, tree heads, cosignatures.

The key itself and the ``Notary`` that signs with it are ``service/signing.py`` (the
store's process signs receipts with it too); its names are this module's as well, so the
application, the CLI and the witness find them here.  ``signature_holds`` checks
signatures for the offline verifier and the witness.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from feastlog.replay.proof.signed import Cosignature, Receipt, TreeHead
from feastlog.service.signing import SIGNING_KEY_ENV as SIGNING_KEY_ENV
from feastlog.service.signing import SIGNING_KEY_FILE as SIGNING_KEY_FILE
from feastlog.service.signing import Notary as Notary
from feastlog.service.signing import SigningKeyError as SigningKeyError
from feastlog.service.signing import load_or_make as load_or_make
from feastlog.service.signing import server_notary as server_notary


def signature_holds(public_key: str, message: bytes, signature: str) -> bool:
    """Whether ``signature`` (hex) is ``public_key``'s (hex) over ``message``."""
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))
        key.verify(bytes.fromhex(signature), message)
    except (ValueError, InvalidSignature):
        return False
    return True


def signed_by(signed: Receipt | TreeHead, public_key: str | None = None) -> bool:
    """Whether a receipt or head carries a good signature of its key (and that key is
    ``public_key``, when given)."""
    if public_key is not None and signed.public_key != public_key:
        return False
    return signature_holds(signed.public_key, signed.message(), signed.signature)


def cosigned(cosignature: Cosignature) -> bool:
    """Whether a cosignature carries a good signature of its witness's key."""
    return signature_holds(cosignature.witness_key, cosignature.message(), cosignature.signature)
