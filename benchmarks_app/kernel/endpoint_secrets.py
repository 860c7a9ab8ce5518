"""Secrets at rest (the API keys of registered inference endpoints): Fernet (AES-128-CBC with HMAC-SHA256, from
`cryptography`), with the key derived by HKDF-SHA256 from a setting.

The key material is SIZING_SECRETS_KEY (environment variable; any long random string) or, when it is unset,
Django's SECRET_KEY, so the one-command start works with nothing to configure. The same material always derives the
same key (salt and context are fixed here), so restarts and several processes agree.

Rotation, and its limits:
- Decryption tries the current material, then SIZING_SECRETS_KEY_FALLBACKS (comma-separated), then (when
  SIZING_SECRETS_KEY is set) SECRET_KEY, then Django's SECRET_KEY_FALLBACKS. Encryption always uses the current one.
  `python manage.py endpoint_keys_rotate` re-encrypts every stored key with the current material; after it has run,
  the old material can be dropped.
- Rotating SECRET_KEY while SIZING_SECRETS_KEY is unset changes the encryption key too: keep the old SECRET_KEY in
  SECRET_KEY_FALLBACKS (or SIZING_SECRETS_KEY_FALLBACKS) until the rotate command has run.
- Material that is lost cannot be recovered: keys encrypted with it cannot be read, `endpoint_api_key` raises
  SecretUnreadable, and an admin has to enter the endpoint's key again. Nothing else is lost.
- Anyone who holds both the database and the material can read the keys; the encryption protects database dumps and
  backups, not a compromised application server.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.views.decorators.debug import sensitive_variables

_SALT = b"llm-sizing secrets v1"
_INFO = b"endpoint api keys"


class SecretUnreadable(Exception):
    """A stored secret that none of the configured key materials decrypts (the material changed or was lost)."""


def derived_key(material: str) -> bytes:
    """A Fernet key (urlsafe base64 of 32 bytes) derived from `material` with HKDF-SHA256."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO)
    return base64.urlsafe_b64encode(hkdf.derive(material.encode()))


def key_materials() -> list[str]:
    """The current material first, then the ones that still decrypt (see the module's rotation notes)."""
    own = str(getattr(settings, "SIZING_SECRETS_KEY", "") or "")
    materials: Iterable[str] = [
        own or settings.SECRET_KEY,
        *getattr(settings, "SIZING_SECRETS_KEY_FALLBACKS", []),
        *([settings.SECRET_KEY] if own else []),
        *getattr(settings, "SECRET_KEY_FALLBACKS", []),
    ]
    seen: list[str] = []
    for material in materials:
        if material and material not in seen:
            seen.append(material)
    return seen


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(derived_key(material)) for material in key_materials()])


@sensitive_variables()  # Django's error reports show none of its (or Fernet's) variables
def secret_encrypt(value: str) -> str:
    """A Fernet token (ASCII) of `value`, with the current material."""
    return _fernet().encrypt(value.encode()).decode("ascii")


@sensitive_variables()  # Django's error reports show none of its (or Fernet's) variables
def secret_decrypt(token: str) -> str:
    """The value of a token from secret_encrypt; SecretUnreadable when no configured material decrypts it."""
    try:
        return _fernet().decrypt(token.encode("ascii")).decode()
    except (InvalidToken, UnicodeError, ValueError):
        raise SecretUnreadable(
            "the stored secret cannot be decrypted with SIZING_SECRETS_KEY (or its fallbacks): "
            "was the key material changed? enter the endpoint's API key again"
        ) from None


@sensitive_variables()  # Django's error reports show none of its (or Fernet's) variables
def secret_rotate(token: str) -> str:
    """The token re-encrypted with the current material (SecretUnreadable when it cannot be read)."""
    try:
        return _fernet().rotate(token.encode("ascii")).decode("ascii")
    except (InvalidToken, UnicodeError, ValueError):
        raise SecretUnreadable("the stored secret cannot be decrypted with any configured key material") from None
