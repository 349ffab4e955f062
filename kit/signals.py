"""What the Kit app announces, for the apps to its right (which it never imports).

`stream_ended` is sent once the transaction that ended a stream session has committed; keywords `session_id`
(str), `idle` (True when the platform ended it for being idle, False when a user ended it), `message`."""

from django.db import transaction
from django.dispatch import Signal

stream_ended = Signal()  # sender: StreamSession; keywords: session_id, idle, message


def announce_ended(sender, *, session_id: str, idle: bool, message: str) -> None:
    transaction.on_commit(lambda: stream_ended.send(sender=sender, session_id=session_id, idle=idle,
                                                    message=message))
