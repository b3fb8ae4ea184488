"""Exporters: one module per format, every one reading the same Result rows.

- `columns`: the column list (header with unit, cell formatter) shared by the terminal and
  Markdown tables, so they cannot disagree;
- `terminal`: the Rich tables, warnings and the repeatability line;
- `csv`, `json`: the machine-readable files (`resultfile` reads them back and validates);
- `markdown`: tables, the README results section and whole `.md` result files.
"""
