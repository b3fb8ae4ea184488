"""Worker side: the process that owns one GPU. It runs one step's pipeline (pipeline.py), then
--counters (counters.py), and answers its supervisor (process.py)."""
