"""Stage 5: rules over what the plan and the rendered pages say (page_lint.py: advice, worked examples, reader-facing text)."""
