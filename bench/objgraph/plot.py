"""Prints the objgraph benchmark table and plots it (Fig. 19/20 style)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'n':>7} {'objects':>8} {'wire B':>8} {'heap B':>9} {'C++ (paper) us':>15} {'heapwire us':>12} {'speed-up':>9} {'heapwire MB/s':>14} {'memset us':>10} {'memcpy us':>10} {'x memset':>9}")
for r in rows:
    c, h, ms, mc = float(r["cpp_ns"]), float(r["heapwire_ns"]), float(r["memset_ns"]), float(r["memcpy_ns"])
    print(f"{r['n']:>7} {r['objects']:>8} {r['wire_bytes']:>8} {r['heap_bytes']:>9} {c/1e3:>15.3f} {h/1e3:>12.3f} {c/h:>8.2f}x {int(r['wire_bytes'])/h*1e3:>14.0f} {ms/1e3:>10.3f} {mc/1e3:>10.3f} {h/ms:>8.1f}x")

heap = [int(r["heap_bytes"]) for r in rows]
c = [float(r["cpp_ns"]) / 1e3 for r in rows]
h = [float(r["heapwire_ns"]) / 1e3 for r in rows]
fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
a.loglog(heap, c, "o-", label="C++ deserializer (paper 5.1: new, virtual read, id table)")
a.loglog(heap, h, "s-", label="heapwire objgraph decode (C API, preallocated buffer)")
a.loglog(heap, [float(r["memset_ns"]) / 1e3 for r in rows], ":", color="gray", label="memset of the image's bytes (write limit)")
a.axvline(4080 * 2, color="gray", ls=":", lw=1)
a.text(4080 * 2, a.get_ylim()[1], " n=127", va="top", fontsize=8, color="gray")
a.set_xlabel("object structure size on the heap (bytes, 64-bit layout)")
a.set_ylabel("deserialization time (µs, median)")
a.set_title("Scaled expression tree (Fig. 18)")
a.legend(fontsize=7)
a.grid(True, which="both", alpha=0.3)
b.semilogx(heap, [x / y for x, y in zip(c, h)], "d-", color="C2")
b.set_xlabel("object structure size on the heap (bytes)")
b.set_ylabel("speed-up of heapwire over C++")
b.set_title("Speed-up (cf. Fig. 20: FPGA ≈9x compute-only)")
b.grid(True, which="both", alpha=0.3)
b.set_ylim(bottom=0)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
print(f"wrote {sys.argv[2]}")
