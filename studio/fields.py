"""Strict JSON fields that every app's serializers share. Pure: no models."""

from rest_framework import serializers

__all__ = ["Text"]


class Text(serializers.CharField):
    """A JSON string, untrimmed (DRF's CharField turns 5 into "5" and strips spaces)."""

    default_error_messages = {"invalid": "Must be a string."}

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
