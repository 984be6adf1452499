# Two commands on a fresh machine: `make run` and `make test` (see README).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test image-test bench bench-scale bench-scale-adapters bench-sequential bench-advice bench-coverage bench-terminal bench-shape mutate clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.run-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	@touch $@

# The CLI with its optional pyarrow, which big CSV files are read with (bench-scale measures it).
$(VENV)/.arrow-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[arrow]'
	@touch $@ $(VENV)/.run-installed

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@ $(VENV)/.run-installed

# The main job on the bundled examples: one suite passes its gates, one fails them, and one is
# too small for its gate to be decided yet (inconclusive, exit code 3).
run: $(VENV)/.run-installed
	@echo "== examples/passing: expect PASS (exit 0) =="
	@cd examples/passing && ../../$(BIN)/eval-gate check results.json --json ../../out/passing.json; \
	  code=$$?; echo "exit code $$code"; test $$code -eq 0
	@echo
	@echo "== examples/failing: expect FAIL (exit 1) =="
	@cd examples/failing && ../../$(BIN)/eval-gate check results.jsonl --json ../../out/failing.json; \
	  code=$$?; echo "exit code $$code"; test $$code -eq 1
	@echo
	@echo "== examples/undecided: expect INCONCLUSIVE (exit 3) =="
	@cd examples/undecided && ../../$(BIN)/eval-gate check results.jsonl --json ../../out/undecided.json; \
	  code=$$?; echo "exit code $$code"; test $$code -eq 3
	@echo
	@echo "All three verdicts as expected. JSON reports: out/passing.json, out/failing.json, out/undecided.json"
	@echo
	@echo "eval-gate is installed in $(VENV)/, not on your PATH: run $(BIN)/eval-gate --help,"
	@echo "or 'source $(BIN)/activate' first (README.md, Install)."

test: $(VENV)/.test-installed
	$(BIN)/python -m pytest -n auto --maxprocesses=4
	$(BIN)/ruff check .
	$(BIN)/mypy

# The action's real image built with Podman on a local Debian base and run as GitHub's runner
# runs it, against a fake GitHub API on loopback (needs root; see docs/action.md).
image-test: $(VENV)/.test-installed
	IMAGE_TEST_PYTHON=$(BIN)/python bash tests/image/run.sh

bench: $(VENV)/.test-installed
	$(BIN)/python bench/metrics.py

# Every format: eval-gate's own and the generic ones, then each tool's (the adapters), the
# second also when the first missed a goal (exit 1); the target fails if either did.
bench-scale: $(VENV)/.arrow-installed
	$(BIN)/python bench/scale.py --linearity; first=$$?; \
	  $(BIN)/python bench/scale_adapters.py --linearity && exit $$first

bench-scale-adapters: $(VENV)/.run-installed
	$(BIN)/python bench/scale_adapters.py --linearity

# Sequential (check --sequential) against a fixed design and naive re-checking: error rates
# and trials spent for a few truths.
bench-sequential: $(VENV)/.run-installed
	$(BIN)/python bench/sequential.py

# Whether the advice for an inconclusive gate (and plan --pilot) decides the share it
# promises, against known truths: predictive against the old plug-in (docs/plan.md).
bench-advice: $(VENV)/.run-installed
	$(BIN)/python bench/advice_calibration.py

# What the terminal view adds to a check: our renderer against rich (when installed).
bench-terminal: $(VENV)/.test-installed
	$(BIN)/python bench/terminal.py

# Exact coverage of every interval method (the table in docs/metrics.md), the default's
# coverage-floor weights and its check at n = 3..1000, speed; then the suite interval's
# simulated coverage grid.
bench-coverage: $(VENV)/.test-installed
	$(BIN)/python bench/coverage.py --floor --all-n --speed
	$(BIN)/python bench/suite_coverage.py --method mid-p --method wilson

# The half-width's single peak, which the per-stimulus half-width advice rests on, at every
# k up to the largest it is used at (the test suite checks a sample past k = 100).
bench-shape: $(VENV)/.test-installed
	$(BIN)/python bench/half_width_shape.py

# Mutated inputs of every format through check, plan and validate (tests/hostile/mutate.py),
# each again through the readers' small blocks: an internal error, escaped exception, run
# over 10 s or a difference between the two readings is kept in mutations/; then the
# action's dry run, where the token showing anywhere is a finding too; then the action
# publishing to a fake GitHub with API faults (about 12 min on 2 cores).
mutate: $(VENV)/.test-installed
	$(BIN)/python -m tests.hostile.mutate --differential --seed $${SEED:-1} --runs $${RUNS:-3000}
	$(BIN)/python -m tests.hostile.mutate --action --seed $${SEED:-1} --runs $${RUNS:-3000}
	$(BIN)/python -m tests.hostile.mutate --publish --seed $${SEED:-1} --runs $${RUNS:-3000}

clean:
	rm -rf $(VENV) out build *.egg-info .pytest_cache .mypy_cache .ruff_cache
