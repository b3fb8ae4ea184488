"""Running steps across the process boundary.

Driver side (the `pmppbench` process): the session hands each step to a lane (one per GPU, or a
Ray actor's), streams finished rows to the sinks and keeps them when a run stops.
Worker side (a supervised process that owns one GPU): one step's pipeline, then --counters.
"""
