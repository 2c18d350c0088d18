"""Runs the stages: pipeline.py in memory, incremental.py into a published site (reusing engine
numbers from results_cache.py and check facts from facts.py), resident.py for `kvtriage serve`."""
