"""JSON: {"format_version": N, "meta": {...}, "results": [{...}, ...]}, one object per Result."""

from __future__ import annotations

import json
from dataclasses import asdict

from pmppbench.results.export.base import Exporter
from pmppbench.results.resultfile import FORMAT_VERSION
from pmppbench.row import Result


def dumps(rows: list[Result], meta: dict) -> str:
    doc = {"format_version": FORMAT_VERSION, "meta": meta, "results": [asdict(r) for r in rows]}
    return json.dumps(doc, indent=2) + "\n"


EXPORTER = Exporter("json", dumps)
