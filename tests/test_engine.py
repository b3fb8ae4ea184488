"""The engine's promises, on the CPU, with the NumPy workload of tests/fake_workload.py:
FAIL rows are never timed, one variant's failure never changes another's row, every
finished row reaches the sink before Ctrl-C returns, a failing step becomes ERROR rows and
the run goes on; and a new workload's command and config follow from its declaration."""

from __future__ import annotations

import numpy as np
import pytest
import typer

from fake_workload import Copy2D
from pmppbench.cli import app as cli
from pmppbench.cli import config
from pmppbench.engine.driver import session
from pmppbench.errors import UsageError
from pmppbench.engine.plan import Plan, Step
from pmppbench.row import Result
from pmppbench.engine.worker.pipeline import evaluate


class ScriptedTimer:
    """Calls each run `reps` times and reports a fixed time per variant (by its counter)."""

    def __init__(self, workload, ms=None):
        self.workload, self.ms, self.timed = workload, ms or {"rows": 2.0, "whole": 1.0}, []

    def batch_ms(self, fn, reps):
        before = dict(self.workload.calls)
        for _ in range(reps):
            fn()
        (name,) = [k for k, v in self.workload.calls.items() if v != before.get(k, 0)]
        self.timed.append(name)
        return self.ms[name]


def run(w, variants, shape=None, check_only=False):
    shape = shape or w.default_shape()
    inputs = w.make_inputs(shape, np.random.default_rng(0))
    ctx = w.setup(shape, inputs, {})
    timer = ScriptedTimer(w)
    rows = evaluate(w, shape, [w.variant(v) for v in variants], inputs, ctx, protocol=w.protocol,
                    check_only=check_only, timer=timer, run_id="r1")
    return {r.variant: r for r in rows}, timer


def test_fail_and_error_rows_are_never_timed():
    w = Copy2D()
    rows, timer = run(w, ["rows", "wrong", "crash", "whole"])
    assert [rows[v].check for v in ("rows", "wrong", "crash", "whole")] == ["PASS", "FAIL", "ERROR", "PASS"]
    assert "illegal memory access" in rows["crash"].error
    assert rows["wrong"].check_detail.startswith("1 of 128 elements")
    assert set(timer.timed) == {"rows", "whole"}
    assert w.calls["wrong"] == 1 and w.calls["crash"] == 1  # the check's call only
    assert w.calls["rows"] == 1 + w.protocol.warmup + w.protocol.batches * w.protocol.reps
    assert rows["wrong"].median_ms is None and rows["crash"].median_ms is None
    assert rows["whole"].median_ms == 1.0 and rows["whole"].speedup == 2.0 and rows["whole"].speedup_vs == "rows"


def test_one_variants_failure_never_changes_anothers_row():
    alone, _ = run(Copy2D(), ["rows", "whole"])
    beside, _ = run(Copy2D(), ["rows", "wrong", "crash", "whole"])
    for v in ("rows", "whole"):
        a, b = alone[v].to_dict(), beside[v].to_dict()
        a.pop("timestamp"), b.pop("timestamp")
        assert a == b


def test_check_only_times_nothing():
    rows, timer = run(Copy2D(), ["rows", "whole"], check_only=True)
    assert timer.timed == [] and all(r.median_ms is None and r.check == "PASS" for r in rows.values())


class ListSink:
    def __init__(self):
        self.rows = []

    def add(self, row):
        self.rows.append(row)


def steps(w, n):
    return [Step(w, {"m": 4 + i, "n": 4}, w.protocol, i) for i in range(n)]


def test_every_finished_row_is_in_the_sink_when_ctrl_c_returns():
    w, sink = Copy2D(), ListSink()

    def run_step(step, progress=None):
        if step.shape["m"] == 6:
            raise KeyboardInterrupt
        return [Result(w.name, v.name, w.label(step.shape), check="PASS") for v in step.variants]

    out = session.run(Plan(steps(w, 4)), [sink], run_step=run_step)
    assert out.interrupted
    assert [r.shape for r in sink.rows] == ["4x4"] * 4 + ["5x4"] * 4 and sink.rows == out.rows


def test_a_failing_step_is_error_rows_and_the_run_goes_on():
    w, sink = Copy2D(), ListSink()

    def run_step(step, progress=None):
        if step.shape["m"] == 5:
            raise RuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered")
        assert step.run_id == "r2"  # every step carries its plan's run
        return [Result(w.name, v.name, w.label(step.shape), check="PASS") for v in step.variants]

    out = session.run(Plan(steps(w, 3), run_id="r2"), [sink], run_step=run_step)
    assert not out.interrupted
    assert [(r.shape, r.check) for r in out.rows] == ([("4x4", "PASS")] * 4 + [("5x4", "ERROR")] * 4
                                                      + [("6x4", "PASS")] * 4)
    assert all("cudaErrorIllegalAddress" in r.error and r.run_id == "r2" for r in out.rows if r.check == "ERROR")
    assert isinstance(session.exit_problem(out), session.CheckFailed)


def test_a_refused_step_exits_2_not_1():
    w = Copy2D()

    def run_step(step, progress=None):
        raise UsageError("copy2d 4x4 needs 9 GiB of device memory but only 1 GiB is free")

    out = session.run(Plan(steps(w, 1)), run_step=run_step)
    problem = session.exit_problem(out)
    assert isinstance(problem, UsageError) and problem.exit_code == 2 and str(problem).startswith("copy2d 4x4 needs")


def test_a_refused_step_beside_a_failed_check_exits_1():
    """The exit follows from the errors' types: bad input exits 2 only when nothing else failed."""
    w = Copy2D()

    def run_step(step, progress=None):
        if step.seed == 0:
            raise UsageError("copy2d 4x4 needs 9 GiB of device memory but only 1 GiB is free")
        return [Result(w.name, v.name, w.label(step.shape), check="FAIL") for v in step.variants]

    out = session.run(Plan(steps(w, 2)), run_step=run_step)
    assert type(session.exit_problem(out)) is session.CheckFailed


def test_the_command_follows_from_the_declaration(capsys):
    app = typer.Typer()
    app.callback()(lambda: None)
    cli.register_workload_command(Copy2D(), app)
    group = typer.main.get_command(app)
    try:  # --help returns, or exits through the parser with code 0, by typer version
        group.main(["copy2d", "--help"], prog_name="pmppbench", standalone_mode=False)
    except Exception as exc:
        assert type(exc).__name__ == "Exit" and not getattr(exc, "exit_code", 0)
    out = capsys.readouterr().out
    for words in ("M", "Rows. Default 16.", "Columns. Default 8.", "Calls per timed batch. Default 2.", "--check-only"):
        assert words in out


def test_config_validation_follows_from_the_declaration(monkeypatch, tmp_path):
    from pmppbench import workloads

    monkeypatch.setitem(workloads._MODULES, "copy2d", "fake_workload")
    path = tmp_path / "c.toml"
    path.write_text("[copy2d]\nshapes = [[2, 3], {m = 5}]\nvariants = [\"rows\"]\n")
    (section,) = config.load(path).sections
    assert section.shapes == [{"m": 2, "n": 3}, {"m": 5, "n": 8}] and section.variants == ["rows"]
    path.write_text("[copy2d]\nshapes = [[2, 0]]\n")
    with pytest.raises(config.UsageError, match="N must be a positive integer"):
        config.load(path)


def test_model_runs_are_timed_by_the_runner_and_passed_to_annotate():
    """A workload never times: what its model needs (the stream stages alone) it declares as
    model_runs (ModelColumns), the engine times them after the variants, annotate() gets the timings."""
    from pmppbench.workloads.base import ModelColumns, ModelRuns

    class RowsAlone(ModelColumns):
        def __init__(self, w):
            self.w = w

        def model_runs(self, shape, ctx, rows):
            w = self.w
            return ModelRuns({"rows": lambda: w.job(w.variant("rows"), shape, ctx).run()}, w.protocol)

        def annotate(self, shape, ctx, rows, timings):
            for r in rows:
                if r.median_ms:
                    r.model["stage_ms"] = timings["rows"].median_ms

    class WithModel(Copy2D):
        def __init__(self):
            super().__init__()
            self.model_columns = RowsAlone(self)

    rows, timer = run(WithModel(), ["rows", "wrong", "whole"])
    assert timer.timed.count("rows") == 2 * WithModel.protocol.batches  # the variant's batches, then the model's
    assert rows["whole"].model == {"stage_ms": 2.0} and rows["wrong"].model == {}


def test_the_runner_accounts_where_its_time_goes():
    from pmppbench.engine.worker.pipeline import PHASES, take_spent

    take_spent()
    run(Copy2D(), ["rows", "whole"])
    spent = take_spent()
    assert {"checks", "references", "timed"} <= set(spent) <= set(PHASES)
    assert all(v >= 0 for v in spent.values()) and take_spent() == {}


def test_wall_time_line_and_record():
    w = session.wall_time(10.0, [{"timed": 4.0, "checks": 2.0}, {"timed": 2.0, "compile": 1.0}], gpus=2)
    assert w == {"wall": 10.0, "timed": 3.0, "checks": 1.0, "references": 0.0, "inputs": 0.0, "compile": 0.5,
                 "counters": 0.0, "other": 5.5}
    assert session.wall_line(w) == ("wall time 10.0 s: timed GPU work 3.0 s, checks 1.0 s, references 0.0 s, "
                                    "inputs 0.0 s, compile 0.5 s, other 5.5 s")
    # --counters' untimed profiling has its own share, named only when a run spent some
    w = session.wall_time(10.0, [{"timed": 4.0, "counters": 3.0}], gpus=1)
    assert w["counters"] == 3.0 and w["other"] == 3.0
    assert session.wall_line(w).endswith("compile 0.0 s, counters 3.0 s, other 3.0 s")
