"""studio.broker: the filesystem broker never hands a consumer a message file that is still being written."""

import threading

from kombu import Connection


def test_a_consumer_racing_the_producer_gets_every_message_whole(tmp_path):
    folders = {name: tmp_path / name for name in ("queue", "processed", "control", "staging")}
    for folder in folders.values():
        folder.mkdir()
    options = {"data_folder_in": str(folders["queue"]), "data_folder_out": str(folders["queue"]),
               "processed_folder": str(folders["processed"]), "control_folder": str(folders["control"]),
               "staging_folder": str(folders["staging"]), "polling_interval": 0}
    count, received, errors = 300, [], []

    def consume():
        with Connection("filesystem://", transport="studio.broker:Transport", transport_options=options) as conn:
            queue = conn.SimpleQueue("race")
            while len(received) < count:
                try:
                    message = queue.get(timeout=10)
                except Exception as exc:  # a torn file shows up here as a decoding error
                    errors.append(exc)
                    return
                received.append(message.payload["n"])
                message.ack()

    consumer = threading.Thread(target=consume)
    consumer.start()
    with Connection("filesystem://", transport="studio.broker:Transport", transport_options=options) as conn:
        queue = conn.SimpleQueue("race")
        for n in range(count):
            queue.put({"n": n, "padding": "x" * 4096})
    consumer.join(timeout=60)
    assert errors == []
    assert sorted(received) == list(range(count))
    assert list(folders["staging"].iterdir()) == []
