"""Celery's filesystem broker (the embedded default, no servers needed) with atomic message files.

kombu's filesystem transport creates a message file in the queue folder and then writes it, so a worker that
polls the folder in between takes an empty file, fails to decode it and stops ("Unrecoverable error:
JSONDecodeError"). Here each message is written in a staging folder and renamed into the queue folder: a
rename on one filesystem is atomic, so a consumer sees a whole message or none. A consumer claims a message by
renaming it into the processed folder (kombu copies it to the system temp folder, which may be another
filesystem), so two consumers never both take it and none reads a half-copied file. The exchange tables in the
control folder are replaced whole as well: kombu truncates and rewrites them in place, so a process declaring a
queue while another reads the table also read an empty file."""

import os
import uuid
from queue import Empty
from time import monotonic

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads


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


    def _get(self, queue):
        wanted = f"{queue}.msg"
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.partition(".")[2] != wanted:
                continue
            claimed = os.path.join(self.processed_folder, name)
            try:
                os.replace(os.path.join(self.data_folder_in, name), claimed)
            except FileNotFoundError:
                continue  # another consumer claimed it first
            try:
                with open(claimed, "rb") as handle:
                    payload = handle.read()
            finally:
                if not self.store_processed:
                    os.remove(claimed)
            return loads(bytes_to_str(payload))
        raise Empty()


    def _queue_bind(self, exchange, routing_key, pattern, queue):
        table = self._exchange_file(exchange)
        self.control_folder.mkdir(exist_ok=True)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        # Writers take turns on a lock file; readers never wait: they read the old table or the new, never half.
        with open(f"{table}.lock", "a") as guard:
            filesystem.lock(guard, filesystem.LOCK_EX)
            try:
                queues = self.get_table(exchange)
                if entry in queues:
                    return
                staged = f"{table}.{uuid.uuid4().hex}.tmp"
                with open(staged, "wb") as handle:
                    handle.write(str_to_bytes(dumps([entry, *queues])))
                os.replace(staged, table)
            finally:
                filesystem.unlock(guard)


class Transport(filesystem.Transport):
    Channel = Channel
