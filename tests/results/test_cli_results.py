"""`gov results compare` on real launches: a PR that lands on main, then a PR that bumps
the image of the same config; its figures beside main's, in every format."""

from __future__ import annotations

import html.parser
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import PROJECT, Repo, run_gov

SCRIPT = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi300x.sh"
# Figures that depend only on the image, so the comparison is exact: the new
# image is 20 % slower per GPU and 25 % slower per token.
BENCH = """#!/bin/sh
set -eu
case "$IMAGE" in *v0.11.3*) tput=800; tpot=12.5 ;; *) tput=1000; tpot=10 ;; esac
if [ "${EVAL_ONLY:-false}" = true ]; then
  printf '{"results": {"gsm8k": {"exact_match,strict-match": 0.9}}}\\n' \\
    > "$RESULT_DIR/results_$RESULT_FILENAME.json"
  exit 0
fi
printf '{"total_token_throughput": %s, "median_ttft_ms": 100, "median_tpot_ms": %s}\\n' \\
  "$(( tput * GPU_COUNT * CONC ))" "$tpot" > "$RESULT_DIR/$RESULT_FILENAME.json"
"""
ENTRY = """
- config-keys:
    - dsv4-fp8-mi300x-vllm
  description:
    - "{what}"
  pr-link: XXX
"""


def launch(repo: Repo, pr: int) -> None:
    plan = run_gov("plan", "--base-ref", "main", "--format", "json", cwd=repo.path)
    assert plan.exit_code == 0, plan.stderr
    (repo.path.parent / f"plan{pr}.json").write_text(plan.stdout)
    done = run_gov(
        "launch",
        "--plan",
        str(repo.path.parent / f"plan{pr}.json"),
        "--pr",
        str(pr),
        "--parallel",
        "2",
        cwd=repo.path,
    )
    assert done.exit_code == 0, done.stdout + done.stderr


def append(repo: Repo, what: str) -> None:
    log = repo.path / "perf-changelog.yaml"
    log.write_bytes(log.read_bytes() + ENTRY.format(what=what).encode())


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    repo = Repo(tmp_path_factory.mktemp("results") / "repo")
    repo.configure_identity()
    shutil.copyfile(PROJECT / "perf-changelog.yaml", repo.path / "perf-changelog.yaml")
    shutil.copytree(PROJECT / "configs", repo.path / "configs")
    repo.write(SCRIPT, BENCH).chmod(0o755)
    repo.commit("example")
    repo.git("checkout", "-q", "-b", "pr6")
    append(repo, "Measure MI300X DSv4")
    repo.commit("measure")
    launch(repo, 6)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--squash", "pr6")
    repo.git("commit", "-q", "-m", "Measure MI300X DSv4 (#6)")
    repo.git("checkout", "-q", "-b", "pr7")
    config = repo.path / "configs/amd-master.yaml"
    head, key, block = config.read_text().partition("\ndsv4-fp8-mi300x-vllm:\n")
    config.write_text(head + key + block.replace("v0.11.2", "v0.11.3", 1))
    append(repo, "Move MI300X DSv4 to vLLM v0.11.3")
    repo.commit("bump")
    launch(repo, 7)
    return repo


def test_each_point_beside_main_with_the_change_and_the_flag(repo: Repo) -> None:
    done = run_gov("results", "compare", "--pr", "7", "--format", "json", cwd=repo.path)
    assert done.exit_code == 0, done.stderr
    out = json.loads(done.stdout)
    throughput = [c for c in out["comparisons"] if c["pr"]["figures"]["kind"] == "throughput"]
    assert len(throughput) >= 5
    for item in throughput:
        assert item["main"]["pr"] == 6 and item["pr"]["pr"] == 7
        changes = {c["metric"]: c for c in item["changes"]}
        assert changes["tput_per_gpu"]["relative"] == pytest.approx(-0.2)
        assert changes["tput_per_gpu"]["flag"] == "worse"
        assert changes["tpot_ms"]["relative"] == pytest.approx(0.25)
        assert changes["ttft_ms"]["flag"] == ""
        assert item["pr"]["figures"]["tput_per_gpu"] == 800 * int(item["conc"])
    assert out["flagged_worse"] == len(throughput)
    evals = [c for c in out["comparisons"] if c["pr"]["figures"]["kind"] == "eval"]
    assert evals and all(c["changes"][0]["relative"] == 0 for c in evals)
    loose = run_gov(
        "results", "compare", "--pr", "7", "--format", "json", "--threshold", "30", cwd=repo.path
    )
    assert json.loads(loose.stdout)["flagged_worse"] == 0


def test_markdown_for_the_pr_comment(repo: Repo) -> None:
    done = run_gov("results", "compare", "--pr", "7", "--format", "markdown", cwd=repo.path)
    assert done.exit_code == 0
    lines = done.stdout.splitlines()
    assert lines[0].startswith("### Results: PR #7 compared with main")
    header = next(line for line in lines if line.startswith("| config |"))
    assert "tput/GPU (tok/s)" in header and "median interactivity" in header
    assert any("(-20.0% ▼)" in line for line in lines)


def test_no_ledger_is_a_usage_error(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "empty")
    repo.commit("empty", **{"perf-changelog.yaml": ""})
    done = run_gov("results", "compare", "--pr", "1", cwd=repo.path)
    assert done.exit_code == 2 and "no run ledger" in done.stderr


class _Page(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.divs: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("meta", "br", "link"):
            self.stack.append(tag)
        if tag == "div" and dict(attrs).get("id"):
            self.divs.append(str(dict(attrs)["id"]))
        if tag == "script":
            self._attrs, self._text = dict(attrs), ""

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "script":
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()
        if tag == "script":
            self.scripts.append((self._attrs, self._text))


def test_html_is_a_self_contained_page_with_the_plot_data(repo: Repo, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    done = run_gov(
        "results", "compare", "--pr", "7", "--format", "html", "--output", str(page), cwd=repo.path
    )
    assert done.exit_code == 0, done.stderr
    text = page.read_text()
    parser = _Page()
    parser.feed(text)
    parser.close()
    assert parser.stack == []  # every element closed
    assert not re.search(r"<script[^>]+src=", text)  # nothing fetched: plotly.js is inline
    assert "plot-0" in parser.divs
    data = next(t for a, t in parser.scripts if a.get("id") == "gov-results-data")
    assert json.loads(data)["pr"] == 7
    calls = [t for _a, t in parser.scripts if "Plotly.newPlot" in t and len(t) < 100_000]
    assert calls, "no chart"
    start = calls[0].index("Plotly.newPlot(")
    args = calls[0][start + len("Plotly.newPlot(") :]
    _div, rest = args.split(",", 1)
    traces, _ = json.JSONDecoder().raw_decode(rest.strip())
    names = [t["name"] for t in traces]
    assert names[0].startswith("main") and names[1] == "PR #7"
    main, pr = traces
    assert [round(y / x, 6) for x, y in zip(pr["x"], pr["y"], strict=True)] == [
        round(800 * c / 80, 6) for c in _concs(pr)
    ]
    assert all(x == pytest.approx(100.0) for x in main["x"])  # 1000 / 10 ms
    _browser(page)


def _concs(trace: dict) -> list[int]:
    return [int(label.split()[1]) for label in trace["text"]]


def _browser(page: Path) -> None:
    """Open the page in a real headless browser when one is installed."""
    browser = next(
        (b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None
    )
    if browser is None:
        pytest.skip("no headless browser (chromium) installed: the page was validated as HTML")
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert 'class="main-svg"' in done.stdout  # plotly drew the chart


def test_the_threshold_setting(repo: Repo) -> None:
    env = {"GOV_RESULTS_THRESHOLD": "30"}
    done = run_gov("results", "compare", "--pr", "7", "--format", "json", cwd=repo.path, env=env)
    assert json.loads(done.stdout)["threshold_percent"] == 30.0
    bad = run_gov(
        "results", "compare", "--pr", "7", cwd=repo.path, env={"GOV_RESULTS_THRESHOLD": "lots"}
    )
    assert bad.exit_code == 2 and "percentage" in bad.stderr
