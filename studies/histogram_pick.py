"""Pick the 7-bin thread_private build that studies/histogram_private.py timed best against CUB, and
make its knobs kernels_cu/histogram.cu's defaults (session 10's device call, results/h200/patterns10/).

    python3 studies/histogram_pick.py STUDY.json [kernels_cu/histogram.cu]

The measure is a candidate's worst ratio to CUB (x_vs_cub, higher is faster) over every 7-bin shape of
the study (both inputs, every size), so a build that wins at one size and loses at the other does not
pass for the best. Only the candidates of KNOBS[7] take part; every knob they name is written into its
`#define` default in the file (the 7-bin PRIVATE_VECS line is the first of its two).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def study_module():
    spec = importlib.util.spec_from_file_location("histogram_private", ROOT / "studies" / "histogram_private.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def worst_ratios(rows, study) -> dict[str, float]:
    """label -> the lowest x_vs_cub over the 7-bin shapes; a candidate that FAILed or missed a shape has none."""
    labels = [study.label(k) for k in study.KNOBS[7]]
    shapes = {r["shape"] for r in rows if "bins=7" in r["shape"]}
    out = {}
    for lab in labels:
        mine = [r for r in rows if r["cand"] == lab and "bins=7" in r["shape"]]
        if len(mine) == len(shapes) and all(r["check"] == "PASS" and r.get("x_vs_cub") for r in mine):
            out[lab] = min(r["x_vs_cub"] for r in mine)
    return out


def set_default(source: str, name: str, value: int) -> str:
    pattern = re.compile(rf"^(#define {name}) \d+", re.M)
    if not pattern.search(source):
        raise SystemExit(f"histogram_pick: no '#define {name}' default in the kernel file")
    return pattern.sub(lambda m: f"{m.group(1)} {value}", source, count=1)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    rows = json.loads(Path(argv[0]).read_text())
    kernel = Path(argv[1]) if len(argv) > 1 else ROOT / "kernels_cu" / "histogram.cu"
    study = study_module()
    worst = worst_ratios(rows, study)
    if not worst:
        print("histogram_pick: no 7-bin candidate passed on every shape", file=sys.stderr)
        return 1
    for lab, x in sorted(worst.items(), key=lambda kv: -kv[1]):
        print(f"{x:.3f}  {lab}")
    best = max(worst, key=worst.get)
    knobs = next(k for k in study.KNOBS[7] if study.label(k) == best)
    source = kernel.read_text()
    for name, value in knobs.items():
        source = set_default(source, name, value)
    kernel.write_text(source)
    print(f"picked: {best} (worst x_vs_cub {worst[best]:.3f}); defaults written to {kernel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
