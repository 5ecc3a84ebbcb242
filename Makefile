# The two commands (see README): `make demo` and `make test`.  Each installs what it needs.
SHELL := /bin/bash
.DEFAULT_GOAL := help
RUN := scripts/with-emulators.sh
PYTEST_ARGS ?=
# make test runs the emulator tests and the others as two pytest processes at once (scripts/run_suite.py);
# PYTEST_WORKERS=1 runs them in one
PYTEST_WORKERS ?= 2
BENCH_ARGS ?=
CODE := functions tools dashboard tests bench demo scripts eval
EVAL_ARGS ?=
EXTRACTOR ?=
SPLIT ?= validation
# SPLIT=ask: the intent router of Ask on the own-words sets (seat_ask); any other split: the reader (seat_run)
SEAT_TOOL = factor_journal_tools.$(if $(filter ask,$(SPLIT)),seat_ask,seat_run)

.PHONY: help setup test test-fast demo bench eval seat-requests seat-replay seat-check train-extractor catalog-check \
	screen-check lint format emulators deploy-dashboard

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup: ## Install Python environments, firebase-tools and the Java 21 runtime
	@bash -c 'source scripts/toolchain.sh && echo "toolchain ready: $$(java -version 2>&1 | head -n1)"'

# Under `make test` and `make bench` the Functions emulator's worker takes a turn no delivery claimed as lost after
# FJ_UNCLAIMED_AFTER_SECONDS=5 (deployed: 120), so the self-healing test and bench see in seconds what the deployed
# sweep does in minutes; the tests' own process keeps the product's defaults (tests/conftest.py).
EMULATOR_SWEEP := FJ_UNCLAIMED_AFTER_SECONDS=$${FJ_UNCLAIMED_AFTER_SECONDS:-5}

test: lint ## Static checks, then the whole test suite against the Firebase Emulator Suite
	$(EMULATOR_SWEEP) $(RUN) .venv/bin/python scripts/run_suite.py --workers $(PYTEST_WORKERS) $(PYTEST_ARGS)

test-fast: ## The tests that need no emulator and train no model (pure code); needs only the Python environment
	@bash -c 'source scripts/python-env.sh && python -m pytest -m "not emulator and not training" -n 2 -q $(PYTEST_ARGS)'

demo: ## Start the emulators, seed demo conversations and open the dashboard
	$(RUN) scripts/demo.sh

bench: ## Run the benchmarks against the emulators; results go to bench/results.json
	$(EMULATOR_SWEEP) $(RUN) .venv/bin/python -m bench $(BENCH_ARGS)

eval: ## Run the labelled corpus through the pipeline on the emulators (EXTRACTOR=gemini: Vertex AI); eval/REPORT.md
	$(RUN) .venv/bin/python -m factor_journal_tools.evaluate $(if $(EXTRACTOR),--extractor $(EXTRACTOR)) $(EVAL_ARGS)

seat-requests: ## Write SPLIT's exact Gemini requests and the answerer's view under eval/seat/ (SPLIT=ask: Ask's intent)
	$(RUN) .venv/bin/python -m $(SEAT_TOOL) requests --split $(SPLIT)

seat-replay: ## Replay eval/seat/answers/SPLIT.jsonl through the real Gemini path and score it (as make eval, or Ask's sets)
	$(RUN) .venv/bin/python -m $(SEAT_TOOL) replay --split $(SPLIT)

seat-check: ## Check the form of eval/seat/answers/SPLIT.jsonl against its requests (no emulator)
	@bash -c 'source scripts/python-env.sh && python -m $(SEAT_TOOL) check --split $(SPLIT)'

train-extractor: ## Retrain the semantic extractor on the dev split (after a catalog or corpus change)
	@bash -c 'source scripts/toolchain.sh && python -m factor_journal_tools.train'

catalog-check: ## List the catalog's closest factor pairs by the embedded model; fails on near-duplicates
	@bash -c 'source scripts/python-env.sh && python -m factor_journal_tools.catalog_check'

screen-check: ## Turns that must change nothing, end to end without Firestore; eval/screening_results.json
	@bash -c 'source scripts/python-env.sh && python -m factor_journal_tools.screen_check --results eval/screening_results.json'

emulators: ## Start the emulators alone (Ctrl-C stops them)
	@bash -c 'source scripts/toolchain.sh && CONFIG="$$(.venv/bin/python scripts/firebase_config.py)" && \
	  export FJ_UNSUBSCRIBE_URL="$${FJ_UNSUBSCRIBE_URL:-$$(.venv/bin/python scripts/firebase_config.py \
	  --function-url unsubscribe demo-factor-journal)}" && exec .venv/bin/python \
	  scripts/supervise.py --config "$$CONFIG" -- firebase emulators:start --config "$$CONFIG" --only "$$FJ_EMULATORS" \
	  --project demo-factor-journal'

deploy-dashboard: ## Deploy the dashboard to Cloud Run (the functions deploy with `firebase deploy`; see docs/deploy.md)
	scripts/deploy-dashboard.sh

lint: ## Static checks: ruff (style, imports, line length), the formatting, mypy; needs only the Python environment
	@bash -c 'source scripts/python-env.sh && ruff check $(CODE) && ruff format --check $(CODE) && mypy'

format: ## Format the code and apply ruff's safe fixes
	@bash -c 'source scripts/toolchain.sh && ruff check --fix $(CODE) && ruff format $(CODE)'
