"""Stage 3: which pages exist (planner.py, with thin_guard.py and memo.py), their URLs (routes.py),
what each one says (views.py, advice.py), and the Page and Plan types rendering reads (pages.py)."""
