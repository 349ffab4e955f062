"""gunicorn's settings for the web tier; gunicorn reads this file from its working directory (/app in the image,
the checkout for `make bench`). Options on the command line still win."""

import gc

# gevent workers: a connection is a greenlet, so a client that sends its body slowly (or never finishes it) holds a
# greenlet and a socket, not a worker process — with sync workers three such clients stalled the tier. The body is
# read before Django runs, with a deadline, and the application's concurrency per worker is bounded, by
# config/web_tier.py. Every shipped start reads this file: the image's CMD (and so compose) and deploy/'s web pod.
worker_class = "gevent"
worker_connections = 1000  # connections (greenlets) per worker, slow ones included

# Python's cyclic collector, per worker. A request allocates tens of thousands of short-lived objects; with the
# default thresholds the collector ran every 700 allocations and, now and then, walked every object of the loaded
# application in one full pass, stalling the worker's threads: that was the API's p99 under load (150 ms where the
# median was 30). The application's objects, loaded once, are frozen out of the collector's passes (gc.freeze), and
# young collections run every 20,000 allocations. Garbage without cycles is freed by reference counting as before.
GC_THRESHOLDS = (20_000, 50, 100)


def post_worker_init(worker):
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
