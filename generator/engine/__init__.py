"""The KV-capacity engine: pure arithmetic, no I/O, YAML, Jinja, logging or environment."""
