"""The HTML report: its tables are the terminal's, it is self-contained, bad input is one line
and exit 2, and its pages work in a real browser (headless Chromium, network blocked).

The browser tests open pages made from committed result files: the default H200 run, a
--counters run, a two-GPU run built here from the default run, and a comparison of two
committed runs. Without Playwright or Chromium they skip with the reason (CI installs both:
.ci/run and the test extra).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pmppbench.results import compare as comparing
from pmppbench.results.export import html
from pmppbench.results.export.columns import columns_for, counter_columns_for
from pmppbench.results.export.files import save
from pmppbench.results.health import device_key
from pmppbench.results.resultfile import load
from pmppbench.row import Result

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "tests/data/h200-default.csv"  # an H200 default run
COUNTERS = ROOT / "tests/data/h200-hardware.json"  # `all --config hardware --counters` on the H200
PLAIN = ROOT / "tests/data/h200-plain.csv"  # another H200 run of the default config


class Tables(HTMLParser):
    """Every <table> of a page: its class, data attributes and its rows as lists of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"class": a.get("class", ""), "data": {k[5:]: v for k, v in a.items()
                                                                       if k.startswith("data-")}, "head": [], "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append("".join(self._cell))
            self._cell = None


def tables_of(page: str) -> list[dict]:
    parser = Tables()
    parser.feed(page)
    for t in parser.tables:
        t["head"], t["rows"] = t["rows"][0], t["rows"][1:]
    return parser.tables


def two_gpus(rows: list[Result]) -> list[Result]:
    """The default run as if it had run on two GPUs: the second one 3% slower on every row,
    its batch range shifted with it (so it is slower beyond the noise wherever the spread is
    under 3%)."""
    first, second = [], []
    for r in rows:
        a = copy.deepcopy(r)
        a.device_uuid, a.device_pci = "GPU-aaaa", "0000:19:00.0"
        b = copy.deepcopy(r)
        b.device_uuid, b.device_pci = "GPU-bbbb", "0000:3b:00.0"
        for name in ("median_ms", "min_ms", "max_ms"):
            if getattr(b, name) is not None:
                setattr(b, name, getattr(b, name) * 1.03)
        for name in ("gb_per_s", "gflop_per_s"):
            if getattr(b, name) is not None:
                setattr(b, name, getattr(b, name) / 1.03)
        first.append(a)
        second.append(b)
    return first + second


# ---- the page's content, without a browser ----------------------------------------------------

def test_tables_are_the_terminals_columns_and_cells():
    rows, meta = load(DEFAULT)
    page = html.document(rows, meta)
    results = [t for t in tables_of(page) if t["class"] == "results"]
    assert [t["data"]["workload"] for t in results] == list(dict.fromkeys(r.workload for r in rows))
    for t in results:
        mine = [r for r in rows if r.workload == t["data"]["workload"]]
        cols = columns_for(mine)
        assert t["head"] == [c.header for c in cols]
        assert t["rows"] == [[c.cell(r) for c in cols] for r in mine]


def test_counters_table_and_warnings():
    rows, meta = load(COUNTERS)
    page = html.document(rows, meta)
    counters = [t for t in tables_of(page) if t["class"] == "counters"]
    assert counters
    for t in counters:
        mine = [r for r in rows if r.workload == t["data"]["workload"]]
        assert t["rows"] == [[c.cell(r) for c in counter_columns_for(mine)] for r in mine]
    default_rows, default_meta = load(DEFAULT)
    page = html.document(default_rows, default_meta)
    for w in {w for r in default_rows for w in r.warnings}:
        assert html.esc(w) in page


def test_self_contained_and_under_a_megabyte():
    rows, meta = load(DEFAULT)
    page = html.document(rows, meta)
    assert len(page.encode()) < 1_000_000
    # nothing to fetch: no src, no link, no url() or @import; hrefs only to anchors in the page;
    # the only address is SVG's namespace name, which is never fetched
    assert not re.search(r"\ssrc=|<link|url\((?!#)|@import", page)
    assert re.findall(r'href="([^"]*)"', page) and all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', page))
    assert set(re.findall(r"https?://[^\s\"'<]+", page)) == {"http://www.w3.org/2000/svg"}


def test_caption_names_device_and_protocol():
    rows, meta = load(DEFAULT)
    page = html.document(rows, meta)
    assert "Measured on NVIDIA H200 (sm_90) · driver 580.159.04" in page
    assert "NVIDIA H200 (sm_90) · L2 settled, 3 warmup, 5 batches x 100 calls, median of batch means (events timer)" in page


def test_ladder_marks_baseline_and_roof_with_text():
    rows, meta = load(DEFAULT)
    chart = html.ladder([r for r in rows if r.workload == "transpose"], meta, "transpose")
    assert ">naive (baseline)<" in chart and ">memcpy (roof)<" in chart
    assert ">3,701 GB/s · 94.8% of memcpy · 86.8% of measured roof<" in chart  # coarsened 4096x4096, as in the table
    assert ">measured roof 4,266 GB/s<" in chart  # the run measured its ceilings (info --measure)


def test_ratio_range_agrees_with_the_verdict():
    def row(lo, mid, hi):
        return Result("w", "v", "1", check="PASS", median_ms=mid, min_ms=lo, max_ms=hi)

    base = row(0.9, 1.0, 1.1)
    for new, verdict in ((row(1.2, 1.3, 1.4), "SLOWER"), (row(0.5, 0.6, 0.7), "FASTER"), (row(1.0, 1.05, 1.2), "SAME")):
        c = comparing.Comparison(base, new, comparing.verdict(base, new))
        lo, hi = html.ratio_range(c)
        assert c.verdict == verdict
        assert (lo > 1) == (verdict == "SLOWER") and (hi < 1) == (verdict == "FASTER")
    lo, hi = html.ratio_range(comparing.Comparison(base, row(1.2, 1.3, 1.4), "SLOWER"))
    assert (lo, hi) == pytest.approx((1.2 / 1.1, 1.4 / 0.9))


def test_health_view_names_the_slow_gpu():
    rows, meta = load(DEFAULT)
    page = html.document(two_gpus(rows), meta)
    tables = tables_of(page)
    health = next(t for t in tables if t["class"] == "health")
    assert [r[0] for r in health["rows"]] == ["GPU-aaaa (NVIDIA H200 0000:19:00.0)", "GPU-bbbb (NVIDIA H200 0000:3b:00.0)"]
    assert "slower than the other GPUs beyond their noise: GPU-bbbb" in page
    per_gpu = [t for t in tables if t["class"] == "results"]
    assert len(per_gpu) == 2 * len({r.workload for r in rows})


# ---- the commands -----------------------------------------------------------------------------

def test_report_html_writes_the_page(tmp_path, run_cli):
    out = tmp_path / "report.html"
    code, stdout, err = run_cli("report", str(DEFAULT), "--html", str(out))
    assert code == 0, err
    assert stdout.strip() == f"wrote {out}"
    rows, meta = load(DEFAULT)
    assert out.read_text() == html.document(rows, meta)


def test_report_html_bad_input(tmp_path, run_cli):
    out = tmp_path / "report.html"
    out.write_text("precious")
    code, _, err = run_cli("report", str(DEFAULT), "--html", str(out))
    assert code == 2 and err.strip() == f"pmppbench: --html {out} exists; pass --force to overwrite it or choose another --html"
    broken = tmp_path / "broken.csv"
    broken.write_text(DEFAULT.read_text()[:5000])  # cut mid-row
    code, _, err = run_cli("report", str(broken), "--html", str(out), "--force")
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(broken) in err
    assert out.read_text() == "precious"
    missing = tmp_path / "no-such-folder" / "r.html"
    code, _, err = run_cli("report", str(DEFAULT), "--html", str(missing))
    assert code == 2 and err.strip() == f"pmppbench: --html {missing}: folder {missing.parent} does not exist"
    code, _, err = run_cli("report", str(DEFAULT), "--html", str(tmp_path))
    assert code == 2 and err.strip() == f"pmppbench: --html {tmp_path} is a folder; give a file name"


def test_report_html_unwritable_folder(run_cli):
    folder = Path("/sys")  # Linux's sysfs refuses new files, even to root
    if not folder.is_dir():
        pytest.skip("needs Linux's /sys")
    target = folder / "report.html"
    code, _, err = run_cli("report", str(DEFAULT), "--html", str(target))
    assert code == 2 and err.strip() == (f"pmppbench: --html {target}: cannot write there (Permission denied); "
                                         "choose another --html")
    assert not target.exists()


def test_compare_html(tmp_path, run_cli):
    out = tmp_path / "diff.html"
    code, stdout, err = run_cli("compare", str(PLAIN), str(DEFAULT), "--html", str(out))
    assert code == 0, err
    assert stdout.strip().endswith(f"wrote {out}")
    page = out.read_text()
    report = comparing.compare_files(PLAIN, DEFAULT)
    table = next(t for t in tables_of(page) if t["class"] == "compare")
    assert table["head"] == list(comparing.HEADERS)
    assert table["rows"] == [list(comparing.comparison_cells(c)) for c in report.matched]
    assert html.esc(report.summary()) in page
    assert {"SLOWER", "FASTER", "SAME"} <= {row[-1] for row in table["rows"]}
    code, _, err = run_cli("compare", str(PLAIN), str(DEFAULT), "--html", str(out))
    assert code == 2 and "--force" in err and out.read_text() == page


# ---- in a real browser ------------------------------------------------------------------------

CHROMIUM_FLAGS = ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def _chromium() -> str | None:
    return os.environ.get("PMPPBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install -e '.[test]')")
    path = _chromium()
    if path is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium; .ci/run installs it)")
    with sync_playwright() as p:
        # Playwright gives each launch a new, empty profile (a fresh --user-data-dir)
        b = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()


def _pages(tmp_path: Path) -> dict[str, tuple[Path, list[Result] | None]]:
    rows, meta = load(DEFAULT)
    pages = {}
    for name, (rs, m) in {"default": (rows, meta), "counters": load(COUNTERS),
                          "two-gpus": (two_gpus(rows), meta)}.items():
        path = tmp_path / f"{name}.html"
        save(path, rs, m)
        pages[name] = (path, rs)
    report = comparing.compare_files(PLAIN, DEFAULT)
    path = tmp_path / "compare.html"
    path.write_text(html.compare_document(report, report.base_meta, report.new_meta))
    pages["compare"] = (path, None)
    return pages


def test_pages_in_chromium(browser, tmp_path):
    report = comparing.compare_files(PLAIN, DEFAULT)
    for name, (path, rows) in _pages(tmp_path).items():
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        fetched = []

        def block(route, fetched=fetched):
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                fetched.append(route.request.url)
                route.abort()

        context.route("**/*", block)
        page = context.new_page()
        errors = []
        page.on("console", lambda msg, errors=errors: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        assert errors == [], (name, errors)

        # every chart drawn: each <svg> and each of its marks has a non-empty box
        charts = page.locator("svg.chart")
        assert charts.count() >= (1 if name == "compare" else 5), name
        for i in range(charts.count()):
            box = charts.nth(i).bounding_box()
            assert box and box["width"] > 100 and box["height"] > 50, (name, i)
        empty_marks = page.evaluate("""() => [...document.querySelectorAll('svg.chart .mark')]
            .filter(m => { const b = m.getBBox(); return !(b.width > 0 && b.height > 0); }).length""")
        assert page.locator("svg.chart .mark").count() > 10 and empty_marks == 0, name

        # each table has the file's rows
        if rows is not None:
            for t in page.locator("table.results, table.counters").all():
                w, d = t.get_attribute("data-workload"), t.get_attribute("data-device")
                want = [r for r in rows if r.workload == w and (not d or device_key(r) == d)]
                assert t.locator("tbody tr").count() == len(want), (name, w, d)
            assert sum(t.locator("tbody tr").count() for t in page.locator("table.results").all()) == len(rows)
            assert (page.locator("table.counters").count() > 0) == (name == "counters")
        else:
            assert page.locator("table.compare tbody tr").count() == len(report.matched)

        # a hover shows the mark's value: a bar (or a compare interval) and a roofline point
        targets = ["svg.compare .mark"] if name == "compare" else ["svg.ladder .mark", "svg.roofline .point"]
        for selector in targets:
            mark = page.locator(selector).last  # drawn last: on top of any mark it overlaps
            mark.scroll_into_view_if_needed()
            mark.hover()
            tip = page.locator("#tip")
            assert tip.is_visible(), (name, selector)
            assert tip.inner_text() == mark.get_attribute("data-tip") and re.search(r"\d", tip.inner_text())

        shot = tmp_path / f"{name}.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert errors == [] and fetched == [], (name, errors, fetched)
        context.close()


@pytest.mark.parametrize("board", sorted(p.name for p in (ROOT / "results").iterdir() if p.is_dir()))
def test_committed_page_is_the_committed_run(board):
    """results/<board>/default.html is `report --html` of results/<board>/default.csv with this
    build; after a change to the page, regenerate it: pmppbench report results/<board>/default.csv
    --html results/<board>/default.html --force."""
    rows, meta = load(ROOT / "results" / board / "default.csv")
    assert (ROOT / "results" / board / "default.html").read_text() == html.document(rows, meta)


def test_check_only_page_has_tables_and_no_empty_charts():
    rows = [Result("vecadd", v, "1000", check="PASS", max_abs_err=0.0, max_rel_err=0.0, tolerance="bit-exact")
            for v in ("scalar", "float4")]
    page = html.document(rows, {"name": "Test GPU", "check_only": True})
    assert "Test GPU · check only · bit-exact" in page and "<svg" not in page
    (table,) = [t for t in tables_of(page) if t["class"] == "results"]
    assert table["head"] == ["variant", "shape", "check", "max_abs_err", "max_rel_err"]
    assert table["rows"] == [["scalar", "1000", "PASS", "0.00e+00", "0.00e+00"], ["float4", "1000", "PASS", "0.00e+00", "0.00e+00"]]


def test_roofline_draws_both_ceilings_and_every_point():
    from pmppbench.measure.roofline import Ceilings, ceilings_meta

    rows, meta = load(DEFAULT)
    gemm = [r for r in rows if r.workload == "gemm"]
    meta = dict(meta, ceilings=ceilings_meta([Ceilings("theoretical", 4814.3, 66908.2),
                                              Ceilings("measured", 4100.0, 51000.0)]))
    chart = html.roofline(gemm, meta, "gemm", several_devices=False)
    assert chart.count("<polyline") == 2 and chart.count('stroke-dasharray="7,4"') == 2  # the measured roof and ridge
    assert ">theoretical: 4,814 GB/s, 66,908 GFLOP/s, ridge 13.9 FLOP/B<" in chart
    assert ">measured: 4,100 GB/s, 51,000 GFLOP/s, ridge 12.4 FLOP/B<" in chart
    assert chart.count('class="mark point"') == len(gemm)
    labels = re.findall(r'class="pointlabel" pointer-events="none"[^>]*>([^<]+)<', chart)
    assert sorted(labels) == sorted(r.variant for r in gemm)
