"""Plot bench/results.json as PNGs next to it: median bars/lines with the min marked, log axes.

Writes ``cpu-exchange.png`` (exchange time vs size per direction, with the crossover), ``gpu-handoff.png``
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


#: Directions of the CPU exchange (``direction`` field of bench/cpu-exchange.js rows), in plot order.
DIRECTIONS = ["py→js", "js→py", "py→js pull", "js→py push", "c→js", "js→c", "c→py", "py→c"]


def crossover(points: list[tuple[int, float, float]]) -> int | None:
    """Smallest size from which webdlpack (2nd item) beats the copy (3rd) at every larger measured size."""
    found = None
    for nbytes, ours, copy in reversed(points):
        if copy < ours:
            break
        found = nbytes
    return found


def plot_cpu(data: dict[str, Any]) -> None:
    """Write cpu-exchange.png: one panel per direction, webdlpack vs the copy.

    µs against size, log-log, with the crossover marked.
    """
    rows = data["cpuExchange"]
    ffi = next((r["median_us"] for r in rows if r["direction"] == "ffi" and r["nbytes"] == 1024), None)
    directions = [d for d in DIRECTIONS if any(r["direction"] == d for r in rows)]
    cols = 4
    fig, axes = plt.subplots((len(directions) + cols - 1) // cols, cols, figsize=(13, 6.4), squeeze=False)
    for ax, direction in zip(axes.flat, directions):
        by_kind: dict[str, dict[int, dict[str, Any]]] = {}
        for r in rows:
            if r["direction"] == direction:
                by_kind.setdefault(r["kind"], {})[r["nbytes"]] = r
        for kind, style in (("webdlpack", "o-"), ("copy", "s--"), ("info", "^:")):
            pts = sorted(by_kind.get(kind, {}).items())
            if not pts:
                continue
            name = pts[0][1]["case"][len(direction) + 1 :]
            ax.plot([n for n, _ in pts], [r["median_us"] for _, r in pts], style, label=name, markersize=4)
        ours, copy = by_kind.get("webdlpack", {}), by_kind.get("copy", {})
        both = sorted((n, ours[n]["median_us"], copy[n]["median_us"]) for n in ours if n in copy)
        cross = crossover(both)
        if cross is not None:
            ax.axvline(cross, color="green", alpha=0.4)
        if ffi is not None and direction not in ("c→js", "js→c"):
            ax.axhline(ffi, color="0.5", lw=0.8, ls=":", label=f"one FFI call ({ffi:.2g} µs)")
        ratio1k = next((c / o for n, o, c in both if n == 1024), None)
        title = f"{direction}\ncrossover {size_label(cross) if cross is not None else 'none measured'}"
        if ratio1k is not None:
            title += f"; copy ÷ webdlpack at 1 KiB {ratio1k:.2f}×"
        ax.set_title(title, fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        sizes = sorted({n for k in by_kind.values() for n in k})
        ax.set_xticks(sizes, [size_label(n) for n in sizes], fontsize=6, rotation=45)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, loc="upper left")
    for ax in list(axes.flat)[len(directions) :]:
        ax.axis("off")
    fig.supylabel("µs per exchange (hand over + touch + release)", fontsize=8)
    fig.suptitle(
        "CPU exchange Python ↔ JS ↔ C: webdlpack vs a copy of the same bytes (green line: crossover)\n"
        + subtitle(data),
        fontsize=9,
    )
    save(fig, "cpu-exchange.png")


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
    grouped_bars(
        ax, groups, {"webdlpack hand-off (same GPUBuffer)": ours, "readback + re-upload": base}, "µs per hand-off"
    )
    ax.set_title("GPU hand-off between frameworks on one WebGPU device\n" + subtitle(data), fontsize=8)
    save(fig, "gpu-handoff.png")


def plot_allocator(data: dict[str, Any]) -> None:
    """Write allocator.png: µs per alloc + free cycle per cache mode and raw createBuffer, at each size."""
    sizes = data["allocModes"]["sizes"]
    modes = ["raw", "disabled", "lazyRelease", "simple", "bucket"]
    series = {
        ("raw createBuffer + destroy" if m == "raw" else m): [
            (sizes[n][m]["medianUs"], sizes[n][m]["minUs"]) for n in sizes
        ]
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
