#!/usr/bin/env python3
"""The service measurements of issue 16, driven by bench/eval.sh (which builds the
binaries and makes the corpora first). Every trial starts a fresh social_service,
offers open-loop load with social_load, stops the service with SIGTERM and reads its
--stats-out. Writes bench/out/eval/results.{json,md} and PNG plots into docs/figures/.

Measurements:
  capacity  zero-drop capacity by bisection (NetThreads): the highest offered rate at
            which, for --trial seconds, every request gets an OK reply within --timeout
            and p99 latency (from the scheduled send time) stays under --p99-bound-ms
            (a rate fails when --attempts trials in a row fail: the machine is shared).
  cdf       latency CDFs at 50% and 90% of each mode's capacity.
  cpu       application-side CPU time per request (tokio threads + the pool's completion
            dispatcher; pool workers counted apart), every mode at one common rate.
  sizes     StorePost of growing size at a low rate: median latency inline vs pool and
            vs device (inproc:cpu), the speed-ups (MSR Fig. 19-20 shape), plus
            application CPU per request.
"""

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time

MODES = {
    "heapwire-inline": ["--codec", "heapwire", "--mode", "inline"],
    # Inline with the pool mode's thread count for the application (one runtime thread):
    # the load generator shares the cores, so the number of busy service threads matters.
    "heapwire-inline-1t": ["--codec", "heapwire", "--mode", "inline", "--app-threads", "1"],
    "heapwire-pool": ["--codec", "heapwire", "--mode", "pool", "--pool-cores", "1"],
    # The pool without the core split: one worker and the application threads share
    # both cores unpinned (tells the cost of the hand-off from the cost of the split).
    "heapwire-pool-shared": ["--codec", "heapwire", "--mode", "pool", "--pool-cores", "0", "--workers", "1"],
    "prost": ["--codec", "prost", "--mode", "inline"],
    # Decoding on a device (the device runtime's in-process CPU device, one thread owning
    # the handle): in the size sweep beside the pool; in the other parts only when asked
    # for with --modes.
    "heapwire-device": ["--codec", "heapwire", "--mode", "device"],
}
DEFAULT_MODES = [m for m in MODES if m != "heapwire-device"]
# the size sweep: each of these against inline
SWEEP = (("heapwire-inline", "inline"), ("heapwire-pool", "pool"), ("heapwire-device", "device"))
LABEL = {"heapwire-inline": "heapwire inline", "heapwire-inline-1t": "heapwire inline, 1 thread",
         "heapwire-pool": "heapwire pool",
         "heapwire-pool-shared": "heapwire pool, unpinned", "prost": "tonic+prost",
         "heapwire-device": "heapwire device (inproc:cpu)"}


def log(*a):
    print("eval:", *a, file=sys.stderr, flush=True)


class Runner:
    def __init__(self, args):
        self.a = args
        self.tmp = tempfile.mkdtemp(prefix="heapwire-eval-")
        self.trials = []

    def trial(self, mode, rate, duration, corpus, mix, note):
        """One fresh service, one load run; returns {load, stats, pass}."""
        stats_path = os.path.join(self.tmp, "stats.json")
        load_path = os.path.join(self.tmp, "load.json")
        for p in (stats_path, load_path):
            if os.path.exists(p):
                os.remove(p)
        svc = subprocess.Popen(
            [self.a.service, "--listen", "127.0.0.1:0", "--stats-out", stats_path] + MODES[mode],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = svc.stdout.readline().strip()
            if not line.startswith("listening on "):
                raise SystemExit("eval: social_service %s did not start: %s %s" % (mode, line, svc.stderr.read()))
            addr = line[len("listening on "):]
            cmd = [self.a.load, "--target", addr, "--rate", "%g" % rate, "--duration", "%gs" % duration,
                   "--timeout", self.a.timeout, "--connections", str(self.a.connections),
                   "--threads", str(self.a.load_threads), "--corpus", corpus, "--mix", mix,
                   "--quiet", "--json", load_path]
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                raise SystemExit("eval: social_load failed: %s\n%s" % (r.stderr, r.stdout))
            load = json.load(open(load_path))
        finally:
            svc.send_signal(signal.SIGTERM)
            try:
                svc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                svc.kill()
                svc.wait()
        stats = json.load(open(stats_path)) if os.path.exists(stats_path) else None
        lat = load["latency_us"]
        p99_ms = lat.get("p99", float("inf")) / 1e3 if lat.get("count") else float("inf")
        passed = load["ok"] == load["scheduled"] and p99_ms <= self.a.p99_bound_ms
        t = {"mode": mode, "rate": rate, "duration": duration, "note": note, "pass": passed,
             "ok": load["ok"], "errors": load["errors"], "timeouts": load["timeouts"],
             "scheduled": load["scheduled"], "p50_ms": lat.get("p50", 0) / 1e3, "p99_ms": p99_ms,
             "lag_p99_ms": load["schedule_lag_us"].get("p99", 0) / 1e3, "by_status": load["by_status"],
             "load": load, "stats": stats}
        self.trials.append({k: v for k, v in t.items() if k not in ("load", "stats")})
        log("%-16s %-10s %8.0f/s  %s  ok %d/%d  errors %d  timeouts %d  p50 %.2f ms  p99 %.2f ms  (generator lag p99 %.2f ms)" % (
            mode, note, rate, "PASS" if passed else "fail", t["ok"], t["scheduled"], t["errors"],
            t["timeouts"], t["p50_ms"], p99_ms, t["lag_p99_ms"]))
        return t

    def holds(self, mode, rate, note):
        """Whether `rate` is sustained. On a shared machine another process can stall the
        service or the generator for tens of milliseconds; a rate counts as failed only
        when --attempts trials in a row fail (1: NetThreads' single trial)."""
        for attempt in range(self.a.attempts):
            if self.trial(mode, rate, self.a.trial, self.a.corpus, self.a.mix,
                          note if attempt == 0 else note + "-retry")["pass"]:
                return True
        return False

    def capacity(self, mode):
        a = self.a
        lo, hi, rate = 0.0, None, a.start_rate
        while hi is None:  # double until a rate fails (or the cap)
            if self.holds(mode, rate, "search"):
                lo = rate
                if rate >= a.max_rate:
                    log("%s: passes at --max-rate %g: capacity is at least that" % (mode, rate))
                    return lo
                rate = min(rate * 2, a.max_rate)
            else:
                hi = rate
        while hi - lo > a.precision * hi and hi > 50:
            mid = (lo + hi) / 2 if lo > 0 else hi / 4
            if self.holds(mode, mid, "bisect"):
                lo = mid
            else:
                hi = mid
        log("%s: zero-drop capacity %.0f req/s (first failing rate %.0f)" % (mode, lo, hi))
        return lo


def cpu_per_request(stats):
    served = max(1, stats["served_total"])
    return {"app_us": stats["app_cpu_seconds"] / served * 1e6,
            "offload_us": stats.get("offload_cpu_seconds", 0.0) / served * 1e6,
            "served": stats["served_total"],
            "by_role": stats.get("cpu", {})}


def machine():
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "load_average_at_start": os.getloadavg()}


def plots(res, figdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(figdir, exist_ok=True)
    modes = [m for m in res["modes"] if m in res["capacity"]]
    colors = {"heapwire-inline": "tab:blue", "heapwire-inline-1t": "tab:cyan", "heapwire-pool": "tab:orange",
              "heapwire-pool-shared": "tab:green", "prost": "tab:gray",
              "heapwire-device": "tab:red"}
    made = []

    if modes:
        fig, ax = plt.subplots(figsize=(6.5, 3.2))
        ax.bar([LABEL[m].replace(" ", "\n", 1) for m in modes], [res["capacity"][m] for m in modes], color=[colors[m] for m in modes])
        for i, m in enumerate(modes):
            ax.text(i, res["capacity"][m], "%.0f" % res["capacity"][m], ha="center", va="bottom", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_ylabel("zero-drop capacity (req/s)")
        ax.set_title("Social mix, p99 < %g ms, %g s trials" % (res["params"]["p99_bound_ms"], res["params"]["trial"]), fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(figdir, "service_capacity.png"), dpi=120)
        plt.close(fig)
        made.append("service_capacity.png")

    if res.get("cdf"):
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
        for ax, frac in zip(axes, ("50", "90")):
            for m in modes:
                run = res["cdf"].get(m, {}).get(frac)
                if not run or not run["cdf"]:
                    continue
                xs = [p[0] / 1e3 for p in run["cdf"]]
                ys = [p[1] for p in run["cdf"]]
                ax.plot(xs, ys, label="%s (%.0f/s)" % (LABEL[m], run["rate"]), color=colors[m])
            ax.set_xscale("log")
            ax.set_xlabel("latency from scheduled send (ms, log)")
            ax.set_title("%s%% of each mode's capacity" % frac, fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("fraction of requests")
        axes[0].legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        fig.savefig(os.path.join(figdir, "service_latency_cdf.png"), dpi=120)
        plt.close(fig)
        made.append("service_latency_cdf.png")

    if res.get("cpu"):
        cm = [m for m in modes if m in res["cpu"]]
        fig, ax = plt.subplots(figsize=(6.5, 3.2))
        app = [res["cpu"][m]["app_us"] for m in cm]
        off = [res["cpu"][m]["offload_us"] for m in cm]
        names = [LABEL[m].replace(" ", "\n", 1) for m in cm]
        ax.bar(names, app, label="application threads", color="tab:blue")
        ax.bar(names, off, bottom=app, label="pool workers", color="tab:orange")
        ax.tick_params(axis="x", labelsize=8)
        ax.set_ylabel("CPU µs per request")
        ax.set_title("CPU per request at %.0f req/s (all modes)" % res["cpu_rate"], fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(figdir, "service_cpu_per_request.png"), dpi=120)
        plt.close(fig)
        made.append("service_cpu_per_request.png")

    if res.get("sizes"):
        rows = res["sizes"]
        xs = [r["avg_bytes"] for r in rows]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
        for m, key in SWEEP:
            if key not in rows[0]:
                continue
            p50 = [r[key]["p50_ms"] for r in rows]
            p10 = [r[key]["p10_ms"] for r in rows]
            p90 = [r[key]["p90_ms"] for r in rows]
            ax1.plot(xs, p50, marker="o", label=LABEL[m] + " median", color=colors[m])
            ax1.fill_between(xs, p10, p90, alpha=0.2, color=colors[m])
        ax1.set_xscale("log", base=2)
        ax1.set_yscale("log")
        ax1.set_xlabel("StorePost request size (B)")
        ax1.set_ylabel("latency (ms; band p10-p90)")
        ax1.legend(fontsize=7)
        ax1.grid(True, which="both", alpha=0.3)
        ax2.plot(xs, [r["latency_speedup"] for r in rows], marker="o", label="median latency inline / pool")
        ax2.plot(xs, [r["app_cpu_ratio"] for r in rows], marker="s", label="app CPU per request inline / pool")
        if "device" in rows[0]:
            ax2.plot(xs, [r["device_latency_speedup"] for r in rows], marker="^", color="tab:red",
                     label="median latency inline / device")
        ax2.axhline(1.0, color="k", lw=0.8)
        ax2.set_xscale("log", base=2)
        ax2.set_xlabel("StorePost request size (B)")
        ax2.set_ylabel("speed-up over inline (x)")
        ax2.legend(fontsize=7)
        ax2.grid(True, which="both", alpha=0.3)
        fig.suptitle("Offload pool and device vs inline against message size, %g req/s" % res["params"]["sweep_rate"], fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(figdir, "service_speedup_vs_size.png"), dpi=120)
        plt.close(fig)
        made.append("service_speedup_vs_size.png")
    return made


def quantile_ms(cdf, q):
    for v, frac in cdf:
        if frac >= q:
            return v / 1e3
    return cdf[-1][0] / 1e3 if cdf else 0.0


def markdown(res):
    p = res["params"]
    out = ["Measured %s on %s (%d cores, Linux %s), load average %.1f at the start and %s at the end. "
           "Core split: the load generator runs on the same 2 cores as the service (unpinned); "
           "inline modes run %s; the pool mode pins its worker to core 1 and the application threads to core 0 (--pool-cores 1). "
           "Trials: %g s each, timeout %s, p99 bound %g ms, a rate fails after %d failed trials in a row, %d connections, mix %s." % (
               res["date"], res["machine"]["cpu"], res["machine"]["cores"], res["machine"]["kernel"],
               res["machine"]["load_average_at_start"][0], "%.1f" % res["machine"]["load_average_at_end"][0] if "load_average_at_end" in res["machine"] else "?",
               "the tokio runtime on both cores, unpinned (one thread per core; 'inline, 1 thread': one runtime thread)",
               p["trial"], p["timeout"], p["p99_bound_ms"], p["attempts"], p["connections"], p["mix"]), ""]
    if res.get("capacity"):
        out += ["| mode | zero-drop capacity (req/s) | vs tonic+prost |", "|---|---:|---:|"]
        base = res["capacity"].get("prost")
        for m, c in res["capacity"].items():
            out.append("| %s | %.0f | %s |" % (LABEL[m], c, "%.2fx" % (c / base) if base else "-"))
        out.append("")
    if res.get("cpu"):
        out += ["CPU per request at %.0f req/s offered to every mode:" % res["cpu_rate"], "",
                "| mode | application µs/req | pool workers µs/req | requests |", "|---|---:|---:|---:|"]
        for m, c in res["cpu"].items():
            out.append("| %s | %.1f | %.1f | %d |" % (LABEL[m], c["app_us"], c["offload_us"], c["served"]))
        out.append("")
    if res.get("cdf"):
        out += ["Latency from the scheduled send time (the generator's own lag behind its schedule, "
                "part of these latencies, in the last column):", "",
                "| mode | load | rate | ok | p50 ms | p90 ms | p99 ms | p99.9 ms | generator lag p99 ms |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for m, runs in res["cdf"].items():
            for frac, r in runs.items():
                l = r["latency_us"]
                lag = r.get("lag_p99_ms")
                out.append("| %s | %s%% | %.0f | %.1f%% | %.3f | %.3f | %.3f | %.3f | %s |" % (
                    LABEL[m], frac, r["rate"], 100.0 * r["ok"] / max(1, r["scheduled"]), l.get("p50", 0) / 1e3, l.get("p90", 0) / 1e3,
                    l.get("p99", 0) / 1e3, l.get("p99.9", 0) / 1e3, "-" if lag is None else "%.3f" % lag))
        out.append("")
    if res.get("sizes"):
        out += ["StorePost requests of growing size at %g req/s (a speed-up above 1: the pool is faster, "
                "or leaves the application more CPU):" % p["sweep_rate"], "",
                "| avg B | inline p50 ms | pool p50 ms | latency speed-up | inline app µs/req | pool app µs/req (+ workers) | app CPU inline/pool |",
                "|---:|---:|---:|---:|---:|---:|---:|"]
        for r in res["sizes"]:
            out.append("| %.0f | %.3f | %.3f | %.2fx | %.1f | %.1f (+%.1f) | %.2fx |" % (
                r["avg_bytes"], r["inline"]["p50_ms"], r["pool"]["p50_ms"], r["latency_speedup"],
                r["inline"]["app_us"], r["pool"]["app_us"], r["pool"]["offload_us"], r["app_cpu_ratio"]))
        out.append("")
        if "device" in res["sizes"][0]:
            out += ["The same sweep decoding on the device (`--mode device`, `inproc:cpu`):", "",
                    "| avg B | inline p50 ms | device p50 ms | latency speed-up | device app µs/req (+ device thread) | app CPU inline/device |",
                    "|---:|---:|---:|---:|---:|---:|"]
            for r in res["sizes"]:
                out.append("| %.0f | %.3f | %.3f | %.2fx | %.1f (+%.1f) | %.2fx |" % (
                    r["avg_bytes"], r["inline"]["p50_ms"], r["device"]["p50_ms"], r["device_latency_speedup"],
                    r["device"]["app_us"], r["device"]["offload_us"], r["device_app_cpu_ratio"]))
            out.append("")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--service", required=True)
    ap.add_argument("--load", required=True)
    ap.add_argument("--corpus", required=True, help="directory of the social request streams")
    ap.add_argument("--sizes-dir", help="gen_sizes.py output (the size sweep runs when given)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--figures", required=True)
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES))
    ap.add_argument("--only", default="capacity,cdf,cpu,sizes",
                    help="which measurements; 'report' alone re-renders the last run's tables and plots")
    ap.add_argument("--trial", type=float, default=5.0, help="seconds per bisection trial (NetThreads: 5)")
    ap.add_argument("--cdf-duration", type=float, default=10.0)
    ap.add_argument("--sweep-duration", type=float, default=4.0)
    ap.add_argument("--sweep-rate", type=float, default=200.0)
    ap.add_argument("--p99-bound-ms", type=float, default=50.0)
    ap.add_argument("--timeout", default="1s")
    ap.add_argument("--start-rate", type=float, default=2000.0)
    ap.add_argument("--max-rate", type=float, default=64000.0)
    ap.add_argument("--attempts", type=int, default=2,
                    help="trials at a rate before it counts as failed (noise on a shared machine)")
    ap.add_argument("--precision", type=float, default=0.05, help="bisection stops when (hi-lo)/hi is below this")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--load-threads", type=int, default=1)
    ap.add_argument("--mix", default="compose_post=3,store_post=3,compose_media=1,register_user=1,login=2")
    a = ap.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            raise SystemExit("eval: unknown mode %s (one of %s)" % (m, ", ".join(MODES)))
    only = set(a.only.split(","))
    os.makedirs(a.out, exist_ok=True)
    res_path = os.path.join(a.out, "results.json")
    if only == {"report"}:  # re-render the tables and plots of the last run
        res = json.load(open(res_path))
        md = markdown(res)
        open(os.path.join(a.out, "results.md"), "w").write(md)
        print(md, end="")
        log("figures %s in %s" % (", ".join(plots(res, a.figures)), a.figures))
        return
    run = Runner(a)
    t0 = time.time()
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(), "modes": modes,
           "params": {k: getattr(a, k) for k in ("trial", "cdf_duration", "sweep_duration", "sweep_rate",
                                                 "p99_bound_ms", "timeout", "precision", "attempts", "connections", "mix",
                                                 "load_threads")},
           "capacity": {}, "cdf": {}, "cpu": {}, "sizes": []}
    prev = json.load(open(res_path)) if os.path.exists(res_path) else {}

    if "capacity" in only:
        for m in modes:
            log("== capacity: %s" % m)
            res["capacity"][m] = run.capacity(m)
    elif prev.get("capacity"):
        res["capacity"] = {m: c for m, c in prev["capacity"].items() if m in modes}
        log("capacities from the previous run: %s" % res["capacity"])

    if "cdf" in only and res["capacity"]:
        for m in modes:
            res["cdf"][m] = {}
            for frac in (50, 90):
                rate = max(1.0, res["capacity"][m] * frac / 100)
                log("== cdf: %s at %d%% of capacity" % (m, frac))
                t = run.trial(m, rate, a.cdf_duration, a.corpus, a.mix, "cdf%d" % frac)
                res["cdf"][m][str(frac)] = {"rate": rate, "latency_us": t["load"]["latency_us"],
                                            "cdf": t["load"]["cdf"], "ok": t["ok"], "scheduled": t["scheduled"],
                                            "lag_p99_ms": t["lag_p99_ms"]}

    if "cpu" in only:
        caps = [res["capacity"][m] for m in modes if m in res["capacity"]]
        res["cpu_rate"] = max(100.0, 0.5 * min(caps)) if caps else 1000.0
        for m in modes:
            log("== cpu per request: %s at %.0f req/s" % (m, res["cpu_rate"]))
            t = run.trial(m, res["cpu_rate"], a.cdf_duration, a.corpus, a.mix, "cpu")
            if t["stats"]:
                res["cpu"][m] = cpu_per_request(t["stats"])

    if "sizes" in only and a.sizes_dir:
        sizes = json.load(open(os.path.join(a.sizes_dir, "sizes.json")))["sizes"]
        for s in sizes:
            row = {"target": s["target"], "avg_bytes": s["avg_size"]}
            for m, key in SWEEP:
                log("== size %d B: %s" % (s["target"], m))
                t = run.trial(m, a.sweep_rate, a.sweep_duration, s["dir"], "store_post=1", "size")
                cdf = t["load"]["cdf"]
                row[key] = {"p50_ms": t["p50_ms"], "p10_ms": quantile_ms(cdf, 0.1), "p90_ms": quantile_ms(cdf, 0.9),
                            "ok": t["ok"], "scheduled": t["scheduled"], **cpu_per_request(t["stats"])}
            row["latency_speedup"] = row["inline"]["p50_ms"] / max(1e-9, row["pool"]["p50_ms"])
            row["app_cpu_ratio"] = row["inline"]["app_us"] / max(1e-9, row["pool"]["app_us"])
            row["device_latency_speedup"] = row["inline"]["p50_ms"] / max(1e-9, row["device"]["p50_ms"])
            row["device_app_cpu_ratio"] = row["inline"]["app_us"] / max(1e-9, row["device"]["app_us"])
            res["sizes"].append(row)

    res["trials"] = run.trials
    res["machine"]["load_average_at_end"] = os.getloadavg()
    res["elapsed_s"] = round(time.time() - t0, 1)
    json.dump(res, open(res_path, "w"), indent=1)
    md = markdown(res)
    open(os.path.join(a.out, "results.md"), "w").write(md)
    made = plots(res, a.figures)
    print(md, end="")
    log("results in %s/results.{md,json}; figures %s in %s (%.0f s)" % (a.out, ", ".join(made), a.figures, res["elapsed_s"]))


if __name__ == "__main__":
    main()
