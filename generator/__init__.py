"""kvtriage: turns YAML records about LLM-serving memory errors into a static site."""
