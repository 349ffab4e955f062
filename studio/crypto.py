"""Encryption at rest for secrets in the database (cluster credentials), with Fernet."""

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models


def _fernet() -> Fernet:
    key = settings.FIELD_ENCRYPTION_KEY
    if not key:
        if not settings.DEBUG:
            raise ImproperlyConfigured("FIELD_ENCRYPTION_KEY is not set, and DEBUG is off.")
        # Derived only under DEBUG, so a development shell works without configuration.
        key = base64.urlsafe_b64encode(hashlib.sha256(("field-encryption:" + settings.SECRET_KEY).encode()).digest())
    return Fernet(key)


def encrypt(text: str) -> str:
    return _fernet().encrypt(text.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError("Stored secret cannot be decrypted with the configured FIELD_ENCRYPTION_KEY.") from exc


class EncryptedTextField(models.TextField):
    """Plain text in Python, Fernet ciphertext in the database."""

    def from_db_value(self, value, expression, connection):
        return decrypt(value) if value else value

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return encrypt(value) if value else value
