import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import os
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    import marimo as mo
    import matplotlib.pyplot as plt
    import pandas as pd

    return Path, mo, os, pd, plt, shutil, subprocess, tempfile


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
    # The thundering herd

    An outage ends and 1,000 clients that were waiting for it all send their request in the same instant. The
    server (`scenarios/thundering-herd.toml`) has 10 workers, each taking 10 ms on average per request (so it
    serves about 1,000 requests per second), and a queue of 100 places. Everything beyond those 110 is answered
    503 at once, and the clients retry according to their backoff strategy.

    This notebook does not simulate anything itself: every control below becomes a `--set` option of the
    `retrylab run` command, and the charts and numbers are read from the `timeline.csv` and `summary.csv` that
    the command writes.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Why identical clients retry in synchronised waves

    The clients are identical: they start at the same moment, they are rejected in the same millisecond, and
    each one computes its next sleep from the same formula with the same inputs (how many times it has
    failed). A formula without randomness gives every one of them the same answer, so they all come back
    together, and a server that can take only 110 of them at a time rejects the rest again, together. The
    herd never breaks up by itself: each failure it meets is shared by the whole herd.

    With no backoff at all (`none`) a rejected client retries as soon as the answer reaches it, so the server
    sees a continuous storm of calls until the last client is served.
    """)
    return


@app.cell
def _(Path, mo, os, shutil, subprocess):
    def repo_root():
        """The repository root: the folder above notebooks/."""
        return Path(mo.notebook_dir()).resolve().parent

    def stop_plainly(message):
        """Ends the notebook with `message`: a red box in the browser; the message and exit status 1 in a script."""
        if mo.app_meta().mode == "script":
            raise SystemExit(f"thundering_herd.py: {message}")
        mo.stop(True, mo.callout(mo.md(message), kind="danger"))

    def find_retrylab():
        """RETRYLAB_BIN if set; else the release binary of this repo, built with cargo if it is missing."""
        override = os.environ.get("RETRYLAB_BIN")
        if override:
            path = Path(override)
            if not path.is_file():
                stop_plainly(f"RETRYLAB_BIN={override} is not a file: point it at a retrylab binary, or unset it.")
            return path
        root = repo_root()
        target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
        if not target.is_absolute():
            target = root / target
        binary = target / "release" / "retrylab"
        if binary.is_file():
            return binary
        if shutil.which("cargo") is None:
            stop_plainly(
                f"This notebook runs retrylab, and there is no `{binary}` and no `cargo` to build it. Install Rust "
                "1.91 or newer (https://rustup.rs), run `cargo build --release` in the repository, and open the "
                "notebook again; or set RETRYLAB_BIN=/path/to/retrylab."
            )
        print(f"{binary} not found: building it with `cargo build --release` (a few minutes the first time)")
        built = subprocess.run(["cargo", "build", "--release"], cwd=root)
        if built.returncode != 0 or not binary.is_file():
            stop_plainly(
                f"`cargo build --release` could not build `{binary}` (exit {built.returncode}); cargo's messages "
                "are in the terminal this notebook was started from."
            )
        return binary

    RETRYLAB = find_retrylab()
    SCENARIO = repo_root() / "scenarios" / "thundering-herd.toml"
    return RETRYLAB, SCENARIO


@app.cell
def _(mo):
    # Defaults: the committed scenario's values, except for the replicates (the scenario has 20; 3 keep a run
    # well under a second and the checks at the bottom still hold with a wide margin).
    DEFAULTS = {
        "clients": 1000,
        "strategies": ["none", "exponential", "full-jitter", "decorrelated-jitter"],
        "base_ms": 10,
        "cap_ms": 10_000,
        "replicates": 3,
    }
    STRATEGY_CHOICES = [
        "none",
        "constant",
        "linear",
        "exponential",
        "full-jitter",
        "equal-jitter",
        "decorrelated-jitter",
        "decorrelated-range-clamp",
        "polly-v2",
        "grpc-jitter",
    ]

    clients = mo.ui.slider(
        steps=[10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
        value=DEFAULTS["clients"],
        show_value=True,
        debounce=True,
        label="clients released at once",
    )
    strategies = mo.ui.multiselect(
        options=STRATEGY_CHOICES,
        value=DEFAULTS["strategies"],
        label="strategies (one panel each)",
    )
    base_ms = mo.ui.slider(
        steps=[1, 2, 5, 10, 20, 50, 100],
        value=DEFAULTS["base_ms"],
        show_value=True,
        debounce=True,
        label="base (ms)",
    )
    cap_ms = mo.ui.slider(
        steps=[100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 60_000],
        value=DEFAULTS["cap_ms"],
        show_value=True,
        debounce=True,
        label="cap (ms)",
    )
    replicates = mo.ui.slider(
        1, 20, 1, value=DEFAULTS["replicates"], show_value=True, debounce=True, label="replicates"
    )
    window_s = mo.ui.slider(
        steps=[0.5, 1, 2, 3, 5, 10, 30], value=3, show_value=True, label="timeline shown up to (s)"
    )
    same_scale = mo.ui.checkbox(value=True, label="one y scale for every panel")
    mo.vstack(
        [
            mo.hstack([clients, strategies]),
            mo.hstack([base_ms, cap_ms]),
            mo.hstack([replicates, window_s, same_scale]),
        ]
    )
    return DEFAULTS, base_ms, cap_ms, clients, replicates, same_scale, strategies, window_s


@app.cell
def _(
    RETRYLAB,
    SCENARIO,
    base_ms,
    cap_ms,
    clients,
    mo,
    pd,
    replicates,
    strategies,
    subprocess,
    tempfile,
):
    mo.stop(not strategies.value, mo.md("**Pick at least one strategy.**"))

    params = {
        "clients": clients.value,
        "strategies": list(strategies.value),
        "base_ms": base_ms.value,
        "cap_ms": cap_ms.value,
        "replicates": replicates.value,
    }
    _strategy_list = "[" + ", ".join(f'"{s}"' for s in params["strategies"]) + "]"
    with tempfile.TemporaryDirectory(prefix="retrylab-herd-") as _out:
        command = [
            str(RETRYLAB),
            "run",
            str(SCENARIO),
            "--out",
            _out,
            "--quiet",
            "--replicates",
            str(params["replicates"]),
            "--set",
            f"clients={params['clients']}",
            "--set",
            f"client.base={params['base_ms']}ms",
            "--set",
            f"client.cap={params['cap_ms']}ms",
            "--set",
            f"strategy={_strategy_list}",
        ]
        _done = subprocess.run(command, capture_output=True, text=True)
        if _done.returncode != 0:
            raise RuntimeError(f"retrylab failed (exit {_done.returncode}):\n{_done.stderr}")
        timeline = pd.read_csv(f"{_out}/timeline.csv")
        summary = pd.read_csv(f"{_out}/summary.csv")
    warnings = _done.stderr.strip()

    _shown = " ".join(
        ["retrylab", "run", "scenarios/thundering-herd.toml", "--out", "TMPDIR"]
        + [f"'{a}'" if "[" in a else a for a in command[5:]]
    )
    mo.vstack(
        [
            mo.md("The command this notebook just ran (`TMPDIR` is a temporary folder, deleted after reading):"),
            mo.md(f"```sh\n{_shown}\n```"),
            mo.md(f"**retrylab warned:** `{warnings}`") if warnings else mo.md(""),
        ]
    )
    return params, summary, timeline


@app.cell
def _(colour, params, plt, same_scale, timeline, window_s):
    def plot_timeline(timeline, strategies, until_ms, bucket_ms, sharey):
        """Calls reaching the server per time bucket, one panel per strategy, all on one y scale."""
        fig, axes = plt.subplots(
            len(strategies), 1, figsize=(9, 1.7 * len(strategies) + 0.6), sharex=True, sharey=sharey, squeeze=False
        )
        for ax, strategy in zip(axes[:, 0], strategies):
            rows = timeline[(timeline["strategy"] == strategy) & (timeline["bucket_start_ms"] < until_ms)]
            ax.bar(
                rows["bucket_start_ms"] / 1000,
                rows["calls"],
                width=bucket_ms / 1000,
                align="edge",
                color=colour(strategy),
            )
            ax.set_title(strategy, loc="left", fontsize=10)
            ax.set_ylabel("calls")
        axes[-1, 0].set_xlabel("time since the herd was released (s)")
        axes[-1, 0].set_xlim(0, until_ms / 1000)
        fig.suptitle(f"Calls per {bucket_ms:g} ms bucket, mean of {params['replicates']} runs", fontsize=11)
        fig.tight_layout()
        return fig

    _starts = sorted(timeline["bucket_start_ms"].unique())
    BUCKET_MS = _starts[1] - _starts[0] if len(_starts) > 1 else 10
    plot_timeline(timeline, params["strategies"], window_s.value * 1000, BUCKET_MS, same_scale.value)
    return


@app.cell
def _(params, summary):
    # The numbers behind the chart, from summary.csv (mean over the replicates). The retries' peak over their
    # mean per bucket, and their dispersion (variance over mean: about 1 for independent retries), measure the
    # waves: large when clients retry in lock-step.
    table = (
        summary.set_index("strategy")
        .loc[
            params["strategies"],
            [
                "calls_mean",
                "latency_p99_ms_mean",
                "completion_ms_mean",
                "retry_peak_to_mean_mean",
                "retry_dispersion_mean",
            ],
        ]
        .rename(
            columns={
                "calls_mean": "calls",
                "latency_p99_ms_mean": "p99 latency (ms)",
                "completion_ms_mean": "completion (ms)",
                "retry_peak_to_mean_mean": "retry peak / mean",
                "retry_dispersion_mean": "retry dispersion",
            }
        )
        .round(1)
    )
    table
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## Why exponential backoff alone keeps the waves

    Un-jittered `exponential` sleeps `min(cap, base·2^n)` after the n-th failure. Doubling the sleep makes each
    client come back less and less often, so the storm of `none` shrinks to a few thousand calls. But it does
    nothing to the synchronisation: the clients rejected in one wave have the same n, so they sleep the same time
    and form the next wave together. Each wave gets in only as many clients as the server has room for at that
    instant (what it has finished since the previous wave, at most its 10 workers plus 100 queue places); the rest
    sleep twice as long and come back as one block. Between the spikes the server runs out of work and idles, and
    the last clients wait through every doubled sleep: look at the p99 latency in the table.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## How jitter spreads them

    `full-jitter` sleeps a uniformly random time in `[0, min(cap, base·2^n)]`; `decorrelated-jitter` draws each
    sleep at random between `base` and three times the previous one. Clients that failed together now come back at
    different moments, and as the windows grow the same clients are spread over more and more time, until the rate
    at which they return is one the server can serve. The spikes turn into a falling, then flat, stream; the server
    stays busy instead of idling between waves, so everyone is served far sooner, and full jitter also makes
    fewer calls than un-jittered exponential.
    """)
    return


@app.cell(hide_code=True)
def _(mo):
    mo.md(r"""
    ## When jitter does not help

    - **Few clients.** If the whole herd fits in what the server can hold at once (10 workers + 100 queue
      places here), nobody is rejected and there is nothing to spread: set the clients slider to 100 and every
      strategy draws the same chart. With only a handful of rejected clients the waves are too small to matter.
    - **A server that is down for good.** Jitter only moves retries in time. If every attempt fails, each client
      still makes every attempt its policy allows; what bounds the damage is a limit on attempts, a deadline, a
      retry budget or a circuit breaker, not the shape of the sleep.
    - **Hard latency promises.** No strategy serves a herd faster than the server's capacity allows: 1,000
      requests at about 1,000 per second take about a second whatever the clients do (`none` gets there, at the
      price of some 200 calls per request). Jitter also makes each client's wait random: a sleep drawn from
      `[0, window]` can use up most of a deadline. If a promise must hold for every request, it needs capacity,
      admission control or load shedding; backoff can only make the queue fairer and cheaper.
    """)
    return


@app.cell
def _(DEFAULTS, base_ms, mo, params, summary, timeline):
    # Claims about the data above, each computed from this run's CSV files. At the default settings they must
    # hold (a headless run fails otherwise); at other settings the table shows which of them still do.
    def herd_claims(timeline, summary, base_ms):
        s = summary.set_index("strategy")
        claims = []
        if {"exponential", "full-jitter"} <= set(s.index):
            # Once the first retry rounds have passed (10 x base), exponential's busiest bucket holds several
            # times the calls of full jitter's busiest bucket: its waves do not flatten out.
            late = timeline[timeline["bucket_start_ms"] >= 10 * base_ms].groupby("strategy")["calls"].max()
            if late["full-jitter"] > 0:
                ratio = late["exponential"] / late["full-jitter"]
            else:  # no calls at all to compare (nobody was rejected) counts as not holding
                ratio = float("inf") if late["exponential"] > 0 else float("nan")
            claims.append(
                (
                    f"peak calls per bucket from {10 * base_ms} ms on: exponential >= 3 x full-jitter",
                    f"{late['exponential']:.0f} vs {late['full-jitter']:.0f} ({ratio:.1f} x)",
                    ratio >= 3,
                )
            )
            # The unlucky wait far longer behind un-jittered waves: p99 latency, beyond both 95% CIs.
            exp_lo = s.at["exponential", "latency_p99_ms_mean"] - s.at["exponential", "latency_p99_ms_ci95"]
            fj_hi = s.at["full-jitter", "latency_p99_ms_mean"] + s.at["full-jitter", "latency_p99_ms_ci95"]
            claims.append(
                (
                    "p99 latency: exponential >= 5 x full-jitter (CI-adjusted)",
                    f"{exp_lo:.0f} ms vs {fj_hi:.0f} ms ({exp_lo / fj_hi:.1f} x)",
                    exp_lo >= 5 * fj_hi,
                )
            )
        if "none" in s.index:
            # Without backoff the herd is a storm: ten times the calls of any strategy that backs off.
            none_lo = s.at["none", "calls_mean"] - s.at["none", "calls_ci95"]
            for other in [x for x in s.index if x != "none"]:
                other_hi = s.at[other, "calls_mean"] + s.at[other, "calls_ci95"]
                claims.append(
                    (
                        f"calls: none >= 10 x {other} (CI-adjusted)",
                        f"{none_lo:.0f} vs {other_hi:.0f} ({none_lo / other_hi:.1f} x)",
                        none_lo >= 10 * other_hi,
                    )
                )
        return claims

    claims = herd_claims(timeline, summary, base_ms.value)
    if params == DEFAULTS:
        assert claims, "the default run should compare exponential, full-jitter and none"
        for _claim, _numbers, _holds in claims:
            assert _holds, f"claim failed at the default settings: {_claim}: {_numbers}"
    mo.vstack(
        [
            mo.md(
                "### Checks\n"
                + (
                    "At the default settings every claim below is asserted: a headless run fails if one is false."
                    if params == DEFAULTS
                    else "Settings changed from the defaults: the claims are shown, not asserted."
                )
            ),
            mo.ui.table(
                [{"claim": c, "numbers": n, "holds": "yes" if h else "no"} for c, n, h in claims],
                selection=None,
            ),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
