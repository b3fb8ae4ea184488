"""Rows after the measurement: derived values, result files, metadata, comparison, export, plots."""
