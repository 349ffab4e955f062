"""config.broker: the filesystem broker never hands a consumer a message file that is still being written."""

import threading

from kombu import Connection, Queue


def test_a_consumer_racing_the_producer_gets_every_message_whole(tmp_path):
    folders = {name: tmp_path / name for name in ("queue", "processed", "control", "staging")}
    for folder in folders.values():
        folder.mkdir()
    options = {"data_folder_in": str(folders["queue"]), "data_folder_out": str(folders["queue"]),
               "processed_folder": str(folders["processed"]), "control_folder": str(folders["control"]),
               "staging_folder": str(folders["staging"]), "polling_interval": 0}
    count, received, errors = 300, [], []

    def consume():
        with Connection("filesystem://", transport="config.broker:Transport", transport_options=options) as conn:
            queue = conn.SimpleQueue("race")
            while len(received) < count and not errors:
                try:
                    message = queue.get(timeout=2)
                except queue.Empty:
                    continue
                except Exception as exc:  # a torn file shows up here as a decoding error
                    errors.append(exc)
                    return
                received.append(message.payload["n"])
                message.ack()

    # A consumer racing the producer (each declares the queue, each reads and writes the exchange table).
    consumers = [threading.Thread(target=consume)]
    for consumer in consumers:
        consumer.start()
    # The producer only publishes, as the web does (a SimpleQueue here would also consume).
    with Connection("filesystem://", transport="config.broker:Transport", transport_options=options) as conn:
        producer, race = conn.Producer(), Queue("race")
        for n in range(count):
            producer.publish({"n": n, "padding": "x" * 4096}, routing_key="race", declare=[race])
    for consumer in consumers:
        consumer.join(timeout=60)
    assert errors == []
    assert sorted(received) == list(range(count))  # none lost, none twice
    assert list(folders["staging"].iterdir()) == []
