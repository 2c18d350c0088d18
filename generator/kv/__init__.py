"""`kvtriage kv` (command.py, catalog.py) and the in-page calculator's data (calculator.py)."""
