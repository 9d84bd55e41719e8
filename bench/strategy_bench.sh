#!/usr/bin/env bash
# The tune strategy against the exhaustive grid on the fake-GPU models (tests/fixtures/models/
# tune-*.yaml and the example dgx-h100.yaml): grid size, trials used, % of the grid, objective vs
# the grid's best, and the strategy's own overhead per trial. Runs in-process against the models
# (no MPI, no worker processes), so it takes about a second.
# Target (README): within 1% of the grid's best objective using at most 15% of the grid's trials.
# `--short` runs one noise seed per model (CI proves it works); otherwise 10 seeds, worst shown.
# Builds nothing.
# usage: bench/strategy_bench.sh [--short] [STRATEGY_BENCH] [FIXTURES]
set -euo pipefail
seeds=10
short=()
if [ "${1:-}" = --short ]; then short=(--short); seeds=1; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
bench=${1:-$here/build/bench/strategy_bench}
fixtures=${2:-$here/tests/fixtures}
if [ ! -x "$bench" ]; then
  echo "strategy_bench.sh: $bench is not built (cmake --build build --target strategy_bench)" >&2
  exit 2
fi
exec "$bench" "${short[@]}" --seeds "$seeds" --models "$fixtures/models"
