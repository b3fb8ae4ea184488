"""Driver side: the `pmppbench` process. The session runs a plan across lanes (a supervised
worker process per GPU, or a Ray actor's), streams rows to the sinks, and keeps every finished
row when the run stops."""
