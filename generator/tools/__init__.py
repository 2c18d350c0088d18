"""Editor tools: new, schema, import-model (editor.py)."""
