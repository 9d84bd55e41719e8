#!/usr/bin/env bash
# `nccltune observe` on a 64-rank job's NCCL Inspector records (bench/observe_inspector_gen.py:
# 8 hosts x 8 GPUs, ~360 bytes a record, rank 13 a straggler), on one core (taskset): the wall
# time, records per second and peak RSS. The records are generated into a temp dir first; that
# time is not counted. The run must still name the straggler (exit 2, rank 13 on node-1).
#
# Default ~1 GB (the target: under a minute on one core, memory bounded); `--short` (CI) ~4 MB;
# `--bytes N` any size.
# usage: bench/observe_bench.sh [--short | --bytes N] [NCCLTUNE]
set -euo pipefail
bytes=$((1024 * 1024 * 1024))
if [ "${1:-}" = --short ]; then bytes=$((4 * 1024 * 1024)); shift; fi
if [ "${1:-}" = --bytes ]; then bytes=$2; shift 2; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltune=${1:-$here/build/nccltune}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/inspector"
python3 "$here/bench/observe_inspector_gen.py" "$work/inspector" "$bytes"
size=$(du -sb "$work/inspector" | cut -f1)
one_core=()
if command -v taskset >/dev/null; then one_core=(taskset -c 0); fi

set +e
/usr/bin/time -f '%e %M' -o "$work/time" "${one_core[@]}" "$nccltune" observe "$work/inspector" --format json \
  >"$work/out.json" 2>"$work/err"
rc=$?
set -e
read -r seconds rss_kib < <(tail -n 1 "$work/time")  # after "Command exited with non-zero status"
if [ "$rc" -ne 2 ]; then echo "observe_bench: exit $rc, not 2 (a straggler)" >&2; cat "$work/err" >&2; exit 1; fi
python3 - "$work/out.json" "$size" "$seconds" "$rss_kib" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
size, seconds, rss_kib = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
stragglers = [(s["rank"], s["host"]) for s in report["stragglers"]]
if stragglers != [(13, "node-1")]:
    sys.exit("observe_bench: stragglers %s, not rank 13 on node-1" % stragglers)
records = report["context"]["records"]
print("%-10s %-10s %-8s %-12s %-8s %s" % ("MB", "records", "wall s", "records/s", "MB/s", "peak RSS MiB"))
print("%-10.1f %-10d %-8.2f %-12.0f %-8.1f %.1f" % (size / 1e6, records, seconds, records / max(seconds, 1e-3),
                                                   size / 1e6 / max(seconds, 1e-3), rss_kib / 1024))
PY
