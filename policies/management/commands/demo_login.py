"""Prints how to log in as the demo admin, for `make run`'s banner: the password while it is still the one the
set-up made (or DEMO_ADMIN_PASSWORD), otherwise the one command that resets it. Never prints a password that no
longer works, and never makes one."""

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from .demo_setup import password_file

RESET = ".venv/bin/python manage.py changepassword admin"


class Command(BaseCommand):
    help = "Print the demo admin's user name and password (or how to reset it)."

    def handle(self, *args, **options):
        admin = get_user_model().objects.filter(username="admin").first()
        if admin is None:
            self.stdout.write("no admin user yet: run `make demo`")
            return
        known = os.environ.get("DEMO_ADMIN_PASSWORD") or (
            password_file().read_text().strip() if password_file().exists() else "")
        if known and admin.check_password(known):
            self.stdout.write(f"admin / {known}")
        else:
            self.stdout.write(f"admin (password changed since set-up; reset it with: {RESET})")
