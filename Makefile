# make demo: run the hybrid example, then show what meshify writes for it.
# make test: the test suite on 8 simulated CPU devices.
# make bench: meshify vs XLA's partitioner vs hand-written shard_map -> benchmarks/results/
#             (make bench BENCH_ARGS=--quick for small sizes).
# make fuzz: N random annotated programs (default 1000) converted, run and compared with .reference;
#            prints the counts, saves failing programs (shrunk) to tests/regressions/pending/.
#            make fuzz N=5000 SEED=1 FUZZ_ARGS="--jobs 2 --minutes 15"

PYTHON ?= python3
N ?= 1000
SEED ?= 0
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv demo test soundness bench fuzz

venv: $(VENV)/.stamp

# Re-installs only when pyproject.toml changes.
$(VENV)/.stamp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -e '.[test]'
	touch $@

demo: venv
	$(BIN)/python examples/hybrid.py
	$(BIN)/meshify diff examples/hybrid.py

test: venv
	$(BIN)/python -m pytest -q -n 2

# Every soundness case on both paths, none sampled out (about 20 minutes on 2 cores): run it each working
# session, as the sample of slow tests `make test` runs moves day by day and can hide a broken case for days.
soundness: venv
	MESHIFY_SLOW=1 $(BIN)/python -m pytest -q -n 2 tests/test_soundness.py

$(VENV)/.bench-stamp: $(VENV)/.stamp
	$(BIN)/pip install -e '.[test,bench]'
	touch $@

bench: $(VENV)/.bench-stamp
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

fuzz: venv
	$(BIN)/python tests/fuzz/run.py --n $(N) --seed $(SEED) $(FUZZ_ARGS)
