"""Exporters: every file format behind one interface, every one reading the same Result rows.

- `base`: the Exporter interface (an extension, the whole document, optionally an appender);
- `files`: the dispatch by extension, --out checks, whole-file saves and the run's sinks
  (--out may be given several times);
- `csv`, `json`: the machine-readable files (`resultfile` reads them back and validates);
- `markdown`: tables, the README results section and whole `.md` result files;
- `html`: one self-contained page of a run or of a comparison, its charts drawn by `svg`;
- `columns`: the column list (header with unit, cell formatter) shared by the terminal,
  Markdown and HTML tables, so they cannot disagree;
- `terminal`: the Rich tables, warnings and the repeatability line (a printer, not a file).
"""
