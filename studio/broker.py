"""Celery's filesystem broker (the embedded default, no servers needed) with atomic message files.

kombu's filesystem transport creates a message file in the queue folder and then writes it, so a worker that
polls the folder in between takes an empty file, fails to decode it and stops ("Unrecoverable error:
JSONDecodeError"). Here each message is written in a staging folder and renamed into the queue folder: a
rename on one filesystem is atomic, so a consumer sees a whole message or none."""

import os
import uuid
from time import monotonic

from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        # kombu's name: the millisecond prefix keeps the queue in order when the folder is sorted.
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        staging = self.transport_options["staging_folder"]
        staged = os.path.join(staging, name)
        try:
            with open(staged, "wb") as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.replace(staged, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add file {name!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
