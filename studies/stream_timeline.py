"""Where the stream pipeline's time goes on the GPU: the evidence behind docs/stream.md.

Run on a GPU machine:
    python3 studies/stream_timeline.py [CHUNK] [TERMS] [CHUNKS] [STREAMS] [JSON]
(defaults 4194304 64 8 1,2,3,4 and no JSON file). For the stream workload's pipeline of
CHUNKS chunks it prints:

1. each stage's work alone (every chunk's upload, kernel or download, chunk c on stream
   c % S, nothing else queued), per chunk, for S = 1 and each count of STREAMS: the
   measurements behind bound_ms;
2. the engines side by side: all uploads on one stream while all downloads run on another
   (do H2D and D2H share the host link?), and all kernels on one stream while the uploads
   and downloads run on two more (is a kernel slower or faster next to copies?);
3. for the course's submission order (all uploads, all kernels, all downloads) and for a
   depth-first order (upload, kernel, download of chunk 0, then of chunk 1, ...), on each
   stream count: the host-timed time of the plain pipeline (median of 21 runs), and one
   run with a CUDA event recorded after every operation on its stream (the run of median
   length among 7): when each operation ended, and how long after the end of the
   previous one on the same engine. An event only says when its stream got there, so an
   operation's end is exact and its start is not known; the gap to the previous end of
   its engine is the time it took if that engine serves one operation at a time. For the
   course's order it also prints predicted_ms (copy runs, as the workload reports it) and
   the course's assumption (copies interleaved in submission order), from the stage times
   of part 1.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from pmppbench import workloads
from pmppbench.measure.protocol import EventTimer, Protocol, _hold_launcher, measure
from pmppbench.engine.worker.pipeline import prepared
from pmppbench.workloads import stream as stream_mod
from pmppbench.workloads.stream import STAGE_REPEATS, PipelineShape, predicted_pipeline_ms, pipeline_bound_ms, stage_layouts

STAGES = ("h2d", "kernel", "d2h")
HOLD_US = 2000  # lets the host queue a whole experiment before the GPU starts it
PLAIN_RUNS, TRACED_RUNS = 21, 7


def cupy():
    import cupy as cp  # noqa: PLC0415

    return cp


def side_by_side(ctx, lanes, repeats=5):
    """lanes: list of (stream, [callables]) run at the same time after a hold; returns the
    median over repeats of each lane's span in ms (start event on stream 0, the others wait
    on it; an end event on each lane's stream)."""
    cp = cupy()
    hold = _hold_launcher()
    s0 = lanes[0][0]
    start = cp.cuda.Event()
    ends = [cp.cuda.Event() for _ in lanes]
    spans = [[] for _ in lanes]
    for r in range(repeats + 1):
        hold(s0, HOLD_US)
        start.record(s0)
        for s, _ in lanes[1:]:
            s.wait_event(start)
        for (s, ops), end in zip(lanes, ends):
            for op in ops:
                op(s)
            end.record(s)
        for end in ends:
            end.synchronize()
        if r:  # the first is a warmup
            for i, end in enumerate(ends):
                spans[i].append(cp.cuda.get_elapsed_time(start, end))
    return [statistics.median(x) for x in spans]


def order_of(cfg, order):
    if order == "course":
        return [(stage, c) for stage in STAGES for c in range(cfg.chunks)]
    return [(stage, c) for c in range(cfg.chunks) for stage in STAGES]


def pipeline(ctx, ops, cfg, count, order, traced):
    """One run of the pipeline in `order` on `count` streams; with `traced`, an event after
    every operation. Returns (host ms, [(stage, chunk, stream, end ms after the start)])."""
    cp = cupy()
    used = ctx.streams[:count]
    seq = order_of(cfg, order)
    marks = [cp.cuda.Event() for _ in seq] if traced else []
    t0 = cp.cuda.Event()
    t_host = time.perf_counter()
    if traced:
        t0.record(used[0])
        for s in used[1:]:
            s.wait_event(t0)
    for i, (stage, c) in enumerate(seq):
        s = used[c % count]
        ops[stage][c](s)
        if traced:
            marks[i].record(s)
    for s in used:
        s.synchronize()
    host_ms = (time.perf_counter() - t_host) * 1e3
    trace = [(stage, c, c % count, cp.cuda.get_elapsed_time(t0, m)) for (stage, c), m in zip(seq, marks)]
    return host_ms, trace


def engine_view(trace):
    """stage -> [(chunk, stream, end, gap to the previous end on that engine, or to the
    stream's previous end if that was later)] in the order the operations ended."""
    prev_in_stream = {}
    ready = {}
    for stage, c, s, end in trace:  # submission order within a stream = execution order
        ready[(stage, c)] = prev_in_stream.get(s, 0.0)
        prev_in_stream[s] = end
    view = {}
    for stage in STAGES:
        ops = sorted((end, c, s) for st, c, s, end in trace if st == stage)
        last, rows = 0.0, []
        for end, c, s in ops:
            begin = max(last, ready[(stage, c)])
            rows.append((c, s, end, end - begin))
            last = end
        view[stage] = rows
    return view


def main(chunk=1 << 22, terms=64, chunks=8, streams=(1, 2, 3, 4), json_path=None):
    cp = cupy()
    wl = workloads.get("stream")
    shape = {"chunk": chunk, "terms": terms, "chunks": chunks, "streams": tuple(streams)}
    wl.validate(shape)
    cfg = PipelineShape.of(shape)
    variants = [v for v in wl.variants_for(shape) if v.timed]
    out = {"shape": {**shape, "streams": list(streams)}, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    with prepared(wl, shape, variants) as (_inputs, ctx):
        ctx.grow_streams(max(max(streams), 3))
        ops = stream_mod.stage_ops(cfg, ctx)

        # 1. each stage's work alone
        layouts = stage_layouts(chunks, streams)
        timed = measure(stream_mod.stage_runs(cfg, ctx, layouts), Protocol(warmup=1, batches=STAGE_REPEATS, reps=1),
                        timer=EventTimer(stream=ctx.streams[0]))
        work = {stage: {s: timed[f"{stage} x{s}"] for s in layouts} for stage in STAGES}
        print(f"## 1. each stage's work alone, {chunks} chunks of {chunk} floats: ms per chunk (median / min of 5)")
        print("stage    " + "".join(f"{'S=' + str(s):>16}" for s in layouts))
        out["stage_work"] = {}
        for stage in STAGES:
            cells = "".join(f"{work[stage][s].median_ms / chunks:>9.4f}/{work[stage][s].min_ms / chunks:.4f}"
                            for s in layouts)
            print(f"{stage:<8} {cells}")
            out["stage_work"][stage] = {s: [work[stage][s].median_ms, work[stage][s].min_ms] for s in layouts}
        h, k, d = (min(t.min_ms for t in work[st].values()) / chunks for st in STAGES)
        bound = pipeline_bound_ms(chunks, h, k, d)
        print(f"bound stages (smallest per chunk): h2d {h:.4f} kernel {k:.4f} d2h {d:.4f}; bound_ms {bound:.4f}")
        out["bound_stages"], out["bound_ms"] = [h, k, d], bound

        # 2. engines side by side
        s0, s1, s2 = ctx.streams[:3]
        alone = {st: side_by_side(ctx, [(s0, ops[st])])[0] for st in STAGES}
        hd = side_by_side(ctx, [(s0, ops["h2d"]), (s1, ops["d2h"])])
        khd = side_by_side(ctx, [(s0, ops["kernel"]), (s1, ops["h2d"]), (s2, ops["d2h"])])
        print(f"\n## 2. engines side by side: span of each stream's {chunks} operations, ms (median of 5)")
        print(f"alone:                      h2d {alone['h2d']:.4f}  kernel {alone['kernel']:.4f}  d2h {alone['d2h']:.4f}")
        print(f"h2d || d2h:                 h2d {hd[0]:.4f}  d2h {hd[1]:.4f}")
        print(f"kernel || h2d || d2h:       kernel {khd[0]:.4f}  h2d {khd[1]:.4f}  d2h {khd[2]:.4f}")
        out["side_by_side"] = {"alone": alone, "h2d||d2h": hd, "kernel||h2d||d2h": khd}

        # 3. timelines
        print(f"\n## 3. pipelines: host ms (median of {PLAIN_RUNS} plain runs), one traced run "
              f"(median of {TRACED_RUNS}): end of the traced run's last operation after its start event")
        out["pipelines"] = []
        for order in ("course", "depth"):
            for count in streams:
                for _ in range(3):
                    pipeline(ctx, ops, cfg, count, order, traced=False)
                plain = statistics.median(pipeline(ctx, ops, cfg, count, order, traced=False)[0]
                                          for _ in range(PLAIN_RUNS))
                traced = sorted((pipeline(ctx, ops, cfg, count, order, traced=True) for _ in range(TRACED_RUNS)),
                                key=lambda r: max(e for *_, e in r[1]))
                host_ms, trace = traced[TRACED_RUNS // 2]
                span = max(e for *_, e in trace)
                predicted = course_model = None
                pred = ""
                if order == "course":  # the model replays the course's order only
                    predicted = predicted_pipeline_ms(chunks, count, h, k, d)
                    course_model = predicted_pipeline_ms(chunks, count, h, k, d, copy_runs=False)
                    pred = f", predicted {predicted:.4f} (interleaved copies: {course_model:.4f})"
                print(f"\n### {order} order, streams={count}: plain {plain:.4f} ms; traced run host {host_ms:.4f}, "
                      f"GPU span {span:.4f}{pred}; bound {bound:.4f}")
                view = engine_view(trace)
                for stage in STAGES:
                    cells = " ".join(f"{c}s{s}@{end:.3f}+{gap:.3f}" for c, s, end, gap in view[stage])
                    print(f"  {stage:<6} {cells}")
                out["pipelines"].append({"order": order, "streams": count, "plain_host_ms": plain,
                                         "traced_host_ms": host_ms, "traced_span_ms": span, "predicted_ms": predicted,
                                         "predicted_interleaved_ms": course_model,
                                         "trace": [list(t) for t in trace]})
    if json_path:
        with open(json_path, "w") as f:
            json.dump(out, f, indent=1)
    print("\nlegend: chunk c on stream s ended @ ms after the start, + ms since the previous end on its engine "
          "(or on its stream, if later)")


if __name__ == "__main__":
    a = sys.argv[1:]
    main(int(a[0]) if len(a) > 0 else 1 << 22, int(a[1]) if len(a) > 1 else 64, int(a[2]) if len(a) > 2 else 8,
         tuple(int(x) for x in a[3].split(",")) if len(a) > 3 else (1, 2, 3, 4), a[4] if len(a) > 4 else None)
