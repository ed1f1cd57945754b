"""Plot one GPU transfer run (bench/results-gpu-*.json) as a PNG next to it.

Four panels, GB/s of the median against size (log-log): upload and readback paths, cold (first call on a
fresh device) and warm. The hand-written anchors are dashed, webdlpack's paths solid. Run by ``make bench-gpu`` /
``make bench`` with the project's .venv:
``python bench/gpu/plot.py bench/results-gpu-swiftshader.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MIB = 1024 * 1024
PANELS = (
    ("upload", "cold", "CPU → GPU, first call"),
    ("readback", "cold", "GPU → CPU, first call"),
    ("upload", "warm", "CPU → GPU, warm"),
    ("readback", "warm", "GPU → CPU, warm"),
)


def size_label(nbytes: int) -> str:
    """Return ``"1 KiB"`` / ``"16 MiB"`` for a byte count."""
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // 1024} KiB"


def panel(ax: Any, rows: list[dict[str, Any]], direction: str, phase: str, title: str) -> None:
    """Draw one direction's rows of one phase: one line per path, GB/s of the median per size."""
    mine = [r for r in rows if r.get("direction") == direction and r.get("phase") == phase]
    names = list(dict.fromkeys(r["name"] for r in mine))
    for name in names:
        pts = sorted((r["nbytes"], r["gbps"]) for r in mine if r["name"] == name and r.get("gbps"))
        if not pts:
            continue
        raw = "(raw)" in name
        ax.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            marker="o",
            markersize=3,
            linestyle="--" if raw else "-",
            linewidth=1 if raw else 2,
            label=name,
        )
    sizes = sorted({r["nbytes"] for r in rows if r["nbytes"] > 0})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes, [size_label(n) for n in sizes], fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel("GB/s (median)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=5.5, loc="upper left")


def main(path: str) -> None:
    """Write ``<path without .json>.png``."""
    data = json.loads(Path(path).read_text())
    a = data["adapter"]
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for ax, (direction, phase, title) in zip(axes.flat, PANELS):
        panel(ax, data["rows"], direction, phase, title)
    subtitle = (
        f"{data['runtime']} — adapter {a.get('vendor')} {a.get('device') or a.get('architecture')}; "
        "dashed: hand-written WebGPU, solid: webdlpack"
    )
    fig.suptitle(f"GPU transfers, {data['date'][:10]}\n{subtitle}", fontsize=9)
    fig.tight_layout()
    out = Path(path).with_suffix(".png")
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(f"bench: wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1])
