"""Result files: a broken or foreign file is one line and exit 2 for report, compare and plot,
and nothing is overwritten; writes are atomic; the format version is checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pmppbench.errors import UsageError
from pmppbench.results.export.files import check_writable, save
from pmppbench.results.resultfile import FORMAT_VERSION, load
from pmppbench.row import Result


def good_rows():
    return [Result("vecadd", "scalar", "1000", dims={"n": 1000}, check="PASS", median_ms=1.0, min_ms=0.99,
                   max_ms=1.01, spread_pct=2.0, bytes=12000, gb_per_s=0.012, device="Test GPU")]


def good_csv(tmp_path):
    path = tmp_path / "good.csv"
    save(path, good_rows(), {"name": "Test GPU"})
    return path


def broken_files(tmp_path):
    """name -> (path, words the message must contain)."""
    good = good_csv(tmp_path).read_text()
    header, row = good.splitlines()[:2]
    cases = {
        "empty": ("", "the file is empty"),
        "blank lines": ("\n\n  \n", "the file is empty"),
        "header only": (header + "\n", "no result rows"),
        "binary": (b"\x89PNG\r\n\x1a\n\x00\x00garbage", "binary data"),
        "not utf-8": (b"\xff\xfe\xfa text", "not UTF-8"),
        "foreign csv": ("a,b,c\n1,2,3\n", "no column workload, variant, shape, check"),
        "truncated last row": (header + "\n" + row[: len(row) // 2] + "\n", "fields but the header has"),
        "short row": (header + "\n" + "vecadd,scalar\n", "line 2 has 2 fields"),
        "bad number": (header + "\n" + row.replace(",1.0,", ",abc,", 1) + "\n", "column median_ms: expected a number, got 'abc'"),
        "bad check": (header + "\n" + row.replace(",PASS,", ",MAYBE,", 1) + "\n", "column check: expected one of PASS"),
        "newer format": (header + "\n" + str(FORMAT_VERSION + 1) + row[1:] + "\n", "written by a newer pmppbench"),
        "nan median": (header + "\n" + row.replace(",1.0,0.99,", ",nan,0.99,", 1) + "\n",
                       "column median_ms: expected a time in ms > 0, got 'nan'"),
        "negative median": (header + "\n" + row.replace(",1.0,0.99,", ",-0.5,0.99,", 1) + "\n",
                            "column median_ms: expected a time in ms > 0, got '-0.5'"),
        "median outside its band": (header + "\n" + row.replace(",1.0,0.99,", ",2.0,0.99,", 1) + "\n",
                                    "median_ms 2 is outside [min_ms, max_ms] = [0.99, 1.01]"),
        "timed pass without a median": (header + "\n" + row.replace(",1.0,0.99,1.01,2.0,[],,,,", ",,,,,[],3,5,100,", 1)
                                        + "\n", "a timed PASS row (5 batches x 100 calls) without median_ms"),
        "inf spread": (header + "\n" + row.replace(",1.01,2.0,", ",1.01,inf,", 1) + "\n",
                       "column spread_pct: expected a finite number, got 'inf'"),
        "negative bytes": (header + "\n" + row.replace(",12000,", ",-12000,", 1) + "\n",
                           "column bytes: expected an integer >= 0, got '-12000'"),
        "cut-down columns": ("workload,variant,shape,check,median_ms\nvecadd,scalar,1000,PASS,1.0\n",
                             "the header lacks columns dims, max_abs_err, max_rel_err, check_detail and 38 more"),
    }
    out = {}
    for name, (content, words) in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.csv"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        out[name] = (path, words)
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    out["a folder"] = (folder, "is a folder")
    js = tmp_path / "bad.json"
    js.write_text('{"results": [{"workload": "x"')
    out["truncated json"] = (js, "not valid JSON")
    js2 = tmp_path / "list.json"
    js2.write_text("[1, 2]")
    out["json of another shape"] = (js2, 'expected an object with a "results" list')
    js3 = tmp_path / "missing.json"
    js3.write_text(json.dumps({"results": [{"workload": "vecadd", "variant": "scalar", "shape": "1"}]}))
    out["json row without check"] = (js3, "column check is empty")
    return out


def test_every_broken_file_is_one_usage_error(tmp_path):
    for name, (path, words) in broken_files(tmp_path).items():
        with pytest.raises(UsageError) as info:
            load(path)
        message = str(info.value)
        assert words in message, (name, message)
        assert "\n" not in message and str(path) in message, name


@pytest.mark.parametrize("command", ["report", "report-readme", "compare", "compare-gate", "plot"])
def test_commands_refuse_broken_files_and_keep_everything(tmp_path, run_cli, command):
    good = good_csv(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results:begin -->\nmeasured numbers\n<!-- results:end -->\n")
    for name, (path, words) in broken_files(tmp_path).items():
        args = {"report": ["report", str(path)],
                "report-readme": ["report", str(path), "--readme", str(readme)],
                "compare": ["compare", str(good), str(path)],
                "compare-gate": ["compare", str(good), str(path), "--fail-on-slower", "1"],
                "plot": ["plot", str(path), "--outdir", str(tmp_path / "plots")]}[command]
        code, _, err = run_cli(*args)
        assert code == 2, (name, err)
        assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (name, err)
    assert "measured numbers" in readme.read_text()  # README keeps its section
    assert not (tmp_path / "plots").exists() or not list((tmp_path / "plots").iterdir())


def test_version_1_files_still_read(tmp_path):
    """Files of pmppbench 0.1.0 had no format_version column."""
    path = good_csv(tmp_path)
    lines = path.read_text().splitlines()
    v1 = [",".join(line.split(",")[1:]) for line in lines]
    path.write_text("\n".join(v1) + "\n")
    rows, _ = load(path)
    assert rows[0].median_ms == 1.0 and rows[0].dims == {"n": 1000}


def test_round_trip_keeps_every_field(tmp_path):
    for ext in (".csv", ".json"):
        path = tmp_path / f"r{ext}"
        save(path, good_rows(), {"name": "Test GPU"})
        rows, meta = load(path)
        assert rows == good_rows() and meta["name"] == "Test GPU"


def test_save_is_atomic(tmp_path, monkeypatch):
    path = good_csv(tmp_path)
    before = path.read_text()
    import pmppbench.results.export.csv as csv_export

    def boom(rows):
        raise RuntimeError("disk full")

    monkeypatch.setattr(csv_export, "dumps", boom)
    with pytest.raises(RuntimeError):
        save(path, good_rows(), {})
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_check_writable(tmp_path):
    with pytest.raises(UsageError, match="is a folder"):
        check_writable(tmp_path, False)
    existing = good_csv(tmp_path)
    with pytest.raises(UsageError, match="--force"):
        check_writable(existing, False)
    assert check_writable(existing, True) == existing and existing.read_text()  # untouched
    fresh = tmp_path / "new.json"
    assert check_writable(fresh, False) == fresh and not fresh.exists()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the reader's peak memory from Linux's /proc")
def test_a_100_mb_result_file_reads_in_bounded_memory(tmp_path):
    """A result file is read a line at a time (resultfile._load_csv): 100 MB of distinct rows
    (the sample's, each copy its own run id) read in under 800 MB of peak memory, the whole
    interpreter with NumPy included, in a process of its own so the bound is the reader's."""
    import subprocess
    import sys

    data = Path(__file__).resolve().parent / "data"
    header, *body = (data / "sample.csv").read_text().splitlines()
    run_id = ",d162415c,"
    assert all(run_id in line for line in body)
    copies, size = 0, len(header) + 1
    with open(tmp_path / "big.csv", "w") as fh:
        fh.write(header + "\n")
        while size < 100_000_000:
            block = "".join(line.replace(run_id, f",{copies:08x},") + "\n" for line in body)
            fh.write(block)
            size += len(block)
            copies += 1
    (tmp_path / "big.csv.meta.json").write_text((data / "sample.csv.meta.json").read_text())
    # The child's own high-water mark (VmHWM, /proc: this process's memory since its exec). Not
    # getrusage's ru_maxrss, which Linux carries over from the parent at fork: a pytest process
    # grown past the bound would be counted as the reader's.
    script = ("import re, sys; from pmppbench.results.resultfile import load; rows, meta = load(sys.argv[1]); "
              "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1); "
              "print(len(rows), hwm, meta['name'], sep='|')")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "big.csv")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    rows, peak_kib, name = done.stdout.strip().split("|")
    assert (int(rows), name) == (copies * len(body), "NVIDIA H200")
    assert int(peak_kib) * 1024 < 800e6, f"peak {int(peak_kib) / 1024:.0f} MiB reading {size / 1e6:.0f} MB"
