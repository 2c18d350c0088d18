"""Stage 3: which pages exist, their URLs, and what each one says (pages.py)."""
