import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import math
    from pathlib import Path

    import marimo as mo
    import matplotlib.pyplot as plt
    import pandas as pd

    return Path, math, mo, pd, plt


@app.cell
def _(Path, mo):
    import json

    _table = json.loads((Path(mo.notebook_dir()).resolve().parent / "assets" / "colours.json").read_text())

    def colour(name):
        """The colour retrylab's charts and report.html give series `name` (assets/colours.json): its own, else
        the fallback colour its FNV-1a hash (64 bits) picks."""
        if name in _table["named"]:
            return _table["named"][name]
        digest = 0xCBF29CE484222325
        for byte in name.encode():
            digest = ((digest ^ byte) * 0x100000001B3) % 2**64
        return _table["fallback"][digest % len(_table["fallback"])]

    return (colour,)


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    # Exponential backoff and jitter: the AWS 2015 study

    N clients race to update one row with optimistic concurrency: each reads the row's version, then writes
    with it, and the write succeeds only if nobody wrote in between. A client whose write fails sleeps
    `backoff(n)` and tries again. Every network hop takes |Normal(10 ms, 2 ms)|; base 5 ms, cap 2 s; 10 to 190
    clients, 100 runs per point (`scenarios/aws-jitter-2015.toml`).

    This notebook runs nothing: it draws the committed output of
    `cargo run --release -- run scenarios/aws-jitter-2015.toml`, the file `results/aws-jitter-2015/summary.csv`
    (one row per clients × strategy: the mean of each metric, its standard deviation and the half-width of its
    95% confidence interval). Regenerate that folder with the command above and this notebook redraws from it.
    """)
    return


@app.cell
def _(Path, mo, pd):
    SUMMARY = Path(mo.notebook_dir()).resolve().parent / "results" / "aws-jitter-2015" / "summary.csv"
    summary = pd.read_csv(SUMMARY)
    STRATEGIES = list(dict.fromkeys(summary["strategy"]))  # in the scenario's order
    mo.md(
        f"Read `{SUMMARY.relative_to(SUMMARY.parents[2])}`: {len(summary)} points, "
        f"clients {summary['clients'].min()}–{summary['clients'].max()}, strategies {', '.join(STRATEGIES)}, "
        f"{summary['replicates'].min()} replicates per point."
    )
    return STRATEGIES, summary


@app.cell
def _(STRATEGIES, colour, plt):
    def plot_metric(summary, metric, ylabel, title):
        """One line per strategy against clients, with its 95% confidence band."""
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for strategy in STRATEGIES:
            rows = summary[summary["strategy"] == strategy].sort_values("clients")
            mean, ci = rows[f"{metric}_mean"], rows[f"{metric}_ci95"]
            (line,) = ax.plot(rows["clients"], mean, marker=".", label=strategy, color=colour(strategy))
            ax.fill_between(rows["clients"], mean - ci, mean + ci, color=line.get_color(), alpha=0.25, linewidth=0)
        ax.set_xlabel("clients")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        return fig

    return (plot_metric,)


@app.cell(hide_code=True)
def _(mo, summary):
    _at100 = summary[summary["clients"] == 100].set_index("strategy")["calls_mean"]
    mo.md(f"""
    ## Work: WRITE calls

    Without backoff (`none`) every client collides in every round, so the work grows roughly with the square of
    the number of clients. Un-jittered `exponential` saves little of it (at 100 clients {_at100["exponential"]:,.0f}
    calls against {_at100["none"]:,.0f}): identical clients sleep identical times and collide again when they
    wake. The three jittered strategies spread the clients out and need far fewer calls (full jitter:
    {_at100["full-jitter"]:,.0f}). The 95% confidence bands are drawn, but over 100 runs most are thinner than the
    lines.
    """)
    return


@app.cell
def _(plot_metric, summary):
    plot_metric(summary, "calls", "WRITE calls (mean, 95% CI band)", "Work: WRITE calls by number of clients")
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Time: completion

    Completion is the time of the last event of a run. Un-jittered exponential is by far the slowest: its clients
    keep colliding, so the unlucky ones go on doubling their sleeps up to the 2 s cap. `none` finishes first, at
    the price of the most work. Among the jittered strategies, equal jitter (which always keeps half of the
    exponential sleep) takes longer than full jitter.
    """)
    return


@app.cell
def _(mo):
    log_scale = mo.ui.checkbox(value=False, label="log scale (to compare the jittered strategies)")
    log_scale
    return (log_scale,)


@app.cell
def _(log_scale, plot_metric, summary):
    _fig = plot_metric(
        summary, "completion_ms", "completion (ms, mean, 95% CI band)", "Time: completion by number of clients"
    )
    if log_scale.value:
        _fig.axes[0].set_yscale("log")
    _fig
    return


@app.cell
def _(math, mo, summary):
    # Claims about the data above, computed from summary.csv. Each comparison must hold beyond both sides' 95%
    # confidence intervals; a headless run (scripts/run-notebooks) fails if one is false.
    def value(clients, strategy, metric, side=0):
        """mean + side x ci95 of a metric at one point (side -1: low end of the CI, +1: high end)."""
        row = summary[(summary["clients"] == clients) & (summary["strategy"] == strategy)]
        assert len(row) == 1, f"no single row for clients={clients}, strategy={strategy}"
        row = row.iloc[0]
        return row[f"{metric}_mean"] + side * row[f"{metric}_ci95"]

    checks = []

    def check(claim, numbers, holds):
        checks.append({"claim": claim, "numbers": numbers, "holds": "yes" if holds else "no"})
        assert holds, f"{claim}: {numbers}"

    # 1. Jitter cuts the work by more than half: full jitter against un-jittered exponential at 100 clients.
    _fj, _ex = value(100, "full-jitter", "calls", +1), value(100, "exponential", "calls", -1)
    check(
        "at 100 clients, full jitter makes less than half the calls of exponential",
        f"{_fj:.0f} < {_ex:.0f} / 2 = {_ex / 2:.0f} (ratio {_fj / _ex:.2f})",
        _fj < _ex / 2,
    )

    # 2. Un-jittered exponential is the slowest strategy at every number of clients.
    _worst = []
    for _n in sorted(summary["clients"].unique()):
        _others = [s for s in summary["strategy"].unique() if s != "exponential"]
        _ex_lo = value(_n, "exponential", "completion_ms", -1)
        _other_hi = max(value(_n, s, "completion_ms", +1) for s in _others)
        _worst.append((_ex_lo / _other_hi, _n, _ex_lo, _other_hi))
    _ratio, _n, _ex_lo, _other_hi = min(_worst)
    check(
        "exponential has the longest completion time at every number of clients",
        f"smallest margin at {_n} clients: {_ex_lo:.0f} ms vs next slowest {_other_hi:.0f} ms ({_ratio:.1f} x)",
        _ratio > 1,
    )

    # 3. Full and equal jitter do about the same work (within 5%) from 100 clients up.
    _gaps = []
    for _n in sorted(summary.loc[summary["clients"] >= 100, "clients"].unique()):
        _f, _e = value(_n, "full-jitter", "calls"), value(_n, "equal-jitter", "calls")
        _gaps.append((abs(_f - _e) / _f, _n))
    _gap, _n = max(_gaps)
    check(
        "from 100 clients up, full and equal jitter make calls within 5% of each other",
        f"largest gap {_gap:.1%} at {_n} clients",
        _gap < 0.05,
    )

    # 4. Equal jitter takes longer than full jitter (at 100 clients).
    _eq, _fj = value(100, "equal-jitter", "completion_ms", -1), value(100, "full-jitter", "completion_ms", +1)
    check(
        "at 100 clients, equal jitter takes longer to complete than full jitter",
        f"{_eq:.0f} ms > {_fj:.0f} ms",
        _eq > _fj,
    )

    # 5. Without backoff the work grows about as N²: the log-log slope of calls between 50 and 190 clients.
    _slope = math.log(value(190, "none", "calls") / value(50, "none", "calls")) / math.log(190 / 50)
    check(
        "without backoff, calls grow about as clients² (log-log slope 50→190 clients between 1.6 and 2.2)",
        f"slope {_slope:.2f}",
        1.6 <= _slope <= 2.2,
    )

    mo.vstack([mo.md("## Checks"), mo.ui.table(checks, selection=None)])
    return


if __name__ == "__main__":
    app.run()
