"""Every bad input, as a table: the command, the exact first line it prints on
stderr, its exit code, and every file left as it was (bytes, mode and links, compared before
and after). None of these needs a GPU: each is refused before one is looked for.

The {names} in a case are files that `workspace` makes in a temporary folder:
  good    a real result file (tests/data/sample.csv, an H200 run, with its .meta.json)
  slow    the same rows three times slower
  readme  a README with the results markers
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parent.parent
LONG = "x" * 300  # one part of a path: more than the 255 bytes a name may have
GATE = "--fail-on-slower takes a percentage > 0 such as 5 (exit 1 when a row is slower by more), got"
ROWS = 22  # rows of tests/data/sample.csv


def _json_variant(good_json: Path, target: Path, old: str, new: str) -> None:
    text = good_json.read_text()
    assert old in text, old
    target.write_text(text.replace(old, new, 1))


@pytest.fixture
def workspace(tmp_path):
    from pmppbench.results.export.files import save
    from pmppbench.results.resultfile import load

    shutil.copy(DATA / "sample.csv", tmp_path / "good.csv")
    shutil.copy(DATA / "sample.csv.meta.json", tmp_path / "good.csv.meta.json")
    rows, meta = load(tmp_path / "good.csv")
    first = rows[0].median_ms
    save(tmp_path / "good.json", rows, meta)
    save(tmp_path / "few.json", rows[:5], meta)  # a "new" run that lost 3 rows of transpose 4096x4096 (and skipped gemm)
    for r in rows:
        r.median_ms, r.min_ms, r.max_ms = 3 * r.median_ms, 3 * r.min_ms, 3 * r.max_ms
        r.batch_means_ms = [3 * t for t in r.batch_means_ms]
    save(tmp_path / "slow.json", rows, meta)
    good = tmp_path / "good.json"
    for name, value in (("nan", "NaN"), ("inf", "Infinity"), ("neg", "-0.5")):
        _json_variant(good, tmp_path / f"median_{name}.json", f'"median_ms": {first!r}', f'"median_ms": {value}')
    _json_variant(good, tmp_path / "version.json", '"format_version": 2', '"format_version": 1e999')
    _json_variant(good, tmp_path / "registers.json", '"registers": 12', '"registers": 1e400')
    _json_variant(good, tmp_path / "workload.json", '"workload": "vecadd"', '"workload": "nosuch"')
    _json_variant(good, tmp_path / "dims.json", '"dims": {\n        "n": 67108864\n      }', '"dims": {"n": "big"}')
    csv_lines = (tmp_path / "good.csv").read_text().splitlines()
    header = csv_lines[0].split(",")
    (tmp_path / "registers.csv").write_text("\n".join([csv_lines[0], csv_lines[1].replace(",12,0,0,0,0,256,",
                                                                                        ",1e400,0,0,0,0,256,", 1)]))
    (tmp_path / "median_nan.csv").write_text("\n".join([csv_lines[0], csv_lines[1].replace(
        f",{first!r},", ",nan,", 1)]))
    cut = header.index("median_ms")  # a CSV without the median_ms column
    (tmp_path / "untimed.csv").write_text("\n".join(",".join(c for i, c in enumerate(line.split(",")) if i != cut)
                                                    for line in csv_lines[:2]) + "\n")
    (tmp_path / "four.csv").write_text("workload,variant,shape,check\nvecadd,scalar,1024,PASS\n")
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (tmp_path / "deep.csv").write_text((tmp_path / "good.csv").read_text())
    (tmp_path / "deep.csv.meta.json").write_text("[" * 100000 + "]" * 100000)
    other = json.loads(good.read_text())
    for r in other["results"]:
        r["device"] = "Other GPU"
    (tmp_path / "other.json").write_text(json.dumps(other))
    (tmp_path / "README.md").write_text("intro\n<!-- results:begin -->\nold numbers\n<!-- results:end -->\n")
    (tmp_path / "README.md").chmod(0o755)
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9\n<!-- results:begin -->\n<!-- results:end -->\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "dangling.csv").symlink_to(tmp_path / "nowhere.csv")
    (tmp_path / "exists.csv").write_text("keep me\n")
    (tmp_path / "streams.toml").write_text('[stream]\nshapes = [[4096, 4]]\nvariants = ["streams=7"]\n')
    (tmp_path / "twice.toml").write_text('[vecadd]\nshapes = [[1024]]\nvariants = ["scalar", "scalar"]\n')
    (tmp_path / "deep.toml").write_text("x = " + "[" * 500 + "]" * 500 + "\n")
    for name in ("fifo.csv", "fifo.html", "fifo.md", "fifo.toml", "fifo.cu"):
        os.mkfifo(tmp_path / name)  # opening one to write would wait for a reader forever
    (tmp_path / "pngs").mkdir()
    os.mkfifo(tmp_path / "pngs" / "roofline.png")
    (tmp_path / "link.html").symlink_to("good.csv")
    (tmp_path / "config-link.md").symlink_to("streams.toml")
    cells = csv_lines[0].split(",")
    cells[cells.index("max_ms")] = "median_ms"  # the column named twice: the last would win
    (tmp_path / "header_twice.csv").write_text("\n".join([",".join(cells), *csv_lines[1:]]) + "\n")
    return tmp_path


def snapshot(folder: Path) -> dict:
    """Every entry under `folder`: a link's target, a file's bytes and mode."""
    out = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            out[path] = ("link", os.readlink(path))
        elif path.is_file():
            out[path] = ("file", path.read_bytes(), st.st_mode)
        else:
            out[path] = ("dir", st.st_mode)
    return out


# (case, arguments, exact first line of stderr, exit code)
CASES = [
    # 1, 7: the gate's threshold, parsed by pmppbench (typer's and pydantic's wording differ by version)
    ("1 nan threshold", "compare {good} {slow} --fail-on-slower nan", f"pmppbench: {GATE} 'nan'", 2),
    ("1 inf threshold", "compare {good} {slow} --fail-on-slower inf", f"pmppbench: {GATE} 'inf'", 2),
    ("1 zero threshold", "compare {good} {slow} --fail-on-slower 0", f"pmppbench: {GATE} '0'", 2),
    ("1 negative threshold", "compare {good} {slow} --fail-on-slower -5", f"pmppbench: {GATE} '-5'", 2),
    ("7 word threshold", "compare {good} {good} --fail-on-slower abc", f"pmppbench: {GATE} 'abc'", 2),
    # 2: times that cannot be
    ("2 nan median, report", "report {median_nan.json}",
     "pmppbench: {median_nan.json}: results[0], column median_ms: expected a time in ms > 0, got nan; "
     "restore the file or rerun", 2),
    ("2 inf median, compare", "compare {good} {median_inf.json} --fail-on-slower 5",
     "pmppbench: {median_inf.json}: results[0], column median_ms: expected a time in ms > 0, got inf; "
     "restore the file or rerun", 2),
    ("2 negative median, plot", "plot {median_neg.json} --outdir {folder}",
     "pmppbench: {median_neg.json}: results[0], column median_ms: expected a time in ms > 0, got -0.5; "
     "restore the file or rerun", 2),
    ("2 nan median, readme", "report {median_nan.csv} --readme {readme}",
     "pmppbench: {median_nan.csv}: line 2, column median_ms: expected a time in ms > 0, got 'nan'; "
     "restore the file or rerun", 2),
    # 3: numbers beyond a float or an integer
    ("3 format_version 1e999", "report {version.json}",
     "pmppbench: {version.json}: format_version inf is not a whole number; restore the file", 2),
    ("3 registers 1e400 json", "compare {good} {registers.json}",
     "pmppbench: {registers.json}: results[0], column registers: expected an integer, got inf; "
     "restore the file or rerun", 2),
    ("3 registers 1e400 csv", "plot {registers.csv}",
     "pmppbench: {registers.csv}: line 2, column registers: expected an integer, got '1e400'; "
     "restore the file or rerun", 2),
    # 4: nesting beyond Python's parser
    ("4 deep json", "report {deep.json}",
     "pmppbench: {deep.json}: not a pmppbench result file (nested too deeply to be pmppbench's)", 2),
    ("4 deep meta.json", "report {deep.csv} --readme {readme}",
     "pmppbench: {deep.csv}.meta.json: nested too deeply to be pmppbench's; restore it or delete it "
     "(the rows do not need it)", 2),
    # 5: a name longer than the file system allows, for every path
    ("5 long --out", "vecadd --out {tmp}/LONG.csv",
     "pmppbench: --out {cut}: file name too long (each part of a path may have at most 255 bytes); "
     "choose a shorter name", 2),
    ("5 long report", "report {tmp}/LONG.csv",
     "pmppbench: RESULTS {cut}: file name too long (each part of a path may have at most 255 bytes); "
     "choose a shorter name", 2),
    ("5 long compare", "compare {good} {tmp}/LONG.csv",
     "pmppbench: NEW {cut}: file name too long (each part of a path may have at most 255 bytes); "
     "choose a shorter name", 2),
    ("5 long --readme", "report {good} --readme {tmp}/LONG.csv",
     "pmppbench: --readme {cut}: file name too long (each part of a path may have at most 255 bytes); "
     "choose a shorter name", 2),
    ("5 long --outdir", "plot {good} --outdir {tmp}/LONG.csv",
     "pmppbench: --outdir {cut}: file name too long (each part of a path may have at most 255 bytes); "
     "choose a shorter name", 2),
    ("5 long --config", "all --config {tmp}/LONG.csv",
     "pmppbench: --config {cut}: file name too long (each part of a path may have at most 255 bytes); "
     "choose a shorter name", 2),
    ("5 long --kernel", "vecadd --kernel {tmp}/LONG.csv:k --like scalar",
     "pmppbench: --kernel {cut}: file name too long (each part of a path may have at most 255 bytes); "
     "choose a shorter name", 2),
    # 6: a README in another encoding (the terminal's encoding and /dev/full: test_output_streams)
    ("6 latin-1 readme", "report {good} --readme {latin1.md}",
     "pmppbench: --readme {latin1.md}: not UTF-8 text (byte 3); save it as UTF-8 first", 2),
    # 8: a file cut down to a few columns would read as untimed rows, and pass the gate
    ("8 no median_ms column", "compare {good} {untimed.csv} --fail-on-slower 5",
     "pmppbench: {untimed.csv}: the header lacks column median_ms that every pmppbench result file has "
     "(a cut-down or foreign file); use the file as pmppbench wrote it", 2),
    ("8 only the four required", "report {four.csv}",
     "pmppbench: {four.csv}: the header lacks columns dims, max_abs_err, max_rel_err, check_detail and 39 more "
     "that every pmppbench result file has (a cut-down or foreign file); use the file as pmppbench wrote it", 2),
    # 9: a gate that judged nothing, or not every row of the base
    ("9 nothing matched", "compare {good} {other.json} --fail-on-slower 5",
     f"pmppbench: --fail-on-slower: nothing to judge, no row of {{other.json}} matched one of {{good}} ({ROWS} rows "
     "unmatched); compare runs of the same workloads, sizes and GPU", 2),
    ("9 rows missing from new", "compare {good} {few.json} --fail-on-slower 5",
     f"pmppbench: --fail-on-slower: 3 of {{good}}'s {ROWS} rows are not in {{few.json}}, though it ran their workload "
     "and shape, so the gate cannot vouch for them; rerun with the same variants as the base", 2),
    # 10: an arch too old for a PTX feature is no longer bad input: `compile --arch sm_75` builds
    # what sm_75 supports and names the variant that needs sm_80 (tests/test_portability_compile.py)
    # 11: an empty value is not "not given"
    ("11 empty --out", "vecadd --out ''",
     "pmppbench: --out was given an empty value; give a path, or leave --out out", 2),
    ("11 empty --devices", "vecadd --devices ''",
     "pmppbench: --devices was given an empty value; give all or indices such as 0,2, or leave it out", 2),
    ("11 empty --ray", "vecadd --ray ''",
     "pmppbench: --ray was given an empty value; give auto or a cluster's address such as ray://head:10001, "
     "or leave it out", 2),
    ("11 empty --outdir", "plot {good} --outdir ''",
     "pmppbench: --outdir was given an empty value; give a path, or leave --outdir out", 2),
    # 12: --devices is read before the GPU is looked for
    ("12 --devices garbage", "vecadd --devices garbage",
     "pmppbench: --devices takes all or comma-separated device indices such as 0,2, got 'garbage'", 2),
    ("12 --devices all,0", "vecadd --devices all,0",
     "pmppbench: --devices takes all or comma-separated device indices such as 0,2, got 'all,0'", 2),
    ("12 --devices -1", "vecadd --devices -1",
     "pmppbench: --devices takes all or comma-separated device indices such as 0,2, got '-1'", 2),
    # lower: sizes no GPU can hold, repeated variants, names, shapes and links
    ("sizes vecadd 2**63", "vecadd 9223372036854775808",
     "pmppbench: vecadd 9223372036854775808: needs 1.11e+20 B of device memory, more than any GPU can address "
     "(2^49 B); choose smaller sizes", 2),
    ("sizes stencil 2**63", "stencil 9223372036854775808",
     "pmppbench: stencil 9223372036854775808 radius=32: needs 7.38e+19 B of device memory, more than any GPU can "
     "address (2^49 B); choose smaller sizes", 2),
    ("sizes stream --chunks 2**40", "stream --chunks 1099511627776",
     "pmppbench: stream 1048576x64 chunks=1099511627776: needs 9.22e+18 B of device memory, more than any GPU can "
     "address (2^49 B); choose smaller sizes", 2),
    ("more streams than chunks", "stream --streams 100000",
     "pmppbench: stream: --streams 100000 is more streams than chunks (3), and a stream past the chunk count "
     "carries no chunk; choose at most 3 or more --chunks", 2),
    ("variants twice", "vecadd --variants scalar,scalar",
     "pmppbench: --variants scalar,scalar: scalar is named twice; name each variant once", 2),
    ("config variants twice", "all --config {twice.toml} --check-only",
     "pmppbench: {twice.toml}: [vecadd] variants: scalar is named twice; name each variant once", 2),
    ("config takes streams=7 as --variants does", "all --config {streams.toml} --out {exists.csv}",
     "pmppbench: --out {exists.csv} exists; pass --force to overwrite it or choose another --out", 2),
    ("unknown workload in a file", "report {workload.json}",
     "pmppbench: {workload.json}: results[0], column workload: unknown workload 'nosuch' (this pmppbench has "
     "WORKLOADS); upgrade pmppbench to read it", 2),
    ("ill-typed dims", "report {dims.json}",
     "pmppbench: {dims.json}: results[0], column dims: expected sizes (an object of whole numbers >= 0, or lists "
     "of them), got {{'n': 'big'}}; restore the file or rerun", 2),
    ("a folder is a folder", "report {folder}",
     "pmppbench: {folder} is a folder, not a result file; give a .csv or .json written by pmppbench", 2),
    ("a folder as --readme", "report {good} --readme {folder}",
     "pmppbench: --readme {folder} is a folder; give the Markdown file to update", 2),
    ("a file as --outdir", "plot {good} --outdir {exists.csv}",
     "pmppbench: --outdir {exists.csv} is a file, not a folder; give a folder for the PNG files", 2),
    ("a folder as --config", "all --config {folder}",
     "pmppbench: --config {folder} is a folder; give a TOML file or the name of a bundled config", 2),
    ("a folder as --kernel", "vecadd --kernel {folder}:k --like scalar",
     "pmppbench: --kernel {folder}:k: {folder} is a folder; give the .cu file that defines k", 2),
    ("dangling --out", "vecadd --out {dangling.csv}",
     "pmppbench: --out {dangling.csv} is a symbolic link to {tmp}/nowhere.csv, which does not exist; "
     "remove the link or choose another --out", 2),
    ("a misspelt short option", "vecadd -x", "pmppbench: no such option -x (see --help)", 2),
    # the parser's own words (click's, or typer's copy of it): the same at both ends of the range pyproject allows
    ("parser: unknown option", "compare --qqqq", "pmppbench: No such option: --qqqq (see `pmppbench compare --help`)", 2),
    ("parser: missing argument", "report", "pmppbench: Missing argument 'RESULTS'. (see `pmppbench report --help`)", 2),
    ("parser: a flag with a value", "plot {good} --force=3", "pmppbench: Option '--force' does not take a value.", 2),
    # outputs: a regular file or a new name, --force or not, and never one of the command's inputs
    ("--html onto a FIFO", "report {good} --html {fifo.html} --force",
     "pmppbench: --html {fifo.html} is a FIFO (named pipe), not a regular file; pmppbench writes only files, "
     "--force or not: choose a file name", 2),
    ("compare --html onto a FIFO", "compare {good} {slow} --html {fifo.html} --force",
     "pmppbench: --html {fifo.html} is a FIFO (named pipe), not a regular file; pmppbench writes only files, "
     "--force or not: choose a file name", 2),
    ("--out onto a FIFO", "vecadd --out {fifo.csv} --force",
     "pmppbench: --out {fifo.csv} is a FIFO (named pipe), not a regular file; pmppbench writes only files, "
     "--force or not: choose a file name", 2),
    ("--html over its own input", "report {good} --html {good} --force",
     "pmppbench: --html {good} is the same file as RESULTS; writing it would replace its own input: "
     "choose another --html", 2),
    ("--html over its input through a link", "report {good} --html {link.html} --force",
     "pmppbench: --html {link.html} is the same file as RESULTS; writing it would replace its own input: "
     "choose another --html", 2),
    ("--html over the input's metadata", "report {good} --html {good.csv.meta.json} --force",
     "pmppbench: --html {good.csv.meta.json} is the same file as RESULTS's metadata file; writing it would replace "
     "its own input: choose another --html", 2),
    ("plot onto a FIFO", "plot {good} --outdir {pngs} --force",
     "pmppbench: {pngs}/roofline.png is a FIFO (named pipe), not a regular file; pmppbench writes only files: "
     "choose another --outdir", 2),
    ("compare --html over NEW", "compare {good} {slow} --html {slow} --force",
     "pmppbench: --html {slow} is the same file as NEW; writing it would replace its own input: "
     "choose another --html", 2),
    ("--html over --readme", "report {good} --readme {readme} --html {readme} --force",
     "pmppbench: --html {readme} is the same file as --readme; writing it would replace its own input: "
     "choose another --html", 2),
    ("--readme is the result file", "report {good} --readme {good}",
     "pmppbench: --readme {good} is the same file as RESULTS; give the README to update, not the result file", 2),
    ("--out over --config through a link", "all --config {streams.toml} --out {config-link.md} --force",
     "pmppbench: --out {config-link.md} is the same file as --config {streams.toml}; writing it would replace the "
     "run's own input: choose another --out", 2),
    # inputs: read bounded, and only regular files (a FIFO would wait for a writer forever)
    ("a FIFO as the result file", "report {fifo.csv}",
     "pmppbench: {fifo.csv} is a FIFO (named pipe), not a regular file; give the result file itself", 2),
    ("a FIFO as --readme", "report {good} --readme {fifo.md}",
     "pmppbench: --readme {fifo.md} is a FIFO (named pipe), not a regular file; give the README itself", 2),
    ("a FIFO as --config", "all --config {fifo.toml}",
     "pmppbench: --config {fifo.toml} is a FIFO (named pipe), not a regular file; give the config itself", 2),
    ("a FIFO as --kernel", "vecadd --kernel {fifo.cu}:k --like scalar",
     "pmppbench: --kernel {fifo.cu}:k: {fifo.cu} is a FIFO (named pipe), not a file; give the .cu file that "
     "defines k", 2),
    ("a config nested 500 deep", "all --config {deep.toml}",
     "pmppbench: {deep.toml}: nested too deeply to be a config (arrays or tables within each other hundreds of "
     "times); a config's shapes are lists of numbers", 2),
    ("a column named twice", "report {header_twice.csv}",
     "pmppbench: {header_twice.csv}: the header names column 'median_ms' twice (columns 11 and 13); a file "
     "pmppbench writes has each column once: restore the file or rerun", 2),
    # echoes: user input cut to a readable length, each option with its own reason
    ("a 5,000-digit seed", "vecadd --seed DIGITS5000",
     "pmppbench: --seed 9999999999999999...999999999999 (5,000 characters) is too large: it takes at most "
     "18,446,744,073,709,551,615", 2),
    ("a timeout past the clock", "vecadd --timeout 99999999999",
     "pmppbench: --timeout 99999999999 is too large: it takes at most 1,000,000", 2),
    ("--until-stable without its %", "vecadd --until-stable 0.5",
     "pmppbench: --until-stable takes its noise with a % sign: write --until-stable 0.5%, got '0.5'", 2),
    ("--until-stable of 5,000 letters", "vecadd --until-stable LETTERS5000%",
     "pmppbench: --until-stable takes the noise to reach as a percentage such as 0.5%, got "
     "'xxxxx...xxxxxxxxxx%' (5,001 characters)", 2),
    ("10,000 unknown variants", "vecadd --variants NAMES10000",
     "pmppbench: vecadd: unknown variant 'v0'; choose from scalar, float4, grid_stride", 2),
    ("one variant 10,000 times", "vecadd --variants SCALARS10000",
     "pmppbench: --variants: scalar is named twice; name each variant once", 2),
    ("a 5,000-letter threshold", "compare {good} {slow} --fail-on-slower LETTERS5000",
     f"pmppbench: {GATE} 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxx' (5,000 characters)", 2),
    ("200 characters of --devices", "vecadd --devices ONES100",
     "pmppbench: --devices takes all or comma-separated device indices such as 0,2, got "
     "'1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1...,1,1,1,1,1,' (200 characters)", 2),
    ("a 5,000-letter variant", "vecadd --variants LETTERS5000",
     "pmppbench: vecadd: unknown variant 'xxxxxxxxxxxxxxx...xxxxxxxxxxx' (5,000 characters); choose from "
     "scalar, float4, grid_stride", 2),
]


# Words too long to write in the table: a 5,000-digit seed, 10,000 variant names, a 5,000-letter name
HUGE = {"DIGITS5000": "9" * 5000, "NAMES10000": ",".join(f"v{i}" for i in range(10000)),
        "SCALARS10000": ",".join(["scalar"] * 10000), "LETTERS5000": "x" * 5000, "ONES100": "1," * 100}


def _fill(text: str, tmp: Path) -> str:
    """{name} -> the workspace's path of that name; LONG, HUGE's words, {cut} and WORKLOADS as
    above; {{ }} -> { }."""
    from pmppbench import workloads

    names = {p.name: str(p) for p in tmp.iterdir()}
    names |= {"good": str(tmp / "good.csv"), "slow": str(tmp / "slow.json"), "readme": str(tmp / "README.md"),
              "tmp": str(tmp), "cut": _cut(tmp)}
    for word, value in HUGE.items():
        text = text.replace(word, value)
    text = text.replace("LONG", LONG).replace("WORKLOADS", ", ".join(workloads.names()))
    text = re.sub(r"(?<!\{)\{([^{}]+)\}(?!\})", lambda m: names.get(m.group(1), m.group(0)), text)
    return text.replace("{{", "{").replace("}}", "}")


def _cut(tmp: Path) -> str:
    from pmppbench.paths import shown

    return shown(f"{tmp}/{LONG}.csv")


def _args(text: str, tmp: Path) -> list[str]:
    return [_fill(word, tmp) for word in shlex.split(text)]


@pytest.mark.parametrize("case, args, first_line, code", CASES, ids=[c[0] for c in CASES])
def test_bad_input(workspace, run_cli, case, args, first_line, code):
    before = snapshot(workspace)
    got, out, err = run_cli(*_args(args, workspace))
    assert got == code, err
    assert err.splitlines()[0] == _fill(first_line, workspace), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "\x00" not in out
    assert snapshot(workspace) == before  # nothing written, moved or re-moded


def test_under_debug_bad_input_is_still_exit_2(workspace, run_cli):
    code, _, err = run_cli("--debug", "compare", str(workspace / "good.csv"), str(workspace / "slow.json"),
                           "--fail-on-slower", "nan")
    assert code == 2 and err.startswith("Traceback (most recent call last):")
    assert err.rstrip().splitlines()[-1] == f"pmppbench: {GATE} 'nan'"


def test_h_is_the_help(run_cli):
    code, out, err = run_cli("vecadd", "-h")
    # typer 0.16 writes the sizes as "N REPS", 0.29 as "[N] [REPS]": both name the command and its help
    assert code == 0 and out.startswith("Usage: pmppbench vecadd [OPTIONS] ") and err == ""
    assert "-h, --help" in out and "Arguments (each optional; give the ones before it too):" in out


def test_readme_through_a_link_keeps_the_link_and_the_mode(workspace, run_cli):
    """13: the link's target gets the new section; the link stays a link; 755 stays 755."""
    real = workspace / "README.md"
    link = workspace / "link.md"
    link.symlink_to(real.name)
    code, out, err = run_cli("report", str(workspace / "good.csv"), "--readme", str(link))
    assert code == 0, err
    assert out.splitlines() == [f"updated {link}"]
    assert link.is_symlink() and os.readlink(link) == "README.md"
    assert "old numbers" not in real.read_text() and "#### vecadd" in real.read_text()
    assert oct(real.stat().st_mode & 0o777) == "0o755"


def _cli(*args: str, env: dict | None = None, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """pmppbench in a child process, with the installed workloads only (other tests register
    test workloads through PMPPBENCH_WORKLOADS, importable from tests/ alone)."""
    base = {k: v for k, v in os.environ.items() if k != "PMPPBENCH_WORKLOADS"}
    return subprocess.run([sys.executable, "-m", "pmppbench", *args], cwd=ROOT, stdout=stdout,
                          stderr=subprocess.PIPE, env={**base, **(env or {})}, timeout=120)


def test_output_streams(workspace):
    """6: a path the terminal's encoding cannot show is escaped, not fatal; a full stdout is one line, exit 3."""
    name = workspace / "résumé.md"
    shutil.copy(workspace / "README.md", name)
    done = _cli("report", str(workspace / "good.csv"), "--readme", str(name), env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("ascii") == f"updated {workspace}/r\\xe9sum\\xe9.md\n"
    missing = _cli("report", str(workspace / "nö.csv"), env={"PYTHONIOENCODING": "ascii"})
    assert missing.returncode == 2
    assert missing.stderr.decode("ascii") == f"pmppbench: {workspace}/n\\xf6.csv: no such result file; check the path\n"
    with open("/dev/full", "w") as full:
        done = _cli("report", str(workspace / "good.csv"), stdout=full)
    assert done.returncode == 3
    assert done.stderr.decode() == ("pmppbench: cannot write the output (No space left on device); free space or "
                                    "send it elsewhere\n")


def test_ray_auto_without_gpus_is_one_line_without_rays_log():
    """--ray auto on a machine without GPUs: pmppbench's line only, not Ray's INFO and WARNING lines first."""
    pytest.importorskip("ray", reason="needs pmppbench[fleet] (Ray); CI installs it")
    from pmppbench.hardware.gpu import has_device

    if has_device():
        pytest.skip("this test is about machines without a GPU")
    done = _cli("vecadd", "--ray", "auto")
    assert done.returncode == 3
    assert done.stderr.decode() == ("pmppbench: the Ray cluster at auto has no GPUs (ray.cluster_resources() shows "
                                    "none); start its nodes with `ray start ... --num-gpus N`\n")


# ---- device nodes: never read, never replaced -------------------------------------------------

@pytest.fixture
def devices(workspace):
    """Character devices made in the workspace: `full` (as /dev/full, 1:7) and `zero.csv`
    (as /dev/zero, 1:5); making one needs CAP_MKNOD (root, or a container that allows it)."""
    import stat

    try:
        os.mknod(workspace / "full", stat.S_IFCHR | 0o666, os.makedev(1, 7))
        os.mknod(workspace / "zero.csv", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD (the FIFO cases above run everywhere)")
    return workspace


DEVICE_CASES = [
    ("report --html", "report {good} --html {full} --force",
     "pmppbench: --html {full} is a character device, not a regular file; pmppbench writes only files, "
     "--force or not: choose a file name"),
    ("compare --html", "compare {good} {slow} --html {full} --force",
     "pmppbench: --html {full} is a character device, not a regular file; pmppbench writes only files, "
     "--force or not: choose a file name"),
    ("--readme", "report {good} --readme {zero.csv}",
     "pmppbench: --readme {zero.csv} is a character device, not a regular file; give the README itself"),
    ("--config", "all --config {zero.csv}",
     "pmppbench: --config {zero.csv} is a character device, not a regular file; give the config itself"),
    ("result file", "report {zero.csv}",
     "pmppbench: {zero.csv} is a character device, not a regular file; give the result file itself"),
]


@pytest.mark.parametrize("case, args, first_line", DEVICE_CASES, ids=[c[0] for c in DEVICE_CASES])
def test_a_device_is_neither_read_nor_replaced(devices, run_cli, case, args, first_line):
    import stat

    before = snapshot(devices)
    code, _, err = run_cli(*_args(args, devices))
    assert (code, err) == (2, _fill(first_line, devices) + "\n")
    assert snapshot(devices) == before
    assert stat.S_ISCHR((devices / "full").lstat().st_mode) and stat.S_ISCHR((devices / "zero.csv").lstat().st_mode)


def test_write_atomic_never_replaces_a_fifo(workspace):
    """The last guard, under every exporter: even a caller that skipped the checks cannot
    rename a file over a FIFO (or a device)."""
    from pmppbench.errors import UsageError
    from pmppbench.results.resultfile import write_atomic

    target = workspace / "fifo.html"
    with pytest.raises(UsageError, match="is a FIFO \\(named pipe\\), not a regular file"):
        write_atomic(target, "<html></html>")
    assert target.is_fifo() and not list(workspace.glob(".fifo.html.*"))


# ---- caps: every input read bounded ------------------------------------------------------------

def test_every_kind_of_input_has_its_cap(workspace, run_cli, monkeypatch):
    """A file past its kind's cap is one line naming the cap and how to raise it; below the
    cap (raised with the variable) it reads."""
    from pmppbench import paths

    assert paths.CAPS == {"result file": 256, "metadata file": 16, "README": 16, "config": 1, "kernel source": 16}
    (workspace / "big.md").write_text("x" * 17_000_000)
    (workspace / "big.cu").write_text("//" * 8_500_000)
    (workspace / "big.toml").write_text("#" * 1_100_000 + "\n" + (workspace / "streams.toml").read_text())
    before = snapshot(workspace)
    code, _, err = run_cli("report", str(workspace / "good.csv"), "--readme", str(workspace / "big.md"))
    assert (code, err) == (2, f"pmppbench: --readme {workspace}/big.md: 17 MB, more than the 16 MB a README may have; "
                              "if it really is one, set PMPPBENCH_READ_LIMIT_MB to its size in MB to read it\n")
    code, _, err = run_cli("all", "--config", str(workspace / "big.toml"))
    assert (code, err) == (2, f"pmppbench: --config {workspace}/big.toml: 1.1 MB, more than the 1 MB a config may "
                              "have; if it really is one, set PMPPBENCH_READ_LIMIT_MB to its size in MB to read it\n")
    code, _, err = run_cli("vecadd", "--kernel", f"{workspace}/big.cu:k", "--like", "scalar")
    assert (code, err) == (2, f"pmppbench: --kernel {workspace}/big.cu: 17 MB, more than the 16 MB a kernel source may "
                              "have; if it really is one, set PMPPBENCH_READ_LIMIT_MB to its size in MB to read it\n")
    monkeypatch.setenv("PMPPBENCH_READ_LIMIT_MB", "0.01")
    code, _, err = run_cli("report", str(workspace / "good.csv"))
    assert (code, err) == (2, f"pmppbench: {workspace}/good.csv: 0.0198 MB, more than the 0.01 MB a result file may "
                              "have; if it really is one, set PMPPBENCH_READ_LIMIT_MB to its size in MB to read it\n")
    monkeypatch.setenv("PMPPBENCH_READ_LIMIT_MB", "lots")
    code, _, err = run_cli("report", str(workspace / "good.csv"))
    assert (code, err) == (2, "pmppbench: PMPPBENCH_READ_LIMIT_MB='lots': expected a number of MB > 0 such as 1024\n")
    monkeypatch.setenv("PMPPBENCH_READ_LIMIT_MB", "20")
    code, out, err = run_cli("report", str(workspace / "good.csv"), "--readme", str(workspace / "big.md"))
    assert code == 2 and "needs the markers" in err  # read whole under the raised cap
    assert snapshot(workspace) == before


# ---- result files: what the reader says and does not stop for -----------------------------------

def test_a_missing_metadata_file_is_said_in_words(workspace, run_cli):
    shutil.copy(workspace / "good.csv", workspace / "nometa.csv")
    code, out, err = run_cli("report", str(workspace / "nometa.csv"))
    assert code == 0
    assert err == f"pmppbench: metadata file {workspace}/nometa.csv.meta.json missing: GPU and date unknown\n"
    assert out.splitlines()[0] == f"GPU and date unknown (the run's metadata is missing), from `{workspace}/nometa.csv`."
    assert "unknown GPU" not in out and " at ?" not in out


def test_repeated_rows_are_reported_and_read_once(workspace, run_cli):
    lines = (workspace / "good.csv").read_text().splitlines()
    (workspace / "twice.csv").write_text("\n".join([lines[0], *lines[1:], lines[2], lines[1], lines[2]]) + "\n")
    shutil.copy(workspace / "good.csv.meta.json", workspace / "twice.csv.meta.json")
    code, out, err = run_cli("report", str(workspace / "twice.csv"))
    assert code == 0
    assert err == (f"pmppbench: {workspace}/twice.csv: line {ROWS + 2} repeats line 3 exactly (and 2 more rows repeat "
                   "an earlier one); each row is read once\n")
    code, good, _ = run_cli("report", str(workspace / "good.csv"))
    assert out.replace("twice.csv", "good.csv") == good  # the same tables: each row once
    doc = json.loads((workspace / "good.json").read_text())
    doc["results"].append(doc["results"][0])
    (workspace / "twice.json").write_text(json.dumps(doc))
    code, _, err = run_cli("compare", str(workspace / "good.json"), str(workspace / "twice.json"))
    assert code == 0 and err == (f"pmppbench: {workspace}/twice.json: results[{ROWS}] repeats results[0] exactly; "
                                 "each row is read once\n")


def test_a_json_key_given_twice_is_named(workspace, run_cli):
    text = (workspace / "good.json").read_text()
    (workspace / "key_twice.json").write_text(text.replace('"check": "PASS",', '"check": "PASS", "check": "FAIL",', 1))
    code, _, err = run_cli("report", str(workspace / "key_twice.json"))
    assert (code, err) == (2, f"pmppbench: {workspace}/key_twice.json: an object names key 'check' twice; a file "
                              "pmppbench writes has each key once: restore the file or rerun\n")


# ---- Ctrl-C ----------------------------------------------------------------------------------

def test_ctrl_c_stops_compile_within_a_second(tmp_path):
    """NVRTC holds the process for seconds per unit and swallows SIGINT: `compile` runs it in
    child processes, so a Ctrl-C stops everything at once, with one line and exit 130."""
    import signal
    import time

    pytest.importorskip("cupy", reason="compile needs NVRTC (pmppbench[cuda13]; CI installs it)")
    env = {k: v for k, v in os.environ.items() if k != "PMPPBENCH_WORKLOADS"}
    env["PMPPBENCH_CACHE_DIR"] = str(tmp_path / "cache")  # cold: NVRTC really runs
    child = subprocess.Popen([sys.executable, "-m", "pmppbench", "compile", "--arch", "sm_90", "--no-cache", "gemm"],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = child.stdout.readline()  # "NVRTC 13.x, sm_90": the compiles are under way
    assert first.startswith(b"NVRTC "), first
    time.sleep(1.0)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    said = child.stderr.readline()  # the moment the user reads that it stopped (the interpreter's exit follows)
    took = time.monotonic() - sent
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130 and said + err == b"pmppbench: interrupted\n", said + err
    assert took < 1.0, f"{took:.2f} s from Ctrl-C to its line"
    assert b"OK" not in out  # stopped before the gemm unit finished
