"""`kvtriage serve`: HTTP on 127.0.0.1, the builder process, the watcher (serve.py)."""
