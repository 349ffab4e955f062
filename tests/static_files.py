"""WhiteNoise as production runs it, with one difference for the test run: the static files that Django's finders
list are looked up once per test process, not once per test client.

Each Django test client loads the middleware anew, and WhiteNoise's start lists, stats and prepares every static
file (241 of them: ours, the admin's, DRF's, the API docs'): 57 ms. The suite makes thousands of clients (the
authorization matrix alone six a route), which came to about half of that module's time. The files do not change
during a run, so the prepared entries of the first start serve every later one."""

from whitenoise.middleware import WhiteNoiseMiddleware


class WhiteNoiseFindingOnce(WhiteNoiseMiddleware):
    _found: dict | None = None

    def add_files_from_finders(self):
        if WhiteNoiseFindingOnce._found is None:
            super().add_files_from_finders()
            WhiteNoiseFindingOnce._found = dict(self.files)
        else:
            self.files.update(WhiteNoiseFindingOnce._found)
