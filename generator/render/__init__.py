"""Stage 4: pages in, strings out (templates.py: the Jinja environment, its filters, one page rendered)."""
