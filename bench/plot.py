"""Plot bench/results.json as PNGs next to it (log axes, median with min)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).parent


def main() -> None:
    """Write bench/cpu-exchange.png from bench/results.json."""
    data = json.loads((HERE / "results.json").read_text())
    rows = data["cpuExchange"]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for case in dict.fromkeys(r["case"] for r in rows):
        pts = sorted((r["nbytes"], r["median_us"], r["min_us"]) for r in rows if r["case"] == case)
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], marker="o", label=f"{case} (median)")
        ax.scatter(xs, [p[2] for p in pts], marker="_", s=120, color=ax.lines[-1].get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("tensor size (bytes)")
    ax.set_ylabel("time per exchange (µs)")
    ax.set_title(f"CPU exchange Python ↔ JS — {data['browser']}, {data['machine']['cpus']} cores", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(HERE / "cpu-exchange.png", dpi=110)
    print(f"bench: wrote {HERE / 'cpu-exchange.png'}")


if __name__ == "__main__":
    main()
