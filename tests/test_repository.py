"""The repository tells the product, not its history, and results/ holds results: no
development rounds, device-run folders, build hashes or issue numbers anywhere in the tree
(CHANGELOG.md keeps what a user needs by version; git keeps the rest), results/ within its
limits with a README per board, and every table README.md and docs/ quote from results/
is what scripts/results_tables.py makes of the committed files now."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
sys.path.insert(0, str(ROOT / "scripts"))
import results_tables  # noqa: E402

# Numbered development rounds and device calls (words or folder forms), build and commit
# hashes, issue references, and the folder names single device runs were kept in
# (HISTORY_EXAMPLES has one of each).
HISTORY = re.compile(r"""
    \bsessions?[ _-]?\d+ | \bcalls?[ _-]?\d+\b | \brounds?[ _-]?\d+\b
  | \b(?:build|commit)s?[- ]`?[0-9a-f]{7,40}\b
  | (?<![\w&#])\#\d{1,2}(?!\w) | \bissue\ \#?\d+\b | \bissues\ \#\d+
  | \b(?:patterns|measure|tensor|scan|gemmodd)\d+\b | \bresults/next\b
""", re.I | re.X)
KEEPS_HISTORY = {ROOT / "CHANGELOG.md"}


def _tree() -> list[Path]:
    """Every file of the checkout that git tracks or would track (ignored files are not the
    project's: a venv, caches, build outputs)."""
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        return [ROOT / f for f in out if f and (ROOT / f).is_file()]
    skip = {".git", ".venv", "__pycache__", ".pytest_cache", "build", "dist"}
    return [p for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
            and not any(part.endswith(".egg-info") for part in p.parts)]


def history_lines(text: str) -> list[tuple[int, str]]:
    return [(i, m.group(0)) for i, line in enumerate(text.split("\n"), 1) for m in HISTORY.finditer(line)]


# One text of each kind the pattern must find, each put together from its parts here, so that
# this file holds none of them whole and the tree test reads it too.
HISTORY_EXAMPLES = [("see session", " 19"), ("Session", " 9's profile"), ("results/h100/session", "28/run.sh"),
                    ("call", " 3 verified"), ("round", " 2"), ("results/h200/build", "-7e4c052"),
                    ("at commit", " 13602fc"), ("the question they answer (#", "36)"), ("issue", " 21"),
                    ("issues #", "30"), ("results/h200/patterns", "9/"), ("results/", "next/run.sh"),
                    ("measure", "10/"), ("call", "13/run.sh")]


def test_the_pattern_finds_each_kind_of_history_and_nothing_of_the_product():
    for head, tail in HISTORY_EXAMPLES:
        assert history_lines(head + tail), head + tail
    product = ["color:#111", "stroke=\"#000\"", "fill:#6b4a00", "two rounds of shuffles", "the first call",
               "3 warmup calls per variant", "issues 4 x BN/32 MMAs", "the session hands it to a lane",
               "tiled16, tiled32", "float4", "sm_90a", "a single scan pass", "1a786f4-dirty"]
    for text in product:
        assert not history_lines(text), text


def test_no_development_history_in_the_tree():
    hits = []
    for path in _tree():
        if path.resolve() in KEEPS_HISTORY:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # images, archives
        hits += [f"{path.relative_to(ROOT)}:{line}: {word!r}" for line, word in history_lines(text)]
    assert hits == [], "development history (say what is true now; git keeps the rest):\n" + "\n".join(hits[:40])


# ---- results/ -----------------------------------------------------------------------------------

BOARDS = results_tables.boards()
KINDS = (".csv", ".meta.json", ".json", ".html", ".png", ".md")


def test_results_holds_one_folder_per_board_within_its_limits():
    files = [p for p in RESULTS.rglob("*") if p.is_file()]
    assert BOARDS and [p for p in RESULTS.iterdir() if p.is_file()] == []
    assert len(files) <= 80, f"results/ holds {len(files)} files (at most 80)"
    assert sum(p.stat().st_size for p in files) <= 5 * 1024 * 1024, "results/ is over 5 MB"
    for board in BOARDS:
        assert (board / "README.md").is_file(), f"{board.name} has no README.md"
        assert [p for p in board.iterdir() if p.is_dir()] == [], f"results/{board.name} has a subfolder (a run's logs?)"
        for p in board.iterdir():
            assert p.name.endswith(KINDS), f"results/{board.name}/{p.name}: not a result file"
            if p.suffix == ".csv":
                assert Path(f"{p}.meta.json").is_file(), f"results/{board.name}/{p.name} has no meta.json"
        assert (board / "default.csv").is_file() and (board / "default.html").is_file()
        assert sorted(board.glob("*.png")), f"results/{board.name} has no plots of its default run"


def test_every_generated_table_and_board_readme_is_current():
    """README.md's and docs/'s result tables and results/<board>/README.md are what the
    committed files make now: after a run replaces a board's files, python scripts/results_tables.py."""
    stale = [str(p.relative_to(ROOT)) for p, text in results_tables.expected().items()
             if not p.exists() or p.read_text() != text]
    assert stale == [], f"stale: {stale} (run python scripts/results_tables.py)"


def test_readme_quotes_one_results_table_per_board():
    readme = (ROOT / "README.md").read_text()
    specs = [m.group("spec") for m in results_tables.REGION.finditer(readme)]
    assert sorted(s for s in specs if s.endswith(" summary")) == sorted(f"{b.name}/default.csv summary" for b in BOARDS)
    assert all(s.split("/")[0] in {b.name for b in BOARDS} for s in specs), specs


def test_a_region_naming_a_missing_file_or_kind_is_one_clear_error():
    with pytest.raises(SystemExit, match="no file results/h999/default.csv"):
        results_tables.make("h999/default.csv summary")
    with pytest.raises(SystemExit, match="expected 'BOARD/FILE KIND"):
        results_tables.make(f"{BOARDS[0].name}/default.csv median")


def test_the_summary_compares_the_fastest_rung_with_the_textbook_and_the_roof(tmp_path):
    """The summary's row of a workload reads its largest shape: the textbook rung, the fastest
    of the workload's own rungs (never the library's or the roof's), and that rung's % of roof."""
    src = RESULTS / BOARDS[0].name / "default.csv"
    rows = results_tables._rows(src)
    transpose = [r for r in rows if r["workload"] == "transpose" and r["shape"] == "4096x4096"]
    (line,) = [x for x in results_tables.summary(src) if x.startswith("| transpose |")]
    own = {r["variant"]: float(r["gb_per_s"]) for r in transpose if r["variant"] not in ("copy", "memcpy")}
    fastest = max(own, key=own.get)
    assert f"`{fastest}` " in line and "`memcpy` " in line and "`naive` " in line
    pct = next(float(r["pct_of_roof"]) for r in transpose if r["variant"] == fastest)
    assert line.rstrip(" |").endswith(f"{pct:.1f}")
