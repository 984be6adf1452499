"""examples/workflows/adaptive.yml's loop, run for real: its shell script, the installed
eval-gate CLI and a fake harness that appends trials of a simulated agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

HARNESS = r'''#!/usr/bin/env python3
"""A fake eval harness: --trials N --out DIR [--only FILE] [--first-trial T]."""
import argparse, json, os, random
parser = argparse.ArgumentParser()
parser.add_argument("--trials", type=int)
parser.add_argument("--out")
parser.add_argument("--only")
parser.add_argument("--first-trial", type=int, default=0)
args = parser.parse_args()
rates = json.loads(os.environ["AGENT_RATES"])
names = sorted(rates)
if args.only:
    names = [line.strip() for line in open(args.only) if line.strip()]
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, f"batch-{args.first_trial:03d}.jsonl"), "w") as out:
    for name in names:
        for trial in range(args.first_trial, args.first_trial + args.trials):
            rng = random.Random(f"{name}/{trial}")
            record = {"suite": "s", "stimulus": name, "trial": trial,
                      "passed": rng.random() < rates[name]}
            out.write(json.dumps(record) + "\n")
with open("batches.log", "a") as log:
    log.write(f"{args.first_trial} {len(names)}\n")
'''


def loop_script() -> str:
    workflow = yaml.safe_load((ROOT / "examples" / "workflows" / "adaptive.yml").read_text())
    steps = workflow["jobs"]["gate"]["steps"]
    (step,) = [s for s in steps if s.get("name") == "Run trials until the gate decides"]
    return str(step["run"])


def run_loop(tmp_path: Path, rates: dict[str, float], config: str) -> tuple[int, list[str]]:
    (tmp_path / "scripts").mkdir()
    harness = tmp_path / "scripts" / "run-evals.sh"
    harness.write_text(HARNESS, encoding="utf-8")
    harness.chmod(0o755)
    (tmp_path / ".eval-gate.yml").write_text(config, encoding="utf-8")
    workflow = yaml.safe_load((ROOT / "examples" / "workflows" / "adaptive.yml").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({k: str(v) for k, v in workflow["jobs"]["gate"]["env"].items()})
    env["AGENT_RATES"] = json.dumps(rates)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    result = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", loop_script()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.returncode, (tmp_path / "batches.log").read_text().splitlines()


@pytest.mark.skipif(not Path("/usr/bin/jq").exists(), reason="the workflow's loop uses jq")
def test_a_reliable_agent_stops_long_before_the_budget(tmp_path: Path) -> None:
    rates = {f"case-{i:02d}": 0.99 for i in range(12)}
    config = "gates:\n  pass_rate: {min: 0.7, bound: interval}\n"
    _, batches = run_loop(tmp_path, rates, config)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["verdict"] == "pass" and report["sequential"] is True
    assert len(batches) <= 3  # 3 trials, then a batch or two: far below the budget of 30
    assert report["suite"]["trials"] < 12 * 30


@pytest.mark.skipif(not Path("/usr/bin/jq").exists(), reason="the workflow's loop uses jq")
def test_only_undecided_stimuli_are_re_run(tmp_path: Path) -> None:
    """Per-stimulus gate: the clear stimuli decide early, the borderline one keeps running."""
    rates = {"clear-a": 1.0, "clear-b": 1.0, "close": 0.75}
    config = "gates:\n  pass_rate: {min: 0.5, bound: interval, scope: stimuli}\n"
    _, batches = run_loop(tmp_path, rates, config)
    counts = [int(line.split()[1]) for line in batches]
    # every stimulus at first; once the clear ones are decided (a stimulus that always
    # passes needs 9 trials to show p ≥ 0.5 at every look), only the borderline one
    assert counts[0] == 3 and counts[-1] == 1 and counts == sorted(counts, reverse=True)
    report = json.loads((tmp_path / "report.json").read_text())
    trials = {s["name"]: s["trials"] for s in report["stimuli"]}
    assert trials["close"] > trials["clear-a"]
