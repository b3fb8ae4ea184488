"""Set the look-back's LB_AHEAD and thread_private's PRIVATE_FMA / PRIVATE_AHEAD defaults in the
kernel files from this call's studies (studies/patterns_speed_run.sh final), before the tests and
the benchmarks of the same call: the fastest candidate by its summed time over the studied shapes,
if it beats the committed default by more than 1% (else the default stays). Prints what it set;
the same change is then committed (the results' README names the commit).

    python3 studies/pick_defaults.py SCAN_STUDY.json HISTOGRAM_STUDY.json
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def totals(rows, prefix: str, pattern: str, shape_filter=lambda s: True):
    """Summed ms per knob tuple (parsed from the candidate labels), over the shapes every one passed."""
    per = defaultdict(dict)
    for r in rows:
        if r.get("check") != "PASS" or not r["cand"].startswith(prefix) or not shape_filter(r["shape"]):
            continue
        m = re.search(pattern, r["cand"])
        if m:
            per[tuple(int(g) for g in m.groups())][r["shape"]] = r["ms"]
    shapes = set.intersection(*(set(v) for v in per.values())) if per else set()
    return {k: sum(v[s] for s in shapes) for k, v in per.items()}, sorted(shapes)


def choose(sums: dict, default: tuple):
    best = min(sums, key=sums.get)
    if default in sums and sums[best] < 0.99 * sums[default]:
        return best
    return default


def set_define(path: Path, name: str, value: int) -> None:
    text = path.read_text()
    new, count = re.subn(rf"^#define {name} \d+", f"#define {name} {value}", text, count=1, flags=re.M)
    assert count == 1, name
    path.write_text(new)


def main(argv) -> int:
    scan_rows = json.loads(Path(argv[0]).read_text())
    sums, shapes = totals(scan_rows, "lookback rows=11", r"rows=(11) .*ahead=(\d+)")
    ahead = choose(sums, (11, 0))[1]
    print(f"scan: summed ms over {len(shapes)} shapes {dict(sorted(sums.items()))} -> LB_AHEAD {ahead}")
    set_define(ROOT / "kernels_cu" / "scan.cu", "LB_AHEAD", ahead)
    hist_rows = json.loads(Path(argv[1]).read_text())
    sums, shapes = totals(hist_rows, "thread_private fma=", r"fma=(\d+) ahead=(\d+)", lambda s: "bins=7" in s)
    fma, ahead = choose(sums, (0, 0))
    print(f"histogram: summed ms over {len(shapes)} shapes {dict(sorted(sums.items()))} -> PRIVATE_FMA {fma}, "
          f"PRIVATE_AHEAD {ahead}")
    set_define(ROOT / "kernels_cu" / "histogram.cu", "PRIVATE_FMA", fma)
    set_define(ROOT / "kernels_cu" / "histogram.cu", "PRIVATE_AHEAD", ahead)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
