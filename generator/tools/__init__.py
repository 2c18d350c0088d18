"""Editor tools: `new` (new.py), `schema` (schema_export.py), `import-model` (import_model.py); their
command line is editor.py."""
