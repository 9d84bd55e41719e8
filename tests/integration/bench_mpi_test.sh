#!/usr/bin/env bash
# `mpirun -np 4 nccltune bench` on the fake GPU stack, as a user would run it: every collective
# with the data check (busbw = algbw x the collective's factor on every row, #wrong 0, times
# from the model), --json, every fault type (each gives its outcome, the job ends cleanly and
# leaves no process or shared-memory segment behind) and NCCLTUNE_EMULATE_NODES.
# usage: bench_mpi_test.sh NCCLTUNE LIBFAKECUDA LIBFAKENCCL FIXTURES
nccltune=$1
fakecuda=$2
fakenccl=$3
fixtures=$4
models=$fixtures/models
source "$(dirname "$0")/lib.sh"

# The user's own NCCL_* settings would be measured too: start from none.
for name in $(compgen -e | grep '^NCCL_'); do unset "$name"; done
unset NCCLTUNE_EMULATE_NODES NCCLTUNE_CUDA_LIB NCCLTUNE_NCCL_LIB NCCLTUNE_FAKE_MODEL
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Every process a run starts (mpirun, ranks, workers) carries this tag in its environment, so
# leftovers are found among whatever else runs on the machine (other tests included).
tag_base="bench-mpi-test-$$-$RANDOM"
run_limit=120  # seconds: a run that hangs is killed and fails its test

shm_segments() {
  local f
  for f in /dev/shm/nccltune-fake-*; do [ -e "$f" ] && echo "${f#/dev/shm/}"; done | sort
}

# bench NAME [VAR=VALUE...] -- BENCH ARGS...: runs `mpirun -np 4 nccltune bench` with the fake
# libraries and 20 s timeouts (the fault tests set a few seconds); stdout, stderr in
# $work/NAME.{out,err}, exit status in $rc, wall time in $elapsed_ms.
bench() {
  local name=$1
  shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  tag="$tag_base-$name"
  # Defaults, unless the test gives its own (bench takes each option once).
  local defaults=() flag value
  for flag in --cuda-lib="$fakecuda" --nccl-lib="$fakenccl" --init-timeout=20 --size-timeout=20; do
    value=${flag#*=}
    flag=${flag%%=*}
    case " $* " in *" $flag "*) ;; *) defaults+=("$flag" "$value") ;; esac
  done
  shm_segments >"$work/$name.shm-before"
  local start end
  start=$(date +%s%N)
  env NCCLTUNE_TEST_TAG="$tag" "${vars[@]}" \
    timeout -k 5 "$run_limit" mpirun --oversubscribe -np 4 "$nccltune" bench "${defaults[@]}" "$@" \
    >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  end=$(date +%s%N)
  elapsed_ms=$(((end - start) / 1000000))
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    fail "$name: still running after ${run_limit}s (killed)"
  fi
}

show_err() { sed 's/^/  | /' "$work/$1.err" | grep -v -e '^  | --*$' | head -n "${2:-8}"; }

expect_rc() {  # expect_rc NAME CODE
  if [ "$rc" -eq "$2" ]; then pass; else fail "$1: exit $rc, expected $2"; show_err "$1"; fi
}
expect_failed() {  # expect_failed NAME: exited non-zero by itself (not killed by the time limit)
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then pass; else fail "$1: exit $rc, expected a failure exit"; fi
}
expect_count() {  # expect_count FILE TEXT N DESCRIPTION
  local n
  n=$(grep -cF -- "$2" "$1")
  if [ "$n" -eq "$3" ]; then pass; else fail "$4: '$2' $n times in $(basename "$1"), expected $3"; fi
}

# expect_clean NAME: nothing the run started is still alive (workers, ranks), and it left no
# shared-memory segment of the fake behind. Workers of a killed rank die of PR_SET_PDEATHSIG,
# asynchronously: allow them a moment.
expect_clean() {
  local name=$1 left=""
  for _ in $(seq 30); do
    left=$(tagged_processes "$tag")
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -z "$left" ]; then
    pass
  else
    fail "$name: processes left behind:"
    for pid in $left; do ps -o pid=,ppid=,stat=,args= -p "$pid"; done
  fi
  # `pgrep -f 'nccltune[ -]worker'`, restricted to this run's workers.
  local workers=""
  for pid in $(pgrep -f 'nccltune[ -]worker'); do
    grep -qzx "NCCLTUNE_TEST_TAG=$tag" "/proc/$pid/environ" 2>/dev/null && workers="$workers $pid"
  done
  if [ -z "$workers" ]; then pass; else fail "$name: 'nccltune worker' processes left:$workers"; fi
  # Segments that appeared during the run and are still there (another test's segment, in
  # flight, is gone a moment later: look twice).
  local new
  new=$(shm_segments | comm -13 "$work/$name.shm-before" -)
  if [ -n "$new" ]; then
    sleep 1
    new=$(shm_segments | comm -13 "$work/$name.shm-before" - | grep -xF -f <(echo "$new"))
  fi
  if [ -z "$new" ]; then pass; else fail "$name: shared memory left in /dev/shm: $new"; fi
}

# The table's data rows: size count type redop root time algbw busbw #wrong [time algbw busbw #wrong].
rows() { awk '$1 ~ /^[0-9]+$/' "$1"; }
factor_of() {
  case $1 in
    all_reduce) echo 1.5 ;;  # 2(n-1)/n at 4 ranks
    all_gather | reduce_scatter | alltoall) echo 0.75 ;;  # (n-1)/n
    broadcast | reduce) echo 1 ;;
  esac
}

# expect_busbw NAME FACTOR: busbw = algbw x FACTOR on every row and column, within the
# printed rounding, and algbw = size / time.
expect_busbw() {
  local bad
  bad=$(rows "$work/$1.out" | awk -v f="$2" '
    function decimals(s) { return index(s, ".") ? length(s) - index(s, ".") : 0 }
    function half(s) { return 0.5 * 10 ^ -decimals(s) }
    function abs(x) { return x < 0 ? -x : x }
    function check(t, a, b) {
      if (abs(b - a * f) > half(b) + half(a) * f + 1e-9) { printf "size %s: busbw %s != algbw %s x %s\n", $1, b, a, f; return }
      # algbw = bytes / time (GB/s, time in us): t is rounded, so allow its rounding too.
      if (t > 0 && abs(a - $1 / (t * 1e3)) > half(a) + $1 / (t * 1e3) * half(t) / t + 1e-9) printf "size %s: algbw %s != %s B / %s us\n", $1, a, $1, t
    }
    { check($6, $7, $8); if (NF >= 13) check($10, $11, $12) }')
  if [ "$(rows "$work/$1.out" | wc -l)" -gt 0 ] && [ -z "$bad" ]; then pass; else fail "$1: busbw != algbw x $2"; echo "$bad" | head -5; fi
}

# expect_no_wrong NAME: #wrong is 0 on every row (alltoall's in-place column is N/A, as in
# nccl-tests: its in-place run is timed but not checked).
expect_no_wrong() {
  local bad in_place=0
  [ "$1" = alltoall ] && in_place=N/A
  bad=$(rows "$work/$1.out" | awk -v in_place="$in_place" '$9 != "0" || (NF >= 13 && $13 != in_place)')
  if [ -z "$bad" ]; then pass; else fail "$1: rows with wrong data"; echo "$bad" | head -3; fi
}

# expect_model_times NAME OP SCALE: every time is SCALE x the model's (exact.yaml, no noise):
# lat_us + bytes / algbw, algbw = busbw_gbps / factor, with the model's default algorithm and
# protocol by size (Tree/LL up to 64K: 7 us, 35 GB/s; Ring/LL128 up to 16M: 16 us, 300 GB/s;
# Ring/Simple above: 28 us, 360 GB/s), 16 channels (scale 1). Within the printed rounding.
# NCCL runs Tree for all_reduce only (and alltoall is send/recv): the others' pick up to 64K is
# then the fastest pair NCCL has for them, Ring/LL (9 us, 40 GB/s).
expect_model_times() {
  local bad
  bad=$(rows "$work/$1.out" | awk -v f="$(factor_of "$2")" -v scale="$3" -v op="$2" '
    function decimals(s) { return index(s, ".") ? length(s) - index(s, ".") : 0 }
    function abs(x) { return x < 0 ? -x : x }
    function model(bytes,   lat, bw) {
      if (bytes <= 65536 && op != "all_reduce" && op != "alltoall") { lat = 9; bw = 40 }
      else if (bytes <= 65536) { lat = 7; bw = 35 } else if (bytes <= 16777216) { lat = 16; bw = 300 } else { lat = 28; bw = 360 }
      return scale * (lat + bytes / (bw / f * 1e3))
    }
    function check(t) {
      want = model($1)
      if (abs(t - want) > 0.5 * 10 ^ -decimals(t) + 1e-5 * want) printf "size %s: time %s us, model %.4f us\n", $1, t, want
    }
    { check($6); if (NF >= 13) check($10) }')
  if [ -z "$bad" ]; then pass; else fail "$1: times differ from the model"; echo "$bad" | head -5; fi
}

# expect_json NAME OP: the --json file: schema, op, ranks, and on every measurement
# busbw = algbw x factor and algbw = bytes / time (full precision: relative 1e-9).
expect_json() {
  local file=$work/$1.json
  if [ -s "$file" ]; then pass; else fail "$1: --json wrote nothing"; return; fi
  expect_in "$file" '"schema": "nccltune/bench/v1"' "$1 JSON schema"
  expect_in "$file" "\"op\": \"$2\"" "$1 JSON op"
  expect_in "$file" '"ranks": 4' "$1 JSON ranks"
  expect_in "$file" '"nccl_version": "2.28.9"' "$1 JSON NCCL version"
  local bad
  bad=$(awk -v f="$(factor_of "$2")" '
    function abs(x) { return x < 0 ? -x : x }
    /"bytes":/ { bytes = $2 + 0 }
    /"time_us":/ { t = $2 + 0 }
    /"algbw":/ { a = $2 + 0 }
    /"busbw":/ { b = $2 + 0; n++
      if (abs(b - a * f) > 1e-9 * (abs(b) + 1e-12)) printf "bytes %d: busbw %.12g != %.12g x %s\n", bytes, b, a, f
      if (t > 0 && abs(a - bytes / (t * 1e3)) > 1e-9 * (a + 1e-12)) printf "bytes %d: algbw %.12g != bytes / time %.12g\n", bytes, a, t }
    END { if (n == 0) print "no measurements" }' "$file")
  if [ -z "$bad" ]; then pass; else fail "$1: JSON numbers"; echo "$bad" | head -5; fi
}

# ---------------------------------------------------------------------------------------------
# all_reduce on the exact model: table, factor 1.5, #wrong 0, the model's times, --json.
bench all_reduce NCCLTUNE_FAKE_MODEL="$models/exact.yaml" -- -b 8 -e 1M -f 2 -n 2 -w 1 --json "$work/all_reduce.json"
expect_rc all_reduce 0
expect_count "$work/all_reduce.out" "# nccltune bench: all_reduce (4 ranks" 1 "all_reduce header"
expect_in "$work/all_reduce.out" "# Using devices" "all_reduce device list"
for r in 0 1 2 3; do
  pci=$(echo "18 2A 3A 5D" | cut -d' ' -f$((r + 1)))
  if grep -Eq "^#  Rank  $r Group  0 Pid +[0-9]+ on +[^ ]+ device  $r \[0000:$pci:00\] NVIDIA H100 80GB HBM3$" "$work/all_reduce.out"; then
    pass
  else
    fail "all_reduce: device line of rank $r"
  fi
done
expect_in "$work/all_reduce.out" "NCCL version 2.28.9" "all_reduce NCCL version"
expect_in "$work/all_reduce.out" "# Avg bus bandwidth" "all_reduce footer"
expect_in "$work/all_reduce.out" "# Out of bounds values : 0 OK" "all_reduce check line"
n=$(rows "$work/all_reduce.out" | wc -l)
if [ "$n" -eq 18 ]; then pass; else fail "all_reduce: $n rows, expected 18 (8 B .. 1 MiB)"; fi
if [ "$(rows "$work/all_reduce.out" | tail -1 | awk '{print $1}')" = 1048576 ]; then pass; else fail "all_reduce: last size not 1M"; fi
expect_busbw all_reduce 1.5
expect_no_wrong all_reduce
expect_model_times all_reduce all_reduce 1
expect_json all_reduce all_reduce
expect_clean all_reduce

# Every other collective, with the data check: each one's factor, #wrong 0, the model's times.
for op in all_gather reduce_scatter broadcast reduce alltoall; do
  bench "$op" NCCLTUNE_FAKE_MODEL="$models/exact.yaml" -- --op "$op" -b 16 -e 1M -f 4 -n 2 -w 1 -c 1 --json "$work/$op.json"
  expect_rc "$op" 0
  expect_count "$work/$op.out" "# nccltune bench: $op (4 ranks" 1 "$op header"
  n=$(rows "$work/$op.out" | wc -l)
  if [ "$n" -eq 9 ]; then pass; else fail "$op: $n rows, expected 9 (16 B .. 1 MiB)"; fi
  expect_busbw "$op" "$(factor_of "$op")"
  expect_no_wrong "$op"
  case $op in all_gather | broadcast | alltoall) redop=none ;; *) redop=sum ;; esac
  if rows "$work/$op.out" | awk -v r="$redop" '$4 != r { bad = 1 } END { exit bad }'; then pass; else fail "$op: redop column is not $redop"; fi
  expect_model_times "$op" "$op" 1
  expect_json "$op" "$op"
  expect_clean "$op"
done
# The root column: broadcast and reduce have one (-r, 0 by default); the others print -1.
if rows "$work/broadcast.out" | awk '$5 != "0" { bad = 1 } END { exit bad }'; then pass; else fail "broadcast: root column not 0"; fi
if rows "$work/all_gather.out" | awk '$5 != "-1" { bad = 1 } END { exit bad }'; then pass; else fail "all_gather: root column not -1"; fi

# A noisy model (cv 0.02): the arithmetic still holds on every row.
bench noisy NCCLTUNE_FAKE_MODEL="$models/dgx-h100.yaml" -- -b 1K -e 1M -f 8 -n 3 -w 1
expect_rc noisy 0
expect_busbw noisy 1.5
expect_no_wrong noisy
expect_clean noisy

# NCCL reads NCCL_ALGO/NCCL_PROTO as a filter and still picks its own pair where the lists allow
# it: lists of every algorithm and protocol the model has leave reduce_scatter's numbers as they
# are (the same noise draws, so the same busbw on every row).
bench rs_defaults NCCLTUNE_FAKE_MODEL="$models/dgx-h100.yaml" -- --op reduce_scatter -b 128K -e 8M -f 4 -n 3 -w 1
bench rs_lists NCCLTUNE_FAKE_MODEL="$models/dgx-h100.yaml" NCCL_ALGO=Ring,Tree,NVLS NCCL_PROTO=LL,LL128,Simple -- \
  --op reduce_scatter -b 128K -e 8M -f 4 -n 3 -w 1
expect_rc rs_defaults 0
expect_rc rs_lists 0
if [ "$(rows "$work/rs_defaults.out" | wc -l)" -eq 4 ] &&
  diff <(rows "$work/rs_defaults.out" | awk '{print $1, $8, $12}') <(rows "$work/rs_lists.out" | awk '{print $1, $8, $12}') >/dev/null; then
  pass
else
  fail "lists that allow NCCL's own choice changed reduce_scatter's busbw"
  paste <(rows "$work/rs_defaults.out") <(rows "$work/rs_lists.out") | head -5
fi

# ---------------------------------------------------------------------------------------------
# Faults: each gives its outcome on rank 0's stderr (once), the job exits non-zero by itself
# within the timeouts, and nothing is left behind.
bench init_error NCCLTUNE_FAKE_MODEL="$models/fault-init-error.yaml" NCCL_PROTO=LL128 -- -b 8 -e 1K -f 4 -n 2 -w 1 --init-timeout 5 --size-timeout 5
expect_failed init_error
expect_count "$work/init_error.err" "nccltune bench: trial init_error" 1 "init_error outcome"
expect_in "$work/init_error.err" "ncclCommInitRank" "init_error reason"
expect_clean init_error

bench hang NCCLTUNE_FAKE_MODEL="$models/fault-hang.yaml" NCCL_ALGO=Tree -- -b 8 -e 1K -f 4 -n 2 -w 1 --init-timeout 5 --size-timeout 2
expect_failed hang
expect_count "$work/hang.err" "nccltune bench: trial timeout" 1 "hang outcome"
expect_in "$work/hang.err" "a size took longer than 2000 ms" "hang reason"
if [ "$elapsed_ms" -lt 30000 ]; then pass; else fail "hang: took ${elapsed_ms} ms with a 2 s size timeout"; fi
expect_clean hang

bench crash NCCLTUNE_FAKE_MODEL="$models/fault-crash.yaml" NCCL_PROTO=LL -- -b 8 -e 1K -f 4 -n 2 -w 1 --init-timeout 5 --size-timeout 5
expect_failed crash
expect_count "$work/crash.err" "nccltune bench: trial crash" 1 "crash outcome"
expect_in "$work/crash.err" "worker died" "crash reason"
expect_clean crash

bench corrupt NCCLTUNE_FAKE_MODEL="$models/fault-corrupt.yaml" NCCL_ALGO=Ring NCCL_PROTO=Simple -- -b 1K -e 16K -f 4 -n 2 -w 1 --init-timeout 5 --size-timeout 5 --json "$work/corrupt.json"
expect_failed corrupt
expect_count "$work/corrupt.err" "nccltune bench: wrong data" 1 "corrupt outcome"
expect_in "$work/corrupt.out" "# Avg bus bandwidth" "corrupt: the table is still printed"
bad=$(rows "$work/corrupt.out" | awk '$9 != "0" || $13 != "0"' | wc -l)
if [ "$bad" -gt 0 ]; then pass; else fail "corrupt: no row shows #wrong > 0"; fi
if grep -Eq '"wrong": [1-9]' "$work/corrupt.json"; then pass; else fail "corrupt: JSON shows no wrong elements"; fi
expect_clean corrupt

# slow_rank: rank 1 of 4 runs at half speed (2 x the model's time, the others 1 x). -a combines
# the ranks' times as nccl-tests does: the default -a 1 is their mean, (1 + 2 + 1 + 1) / 4 = 1.25 x;
# -a 0 is rank 0's (1 x), -a 2 the fastest (1 x), -a 3 the slowest (2 x).
bench slow_rank NCCLTUNE_FAKE_MODEL="$models/fault-slow-rank.yaml" -- -b 8 -e 256K -f 4 -n 2 -w 1 --init-timeout 5 --size-timeout 5
expect_rc slow_rank 0
expect_model_times slow_rank all_reduce 1.25
expect_busbw slow_rank 1.5
expect_no_wrong slow_rank
expect_clean slow_rank
for rule_scale in 0:1 1:1.25 2:1 3:2; do
  rule=${rule_scale%:*} scale=${rule_scale#*:}
  bench "slow_rank_a$rule" NCCLTUNE_FAKE_MODEL="$models/fault-slow-rank.yaml" -- -b 8 -e 64K -f 8 -n 2 -w 1 -a "$rule" --init-timeout 5 --size-timeout 5
  expect_rc "slow_rank_a$rule" 0
  expect_model_times "slow_rank_a$rule" all_reduce "$scale"
  expect_clean "slow_rank_a$rule"
done

# A library that is not there: a broken install, not a slow node: exit 3 (a usage error) before
# any table line, one line naming the flag and the path, no worker started, no hang.
bench missing_nccl NCCLTUNE_FAKE_MODEL="$models/exact.yaml" -- -b 8 -e 8 --init-timeout 5 --size-timeout 5 --nccl-lib "$work/no-such-dir/libnccl.so.2"
expect_rc missing_nccl 3
expect_count "$work/missing_nccl.err" "nccltune bench: rank 0: --nccl-lib: cannot load NCCL" 1 "missing library: one line"
expect_in "$work/missing_nccl.err" "$work/no-such-dir/libnccl.so.2" "missing library named"
expect_not_in "$work/missing_nccl.out" "# nccltune bench" "missing library: no table line"
expect_clean missing_nccl

# ---------------------------------------------------------------------------------------------
# Two emulated nodes of two ranks: two hosts, device = node-local rank. -J is --json, as in
# nccl-tests; -I 0 and -R 0 are nccl-tests' defaults, which bench does too.
bench emulated NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_FAKE_MODEL="$models/exact.yaml" -- -b 8 -e 1K -f 4 -n 2 -w 1 -J "$work/emulated.json" -I 0 -R 0
expect_rc emulated 0
host=$(hostname)
for r in 0 1 2 3; do
  node=$((r / 2)) device=$((r % 2))
  if grep -Eq "^#  Rank  $r Group  0 Pid +[0-9]+ on +[^ ]+-node$node device  $device \[" "$work/emulated.out"; then
    pass
  else
    fail "emulated: rank $r is not on …-node$node device $device"; grep "Rank  $r " "$work/emulated.out"
  fi
done
expect_count "$work/emulated.out" "-node0 device" 2 "emulated node0 ranks"
expect_count "$work/emulated.out" "-node1 device" 2 "emulated node1 ranks"
expect_in "$work/emulated.json" '"nodes": 2' "emulated JSON nodes"
expect_in "$work/emulated.json" "\"$host-node0\"" "emulated JSON host 0"
expect_in "$work/emulated.json" "\"$host-node1\"" "emulated JSON host 1"
expect_busbw emulated 1.5
expect_clean emulated

# ---------------------------------------------------------------------------------------------
# The hardware peak and the health thresholds. The dgx-h100 model gives 4 ranks about 330 GB/s
# at 64M; the DGX-H100 snapshot's peak is NVLink4 x18, 450 GB/s (73%).
peak_args=(-b 1M -e 64M -f 4 -n 2 -w 1 --from "$fixtures/nodes/dgx-h100")
bench peak_met NCCLTUNE_FAKE_MODEL="$models/dgx-h100.yaml" -- "${peak_args[@]}" --min-peak-pct 50 --min-busbw 100
expect_rc peak_met 0
expect_in "$work/peak_met.out" "# Peak bus bandwidth   : 450 GB/s (NVLink4 x18); busbw at 64M is " "peak line under the table"
if grep -A1 '^# Avg bus bandwidth' "$work/peak_met.out" | grep -q '^# Peak bus bandwidth'; then pass; else
  fail "the peak line is not right under '# Avg bus bandwidth'"; fi
expect_in "$work/peak_met.out" "meets --min-peak-pct 50" "threshold met, said so"
expect_clean peak_met

bench peak_below NCCLTUNE_FAKE_MODEL="$models/dgx-h100.yaml" -- "${peak_args[@]}" --min-peak-pct 95
expect_rc peak_below 1
expect_count "$work/peak_below.err" "nccltune bench:" 1 "below --min-peak-pct: one line of ours (mpirun adds its own)"
expect_in "$work/peak_below.err" "at 64M is 7" "below --min-peak-pct: size and measured share named"
expect_in "$work/peak_below.err" "below --min-peak-pct 95" "below --min-peak-pct: threshold named"
expect_clean peak_below

bench busbw_below NCCLTUNE_FAKE_MODEL="$models/dgx-h100.yaml" -- "${peak_args[@]}" --min-busbw 1000
expect_rc busbw_below 1
expect_in "$work/busbw_below.err" "is below --min-busbw 1000 GB/s" "below --min-busbw named"
expect_clean busbw_below

# Two emulated nodes of two ranks: the network (2 x 50 GB/s rails) is the bottleneck.
bench peak_two_nodes NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_FAKE_MODEL="$models/exact.yaml" -- -b 8 -e 1K -f 4 -n 2 -w 1 \
  --from "$fixtures/nodes/dgx-h100" --json "$work/peak_two_nodes.json"
expect_rc peak_two_nodes 0
expect_in "$work/peak_two_nodes.out" "100 GB/s (network, 1x mlx5 400 Gb/s per GPU x 2 GPUs)" "two nodes: network peak"
expect_in "$work/peak_two_nodes.json" '"peak_busbw_gbps": 100.0' "peak in the JSON"
expect_clean peak_two_nodes

# ---------------------------------------------------------------------------------------------
# --nccl-log: what NCCL said it did, after the table. The fake NCCL reports sockets and no
# GPUDirect RDMA while the DGX-H100 snapshot has ACTIVE IB ports: explain's transport verdict.
# A user's NCCL_DEBUG_FILE is not where the capture goes, and the capture's directory is removed.
{ cat "$models/exact.yaml"; echo "nccl_log: {transport: Socket, devices: [eth0], gdr: false}"; } >"$work/socket-model.yaml"
mkdir -p "$work/capture-tmp"
bench nccl_log_socket NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_FAKE_MODEL="$work/socket-model.yaml" TMPDIR="$work/capture-tmp" \
  NCCL_DEBUG_FILE="$work/users-nccl.%p.log" -- -b 1K -e 4K -f 4 -n 2 -w 1 --from "$fixtures/nodes/dgx-h100" --nccl-log \
  --json "$work/nccl_log_socket.json"
expect_rc nccl_log_socket 0
expect_in "$work/nccl_log_socket.out" "# What NCCL said it did" "--nccl-log: summary after the table"
expect_in "$work/nccl_log_socket.out" "Socket (plugin Socket): eth0" "--nccl-log: the transport NCCL reported"
expect_in "$work/nccl_log_socket.out" "fail  transport      NCCL sends between nodes over sockets although the node has 8 ACTIVE RDMA ports" \
  "--nccl-log: sockets instead of RDMA"
expect_in "$work/nccl_log_socket.out" "AllReduce" "--nccl-log: NCCL's per-size choices (TUNING)"
expect_in "$work/nccl_log_socket.out" "ranks     4 on 2 node(s), 2 per node" "--nccl-log: every rank's log read"
if [ -z "$(ls -A "$work/capture-tmp")" ]; then pass; else fail "--nccl-log left files in TMPDIR: $(ls -A "$work/capture-tmp")"; fi
if compgen -G "$work/users-nccl.*" >/dev/null; then fail "--nccl-log wrote into the user's NCCL_DEBUG_FILE"; else pass; fi
expect_not_in "$work/nccl_log_socket.json" "NCCL_DEBUG_SUBSYS" "--nccl-log: the capture's variables stay out of the JSON's env"
expect_in "$work/nccl_log_socket.json" "users-nccl" "--nccl-log: the user's own NCCL_DEBUG_FILE stays in the JSON's env"
expect_clean nccl_log_socket

{ cat "$models/exact.yaml"; echo "nccl_log: {transport: IB, devices: [mlx5_0, mlx5_1], gdr: false}"; } >"$work/nogdr-model.yaml"
bench nccl_log_nogdr NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_FAKE_MODEL="$work/nogdr-model.yaml" -- -b 1K -e 4K -f 4 -n 2 -w 1 \
  --from "$fixtures/nodes/dgx-h100" --nccl-log
expect_rc nccl_log_nogdr 0
expect_in "$work/nccl_log_nogdr.out" "GPUDirect RDMA is off on all" "--nccl-log: GDR off said"
expect_clean nccl_log_nogdr

# No GPU here and no --from: the peak is unknown, and a percentage cannot be judged (exit 2).
bench peak_unknown NCCLTUNE_FAKE_MODEL="$models/exact.yaml" -- -b 8 -e 1K -f 4 -n 2 -w 1 --min-peak-pct 80
expect_rc peak_unknown 2
expect_in "$work/peak_unknown.out" "# Peak bus bandwidth   : unknown (" "unknown peak said so"
expect_in "$work/peak_unknown.err" "cannot judge --min-peak-pct: the peak is unknown" "unknown peak: cannot judge"
expect_clean peak_unknown

bench emulated_bad NCCLTUNE_EMULATE_NODES=3 NCCLTUNE_FAKE_MODEL="$models/exact.yaml" -- -b 8 -e 8
expect_failed emulated_bad
expect_in "$work/emulated_bad.err" "NCCLTUNE_EMULATE_NODES=3" "uneven emulation named"
expect_clean emulated_bad

# nccl-tests flags that ask for what the worker does not do: one line saying why, exit 3 (usage).
for case in "per_iter -I 1 the worker times a size's iterations between one pair of CUDA events" \
  "register -R 2 the worker registers no buffer with NCCL"; do
  read -r name flag value why <<<"$case"
  bench "$name" NCCLTUNE_FAKE_MODEL="$models/exact.yaml" -- -b 8 -e 8 "$flag" "$value"
  expect_rc "$name" 3
  expect_count "$work/$name.err" "nccltune bench: $flag $value: not supported: $why" 1 "$flag $value refused with why"
  expect_clean "$name"
done

finish
