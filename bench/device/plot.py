#!/usr/bin/env python3
"""Plots of the device measurements (bench/device/run.sh) from the CSVs that
crates/device/examples/device_bench.rs writes.

    python3 bench/device/plot.py [CSV_DIR [FIG_DIR]]   # default bench/out/device docs/figures

Writes device_rtt_cdf.png (and device_rtt_cdf_unpinned.png from CSV_DIR/unpinned),
device_rtt_inflight.png, device_throughput.png and device_reload.png.
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bench/out/device")
DST = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs/figures")

STYLE = {
    "udp-echo": dict(color="tab:blue", ls="--", label="plain UDP echo"),
    "tcp-echo": dict(color="tab:orange", ls="--", label="plain TCP echo"),
    "device-udp": dict(color="tab:blue", ls="-", label="device over UDP"),
    "device-tcp": dict(color="tab:orange", ls="-", label="device over TCP"),
    "device-inproc": dict(color="tab:green", ls="-", label="device in process"),
}
MSGS = ["LoginRequest", "ComposePostRequest"]


def rows(name, src=None):
    path = os.path.join(src or SRC, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return list(csv.DictReader(f))


def by_series(data, x, y, xtype):
    """{(msg, series): ([x...], [y...])} from CSV rows."""
    out = defaultdict(lambda: ([], []))
    for r in data:
        xs, ys = out[(r["msg"], r["series"])]
        xs.append(xtype(r[x]))
        ys.append(float(r[y]))
    return out


def finish(fig, png):
    fig.tight_layout()
    fig.savefig(os.path.join(DST, png), dpi=110)
    plt.close(fig)


def sizes(src=None):
    out = {}
    for r in rows("rtt_summary.csv", src) or []:
        out[r["msg"]] = (int(r["input_bytes"]), int(r["image_bytes"]))
    return out


def title(msg, sz):
    if msg in sz:
        return f"{msg} ({sz[msg][0]} B in, {sz[msg][1]} B image)"
    return msg


def rtt_cdf(src=None, png="device_rtt_cdf.png", how="one core (taskset)"):
    data = rows("rtt_cdf.csv", src)
    if not data:
        return
    sz = sizes(src)
    n = {r["msg"]: r["samples"] for r in rows("rtt_summary.csv", src) or []}
    series = by_series(data, "us", "percentile", float)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, msg in zip(axes, MSGS):
        for name, st in STYLE.items():
            if (msg, name) in series:
                xs, ys = series[(msg, name)]
                ax.plot(xs, ys, **st)
        ax.set_xscale("log")
        ax.set_xlim(0.2, 1000)
        ax.set_xlabel("round trip (µs, log scale)")
        ax.set_title(title(msg, sz), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("requests (cumulative %)")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(
        f"Round trips on loopback, one request in flight, {how} ({n.get(MSGS[0], '?')} samples per curve; "
        "cf. MSR paper Fig. 14-15)",
        fontsize=11,
    )
    finish(fig, png)


def inflight():
    data = rows("inflight.csv")
    if not data:
        return
    sz = sizes()
    fits = {(r["msg"], r["series"]): (float(r["intercept_us"]), float(r["slope_us_per_request"])) for r in rows("inflight_fit.csv") or []}
    series = by_series(data, "inflight", "median_us", int)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, msg in zip(axes, MSGS):
        for name, st in STYLE.items():
            if (msg, name) not in series:
                continue
            xs, ys = series[(msg, name)]
            a, b = fits.get((msg, name), (0, 0))
            st = dict(st)
            st["label"] = f"{st['label']}: {b:.1f} µs/request"
            ax.plot(xs, ys, marker="o", ms=3, **st)
            ax.plot([1, 16], [a + b, a + 16 * b], color=st["color"], ls=":", lw=0.8)
        ax.set_xlabel("requests in flight (sent back to back)")
        ax.set_title(title(msg, sz), fontsize=10)
        ax.set_xticks(range(1, 17))
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    axes[0].set_ylabel("median time until all are answered (µs)")
    fig.suptitle("Median round trip against requests in flight, least-squares slopes (cf. MSR paper Fig. 17)", fontsize=11)
    finish(fig, "device_rtt_inflight.png")


def throughput():
    data = rows("throughput.csv")
    if not data:
        return
    inputs = []
    mbs = defaultdict(dict)
    for r in data:
        if r["input"] not in inputs:
            inputs.append(r["input"])
        mbs[r["series"]][r["input"]] = float(r["mb_s"])
    names = ["tcp-echo", "device-tcp", "device-udp", "device-inproc"]
    fig, ax = plt.subplots(figsize=(10, 4.4))
    w = 0.2
    for i, name in enumerate(names):
        st = STYLE[name]
        xs = [j + (i - 1.5) * w for j in range(len(inputs))]
        ys = [mbs[name].get(inp, 0) for inp in inputs]
        ax.bar(xs, ys, w, color=st["color"], alpha=0.45 if "echo" in name else 0.9,
               hatch="//" if "echo" in name else None, label=st["label"])
        for x, y in zip(xs, ys):
            ax.text(x, y, f"{y:.0f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(inputs)))
    ax.set_xticklabels(inputs)
    ax.set_ylabel("input MB/s (one request in flight)")
    ax.set_title("Large inputs: the device against the same bytes echoed over plain TCP (loopback)", fontsize=11)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    finish(fig, "device_throughput.png")


def reload():
    data = rows("reload.csv")
    if not data:
        return
    by = defaultdict(list)
    for r in data:
        by[r["transport"]].append((int(r["table_bytes"]), float(r["mb_s"]), float(r["median_us"])))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    colors = {"inproc": "tab:green", "udp": "tab:blue", "tcp": "tab:orange"}
    labels = {"inproc": "in process", "udp": "over UDP", "tcp": "over TCP"}
    for t, pts in by.items():
        pts.sort()
        # each size has two tables (a, b): markers for both, the line through their mean
        sizes_ = sorted({p[0] for p in pts})
        mean = lambda i, b: sum(p[i] for p in pts if p[0] == b) / len([p for p in pts if p[0] == b])  # noqa: E731
        for ax, i in ((axes[0], 2), (axes[1], 1)):
            ax.plot([p[0] for p in pts], [p[i] for p in pts], "o", color=colors[t], ms=4, alpha=0.6)
            ax.plot(sizes_, [mean(i, b) for b in sizes_], "-", color=colors[t], label=labels[t])
    axes[1].axhline(488, color="black", ls="--", lw=1)
    axes[1].text(2500, 488 * 1.03, "PCIe paper: 488 MB/s (1.7 MB partial bitstream into ICAP)", fontsize=8)
    axes[0].set_ylabel("median reload time (µs)")
    axes[1].set_ylabel("reload throughput (MB/s)")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("table file (bytes, log scale)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8, loc="upper left")
    axes[1].legend(fontsize=8, loc="center right")
    axes[0].set_yscale("log")
    axes[1].set_ylim(0, 560)
    fig.suptitle("Slot reload of a 1-slot device (social and gm1 tables, then generated tables)", fontsize=11)
    finish(fig, "device_reload.png")


def main():
    os.makedirs(DST, exist_ok=True)
    rtt_cdf()
    rtt_cdf(os.path.join(SRC, "unpinned"), "device_rtt_cdf_unpinned.png", "threads on both cores")
    inflight()
    throughput()
    reload()
    print(f"figures in {os.path.relpath(DST)}")


if __name__ == "__main__":
    main()
