"""The name rule for workloads, projects and profiles: a DNS-1123 label that starts with a letter."""

import re

from django.core.exceptions import ValidationError

NAME_PATTERN = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?\Z")  # \Z: no trailing newline
NAME_RULE = "Use 1–63 lowercase letters, digits and '-', starting with a letter and not ending with '-'."


def validate_name(value: str) -> None:
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise ValidationError(NAME_RULE, code="invalid_name")
