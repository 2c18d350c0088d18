"""Command lines for each engine (commands.py) and the check against each CLI's real surface (surface.py)."""
