"""Plot bench/results.json as PNGs next to it: median bars/lines with the min marked, log axes.

Writes ``cpu-exchange.png`` (exchange time vs size), ``gpu-handoff.png``
(hand-off vs readback + re-upload) and ``allocator.png`` (cache modes vs raw
``createBuffer``). Run by ``make bench`` (bench/run.mjs) with the project's .venv.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).parent
MIB = 1024 * 1024


def size_label(nbytes: int) -> str:
    """Return ``"1 KiB"`` / ``"16 MiB"`` for a byte count."""
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // 1024} KiB"


def subtitle(data: dict[str, Any]) -> str:
    """Return the machine and browser line every figure carries."""
    m = data["machine"]
    return f"{data['browser']}, {data['adapter']}, {m['cpus']} cores ({m['cpu']}); median bars/lines, min as ticks"


def grouped_bars(ax: Any, groups: list[str], series: dict[str, list[tuple[float, float]]], unit: str) -> None:
    """Draw log-scale grouped bars: one group per label, one bar per series (median), min as a tick.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    groups : list of str
        Group labels along x.
    series : dict
        Series name → one ``(median, min)`` per group.
    unit : str
        Y axis unit.
    """
    width = 0.8 / len(series)
    for k, (name, values) in enumerate(series.items()):
        xs = [g + (k - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, [v[0] for v in values], width, label=name)
        ax.scatter(xs, [v[1] for v in values], marker="_", s=160, color="black", zorder=3)
        for x, v in zip(xs, values):
            ax.annotate(f"{v[0]:.3g}", (x, v[0]), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel(unit)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7)


def plot_cpu(data: dict[str, Any]) -> None:
    """Write cpu-exchange.png: time per exchange vs tensor size, log-log, one line per case."""
    rows = data["cpuExchange"]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for case in dict.fromkeys(r["case"] for r in rows):
        pts = sorted((r["nbytes"], r["median_us"], r["min_us"]) for r in rows if r["case"] == case)
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], marker="o", label=case)
        ax.scatter(xs, [p[2] for p in pts], marker="_", s=120, color=ax.lines[-1].get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([p[0] for p in pts], [size_label(p[0]) for p in pts])
    ax.set_xlabel("tensor size")
    ax.set_ylabel("time per exchange (µs)")
    ax.set_title("CPU exchange Python ↔ JS: webdlpack vs Pyodide toJs copy vs getBuffer()\n" + subtitle(data), fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax.text(0.99, 0.02, cpu_ratios(rows), transform=ax.transAxes, ha="right", va="bottom", fontsize=7,
            bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.85, "edgecolor": "0.7"})
    save(fig, "cpu-exchange.png")


def cpu_ratios(rows: list[dict[str, Any]]) -> str:
    """The baseline ÷ webdlpack ratios of this run at the largest size, for the CPU figure."""
    largest = max(r["nbytes"] for r in rows)
    med = {r["case"]: r["median_us"] for r in rows if r["nbytes"] == largest}
    pairs = [
        ("py→js pyodide toJs (copy)", "py→js webdlpack.to_js", "toJs copy ÷ to_js"),
        ("py→js pyodide getBuffer", "py→js webdlpack.to_js", "getBuffer ÷ to_js"),
        ("js→py pyodide to_py (copy)", "js→py webdlpack.from_js", "to_py copy ÷ from_js"),
    ]
    lines = [f"{label}: {med[base] / med[ours]:.3g}×" for base, ours, label in pairs if base in med and ours in med]
    return f"ratios at {size_label(largest)} (same run, medians)\n" + "\n".join(lines)


def plot_gpu(data: dict[str, Any]) -> None:
    """Write gpu-handoff.png: hand-off vs readback + re-upload, per case and size (µs, log)."""
    groups, ours, base = [], [], []
    for n, row in data["gpuHandoff"]["sizes"].items():
        for key, label in (("ortToTfjs", "ORT → TF.js"), ("pythonToJs", "Python → JS")):
            x = row[key]
            groups.append(f"{label}\n{size_label(int(n))}\n{x['speedup']:.0f}× faster")
            ours.append((x["webdlpack"]["medianMs"] * 1000, x["webdlpack"]["minMs"] * 1000))
            base.append((x["readbackReupload"]["medianMs"] * 1000, x["readbackReupload"]["minMs"] * 1000))
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    grouped_bars(ax, groups, {"webdlpack hand-off (same GPUBuffer)": ours, "readback + re-upload": base}, "µs per hand-off")
    ax.set_title("GPU hand-off between frameworks on one WebGPU device\n" + subtitle(data), fontsize=8)
    save(fig, "gpu-handoff.png")


def plot_allocator(data: dict[str, Any]) -> None:
    """Write allocator.png: µs per alloc + free cycle per cache mode and raw createBuffer, at each size."""
    sizes = data["allocModes"]["sizes"]
    modes = ["raw", "disabled", "lazyRelease", "simple", "bucket"]
    series = {
        ("raw createBuffer + destroy" if m == "raw" else m): [(sizes[n][m]["medianUs"], sizes[n][m]["minUs"]) for n in sizes]
        for m in modes
    }
    groups = [f"{size_label(int(n))}\nbucket {sizes[n]['bucket']['speedupVsRaw']:.0f}× raw" for n in sizes]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    grouped_bars(ax, groups, series, "µs per alloc + free")
    ax.set_title("Allocator cache modes vs raw createBuffer + destroy\n" + subtitle(data), fontsize=8)
    save(fig, "allocator.png")


def save(fig: Any, name: str) -> None:
    """Save ``fig`` as bench/<name> and close it."""
    fig.tight_layout()
    fig.savefig(HERE / name, dpi=110)
    plt.close(fig)
    print(f"bench: wrote bench/{name}")


def main() -> None:
    """Write every plot from bench/results.json."""
    data = json.loads((HERE / "results.json").read_text())
    plot_cpu(data)
    plot_gpu(data)
    plot_allocator(data)


if __name__ == "__main__":
    main()
