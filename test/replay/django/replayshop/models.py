# The replay app's models are its migrations (test/replay/django/replayshop/
# migrations/): test/replay/replay.py only runs `migrate`, forwards and
# backwards, never makemigrations.
