"""compare: verdicts that respect noise, rows in one file only, --fail-on-slower exit codes,
on synthetic rows and on result files written by export.files.save."""

from __future__ import annotations

import pytest
from rich.console import Console

from pmppbench.results.compare import (FAIL, FASTER, SAME, SLOWER, UNTIMED, compare_files, compare_results, noise_band,
                               print_comparison, threshold, verdict)
from pmppbench.errors import UsageError
from pmppbench.results.export.files import save as write_results
from pmppbench.row import Result


def timed(variant, median, lo, hi, shape="4096x4096", workload="transpose", device="Test GPU", **kw):
    return Result(workload, variant, shape, check="PASS", median_ms=median, min_ms=lo, max_ms=hi,
                  spread_pct=100 * (hi - lo) / median, device=device, **kw)


def test_slower_only_when_every_new_batch_is_slower_than_every_base_batch():
    base = timed("naive", 1.00, 0.98, 1.02)
    assert verdict(base, timed("naive", 1.10, 1.05, 1.12)) == SLOWER
    assert verdict(base, timed("naive", 0.90, 0.88, 0.95)) == FASTER


def test_overlapping_noise_bands_are_the_same_even_with_different_medians():
    base = timed("naive", 1.00, 0.90, 1.10)
    assert verdict(base, timed("naive", 1.08, 1.05, 1.20)) == SAME  # +8% median, but within the noise
    assert verdict(base, timed("naive", 1.15, 1.10, 1.20)) == SAME  # touching bands: not separated


def test_older_rows_without_min_max_use_the_spread():
    base = Result("gemm", "naive", "1024", check="PASS", median_ms=1.0, spread_pct=10.0)  # band 0.95..1.05
    assert noise_band(base) == pytest.approx((0.95, 1.05))
    assert verdict(base, Result("gemm", "naive", "1024", check="PASS", median_ms=1.04, spread_pct=2.0)) == SAME
    assert verdict(base, Result("gemm", "naive", "1024", check="PASS", median_ms=1.10, spread_pct=2.0)) == SLOWER
    bare = Result("gemm", "naive", "1024", check="PASS", median_ms=1.0)
    assert noise_band(bare) == (1.0, 1.0)  # no noise recorded: any difference counts


def test_failed_and_untimed_rows_get_their_own_verdicts():
    base = timed("naive", 1.0, 0.99, 1.01)
    broken = Result("transpose", "naive", "4096x4096", check="FAIL", check_detail="wrong", device="Test GPU")
    assert verdict(base, broken) == FAIL
    check_only = Result("transpose", "naive", "4096x4096", check="PASS", device="Test GPU")
    assert verdict(base, check_only) == UNTIMED
    assert verdict(check_only, base) == UNTIMED


def test_ratio_and_change():
    report = compare_results([timed("naive", 2.0, 1.9, 2.1)], [timed("naive", 2.5, 2.4, 2.6)])
    (c,) = report.matched
    assert c.ratio == pytest.approx(1.25) and c.change_pct == pytest.approx(25.0) and c.verdict == SLOWER


def test_rows_in_one_file_only_are_listed_apart():
    base = [timed("naive", 1.0, 0.99, 1.01), timed("shared32", 0.8, 0.79, 0.81)]
    new = [timed("naive", 1.0, 0.99, 1.01), timed("padded33", 0.6, 0.59, 0.61),
           timed("naive", 4.0, 3.9, 4.1, shape="8192x8192")]
    report = compare_results(base, new)
    assert [c.new.variant for c in report.matched] == ["naive"]
    assert [r.variant for r in report.only_base] == ["shared32"]
    assert [(r.variant, r.shape) for r in report.only_new] == [("padded33", "4096x4096"), ("naive", "8192x8192")]
    assert report.summary() == "0 faster, 0 slower, 1 same (within noise); 1 row only in BASE, 2 rows only in NEW"


def test_the_device_is_part_of_the_key():
    report = compare_results([timed("naive", 1.0, 0.99, 1.01, device="H100")],
                             [timed("naive", 1.0, 0.99, 1.01, device="H200")])
    assert not report.matched and len(report.only_base) == len(report.only_new) == 1
    assert report.notes == ["no rows matched: BASE ran on H100, NEW on H200 (the device is part of the key)"]


def test_one_gpu_per_file_matches_by_name_several_of_one_name_by_uuid():
    old = [timed("naive", 1.0, 0.99, 1.01, device="H200")]  # a file from before UUIDs were recorded
    new = [timed("naive", 1.0, 0.99, 1.01, device="H200", device_uuid="GPU-a")]
    assert len(compare_results(old, new).matched) == 1
    node = [timed("naive", 1.0, 0.99, 1.01, device="H200", device_uuid=u) for u in ("GPU-a", "GPU-b")]
    report = compare_results(node, list(reversed(node)))
    assert [(c.base.device_uuid, c.new.device_uuid) for c in report.matched] == [("GPU-b", "GPU-b"), ("GPU-a", "GPU-a")]


@pytest.mark.parametrize("threshold, code", [(None, 0), (0.1, 1), (10, 1), (19.9, 1), (20, 0), (50, 0)])
def test_fail_on_slower_exits_1_beyond_the_threshold(threshold, code):
    base = [timed("naive", 1.0, 0.99, 1.01), timed("padded33", 0.5, 0.49, 0.51)]
    new = [timed("naive", 1.2, 1.19, 1.21), timed("padded33", 0.4, 0.39, 0.41)]  # +20% and -20%
    report = compare_results(base, new, fail_on_slower_pct=threshold)
    assert [c.verdict for c in report.matched] == [SLOWER, FASTER]
    assert report.exit_code == code
    assert [c.new.variant for c in report.regressions] == (["naive"] if code else [])


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "0", "-5", "abc", "", "1e999"])
def test_a_threshold_that_is_not_a_positive_finite_number_is_refused(text):
    with pytest.raises(UsageError) as info:
        threshold(text)
    assert str(info.value) == ("--fail-on-slower takes a percentage > 0 such as 5 (exit 1 when a row is slower "
                               f"by more), got {text!r}")


def test_the_gate_judges_only_what_it_compared():
    base = [timed("naive", 1.0, 0.99, 1.01), timed("padded33", 0.5, 0.49, 0.51)]
    nothing = compare_results(base, [timed("copy", 1.0, 0.99, 1.01)], fail_on_slower_pct=5)
    assert nothing.exit_code == 2 and nothing.gate_problem == (
        "--fail-on-slower: nothing to judge, no row of NEW matched one of BASE (2 rows unmatched); compare runs of "
        "the same workloads, sizes and GPU")
    untimed = [Result("transpose", v, "4096x4096", check="PASS", device="Test GPU") for v in ("naive", "padded33")]
    report = compare_results(base, untimed, fail_on_slower_pct=5)
    assert report.exit_code == 2 and report.gate_problem == (
        "--fail-on-slower: nothing to judge, all 2 rows that matched are untimed; compare timed runs (not --check-only)")
    missing = compare_results(base, base[:1], fail_on_slower_pct=5)
    assert missing.exit_code == 2 and missing.gate_problem == (
        "--fail-on-slower: 1 of BASE's 2 rows are not in NEW, though it ran their workload and shape, so the gate "
        "cannot vouch for them; rerun with the same variants as the base")
    slower = compare_results(base, [timed("naive", 2.0, 1.99, 2.01)], fail_on_slower_pct=5)
    assert slower.exit_code == 1  # a regression it found is still exit 1
    assert compare_results(base, base + [timed("copy", 1.0, 0.99, 1.01)], fail_on_slower_pct=5).exit_code == 0
    assert compare_results(base, [timed("copy", 1.0, 0.99, 1.01)]).exit_code == 0  # no gate, no verdict


def test_a_noisy_slowdown_is_not_a_regression():
    report = compare_results([timed("naive", 1.0, 0.7, 1.4)], [timed("naive", 1.3, 1.2, 1.5)], fail_on_slower_pct=5)
    assert report.matched[0].verdict == SAME and report.exit_code == 0


def test_a_kernel_that_stopped_passing_fails_the_ci_gate():
    broken = Result("transpose", "naive", "4096x4096", check="FAIL", device="Test GPU")
    report = compare_results([timed("naive", 1.0, 0.99, 1.01)], [broken], fail_on_slower_pct=50)
    assert report.exit_code == 1
    assert compare_results([timed("naive", 1.0, 0.99, 1.01)], [broken]).exit_code == 0  # no gate asked for


def test_bad_input_is_a_usage_error():
    with pytest.raises(UsageError, match="--fail-on-slower"):
        compare_results([], [], fail_on_slower_pct=-5)
    twice = [timed("naive", 1.0, 0.99, 1.01), timed("naive", 1.1, 1.0, 1.2)]
    with pytest.raises(UsageError, match="two rows for transpose naive 4096x4096 on Test GPU"):
        compare_results(twice, [], base_name="base.csv")


@pytest.mark.parametrize("base_ext, new_ext", [(".csv", ".csv"), (".json", ".json"), (".csv", ".json")])
def test_compare_result_files(tmp_path, base_ext, new_ext):
    base_path, new_path = tmp_path / f"base{base_ext}", tmp_path / f"new{new_ext}"
    write_results(base_path, [timed("naive", 1.0, 0.98, 1.02), timed("padded33", 0.5, 0.49, 0.51),
                              timed("shared32", 0.7, 0.69, 0.71)], {"name": "Test GPU"})
    write_results(new_path, [timed("naive", 1.3, 1.25, 1.35), timed("padded33", 0.51, 0.50, 0.52),
                             timed("coarsened", 0.45, 0.44, 0.46)], {"name": "Test GPU"})
    report = compare_files(base_path, new_path, fail_on_slower_pct=25)
    assert {c.new.variant: c.verdict for c in report.matched} == {"naive": SLOWER, "padded33": SAME}
    assert [r.variant for r in report.only_base] == ["shared32"]
    assert [r.variant for r in report.only_new] == ["coarsened"]
    assert report.exit_code == 1  # naive is 30% slower
    beyond = compare_files(base_path, new_path, fail_on_slower_pct=35)  # no regression, but shared32 is missing
    assert beyond.exit_code == 2 and beyond.gate_problem.startswith(f"--fail-on-slower: 1 of {base_path}'s 3 rows")


def test_a_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such result file"):
        compare_files(tmp_path / "nope.csv", tmp_path / "nope.json")


def test_the_printed_comparison(tmp_path):
    base = [timed("naive", 1.0, 0.98, 1.02), timed("padded33", 0.5, 0.49, 0.51), timed("shared32", 0.7, 0.69, 0.71)]
    new = [timed("naive", 1.3, 1.25, 1.35), timed("padded33", 0.4, 0.39, 0.41)]
    report = compare_results(base, new, fail_on_slower_pct=10, base_name="main.csv", new_name="branch.csv")
    console = Console(record=True, width=200)
    print_comparison(console, report)
    text = console.export_text()
    assert "main.csv (base) -> branch.csv (new)" in text
    assert "SLOWER" in text and "FASTER" in text and "+30.0" in text and "1.300" in text
    assert "only in main.csv (1 row):\n  transpose shared32 4096x4096 (Test GPU)" in text
    assert ("1 faster, 1 slower, 0 same (within noise); 1 row only in main.csv; "
            "1 regression beyond 10%") in text


# ---- the ratio's interval: a bootstrap over batch means ------------------------------------

from pmppbench.results.compare import ratio_interval  # noqa: E402


def batches(variant, means, shape="4096x4096", workload="transpose"):
    import statistics

    m = statistics.median(means)
    return timed(variant, m, min(means), max(means), shape=shape, workload=workload, batch_means_ms=list(means))


BASE = [1.00, 0.99, 1.01, 1.00, 1.02]


def test_the_interval_decides_where_the_ranges_only_touch():
    base, new = batches("naive", BASE), batches("naive", [1.04, 1.02, 1.05, 1.04, 1.06])
    assert verdict(base, new) == SAME  # the ranges [0.99, 1.02] and [1.02, 1.06] touch
    assert ratio_interval(base, new) == pytest.approx((1.0196078, 1.06))
    (c,) = compare_results([base], [new]).matched
    assert c.verdict == SLOWER and c.interval == ratio_interval(base, new) and c.ratio == pytest.approx(1.04)


def test_an_interval_within_1_percent_of_1_is_the_same():
    """Batch means measure the noise within a run; a run-to-run change under SAME_WITHIN (1%)
    is SAME even when the interval excludes 1 (two H200 runs of unchanged kernels: module doc)."""
    from pmppbench.results.compare import SAME_WITHIN

    base, new = batches("naive", BASE), batches("naive", [1.03, 1.02, 1.04, 1.03, 1.05])
    lo, hi = ratio_interval(base, new)
    assert 1 < lo < 1 + SAME_WITHIN and SAME_WITHIN == 0.01
    assert verdict(base, new, (lo, hi)) == SAME
    assert verdict(base, new, (1 + SAME_WITHIN + 1e-9, hi)) == SLOWER
    assert verdict(base, new, (0.9, 1 - SAME_WITHIN - 1e-9)) == FASTER


def test_an_interval_that_holds_1_is_the_same():
    base, new = batches("naive", BASE), batches("naive", [1.01, 0.98, 1.03, 1.00, 1.04])
    (c,) = compare_results([base], [new]).matched
    assert c.interval == pytest.approx((0.98, 1.04)) and c.verdict == SAME


def test_the_interval_is_the_same_every_time_and_needs_5_batch_means():
    base, new = batches("naive", BASE), batches("naive", [1.03, 1.02, 1.04, 1.03, 1.05])
    assert ratio_interval(base, new) == ratio_interval(base, new)
    short = batches("naive", [1.03, 1.02, 1.04, 1.03])
    assert ratio_interval(base, short) is None
    assert compare_results([base], [short]).matched[0].verdict == SAME  # by the ranges: they overlap


@pytest.mark.parametrize("pct, code", [(0.5, 1), (17.5, 1), (17.7, 0), (20, 0)])
def test_the_gate_fails_only_when_slower_by_more_than_pct_at_the_same_confidence(pct, code):
    # new/base 1.20, interval 1.176-1.220: slower by more than 17.6% at 95%, not by more than 17.7%.
    base, new = batches("naive", BASE), batches("naive", [1.20, 1.21, 1.19, 1.22, 1.20])
    report = compare_results([base], [new], fail_on_slower_pct=pct)
    assert report.matched[0].interval == pytest.approx((1.1764706, 1.22))
    assert report.exit_code == code


def test_a_subset_run_is_judged_on_the_rows_it_shares():
    base = [batches(v, BASE, shape=s) for s in ("4096x4096", "8192x8192") for v in ("naive", "padded33")]
    new = [batches(v, [m * 1.2 for m in BASE], shape="4096x4096") for v in ("naive", "padded33")]
    report = compare_results(base, new, fail_on_slower_pct=5)
    assert [c.verdict for c in report.matched] == [SLOWER, SLOWER] and report.lost == []
    assert report.gate_problem == "" and report.exit_code == 1
    assert report.summary() == ("0 faster, 2 slower, 0 same (within noise); 2 rows only in BASE; "
                                "2 regressions beyond 5%")
    same = compare_results(base, [batches("naive", BASE)], fail_on_slower_pct=5)  # lost padded33 of a step it ran
    assert [r.variant for r in same.lost] == ["padded33"] and same.exit_code == 2


def test_the_printed_comparison_exactly(tmp_path):
    base = [batches("naive", BASE), batches("padded33", [0.5, 0.49, 0.51, 0.5, 0.5])]
    base += [batches("naive", BASE, shape=f"{n}x{n}") for n in range(100, 112)]
    new = [batches("naive", [1.04, 1.02, 1.05, 1.04, 1.06]), timed("padded33", 0.4, 0.39, 0.41)]
    report = compare_results(base, new, base_name="main.csv", new_name="branch.csv")
    console = Console(record=True, width=160)
    print_comparison(console, report)
    assert "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n" == """\
                                                 main.csv (base) -> branch.csv (new)
┏━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━┓
┃ workload  ┃ variant  ┃ shape     ┃ base_ms ┃ base_spread_% ┃ new_ms ┃ new_spread_% ┃ new/base ┃ 95%_interval ┃ change_% ┃ verdict ┃
┡━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━┩
│ transpose │ naive    │ 4096x4096 │  1.0000 │           3.0 │ 1.0400 │          3.8 │    1.040 │  1.020-1.060 │     +4.0 │ SLOWER  │
│ transpose │ padded33 │ 4096x4096 │  0.5000 │           4.0 │ 0.4000 │          5.0 │    0.800 │              │    -20.0 │ FASTER  │
└───────────┴──────────┴───────────┴─────────┴───────────────┴────────┴──────────────┴──────────┴──────────────┴──────────┴─────────┘
verdict: FASTER/SLOWER only when the 95% bootstrap interval of new/base (over batch means) lies beyond 1 +- 1%; rows with fewer than
                                           5 batch means: when their ranges do not overlap
only in main.csv (12 rows):
  transpose naive 100x100 (Test GPU)
  transpose naive 101x101 (Test GPU)
  transpose naive 102x102 (Test GPU)
  transpose naive 103x103 (Test GPU)
  transpose naive 104x104 (Test GPU)
  transpose naive 105x105 (Test GPU)
  transpose naive 106x106 (Test GPU)
  transpose naive 107x107 (Test GPU)
  transpose naive 108x108 (Test GPU)
  transpose naive 109x109 (Test GPU)
  ... and 2 more
1 faster, 1 slower, 0 same (within noise); 12 rows only in main.csv
"""
