"""What the portal keeps of its own: when each user last saw their home page, for "what changed since your last
visit"."""

from django.conf import settings
from django.db import models


class HomeVisit(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                related_name="home_visit")
    seen_at = models.DateTimeField()  # the last time the home page was opened
    since = models.DateTimeField(null=True, blank=True)  # where "what changed" of the current visit starts

    def __str__(self):
        return f"{self.user_id} at {self.seen_at:%Y-%m-%d %H:%M}"
