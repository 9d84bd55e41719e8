#!/usr/bin/env bash
# nccltuned as systemd runs it: sd_notify messages read from a test socket, the lifecycle
# (start on a healthy snapshot, drift after the snapshot is swapped and SIGHUP, drift cleared,
# facts unreadable (drift still shown), an invalid config on reload kept out, SIGTERM within a
# second), a bad config at start, a live read with missing libraries (degraded), a hung
# nvidia-smi (killed, signals unblocked in it; --once stoppable), a fleet survey's verdict for this
# node in the metrics (and a malformed survey), and `systemd-analyze verify` on the installed unit.
# usage: daemon_test.sh NCCLTUNED NOTIFY_LISTENER FIXTURES FAKENCCL FAKECUDA BUILD_DIR
nccltuned=$1
listener=$2
fixtures=$3
fakenccl=$4
fakecuda=$5
build_dir=$6
source "$(dirname "$0")/lib.sh"
daemon_pid=""
listener_pid=""
stop_processes() {
  for pid in $daemon_pid $listener_pid $(cat "$work"/smi-pids 2>/dev/null); do
    { kill -KILL "$pid" && wait "$pid"; } 2>/dev/null
  done
}
on_exit stop_processes
# wait_for FILE TEXT: until FILE holds TEXT (10 s at most; a scan takes well under one).
wait_for() {
  for _ in $(seq 100); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "timed out waiting for '$2' in $1"
  return 1
}
count_of() { grep -cF -- "$2" "$1" 2>/dev/null; }

# --- set-up: a profile store, an admin's /etc/nccl.conf, a config, a snapshot link to flip ----------
cp -r "$fixtures/store" "$work/store"
# nccl.env holds this node's single-node profile: 1n.yaml (a 2-node profile never stands in).
h100_key=h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28
sed 's/nodes: 2, gpus_per_node: 8, ranks: 16/nodes: 1, gpus_per_node: 8, ranks: 8/' "$work/store/$h100_key/2n.yaml" \
  >"$work/store/$h100_key/1n.yaml"
chmod -R go-w "$work/store"  # the store's trust checks, as `nccltune env` applies them
printf 'NCCL_DEBUG=WARN\n# the admin'"'"'s own line\n' >"$work/nccl.conf"
chmod 0640 "$work/nccl.conf"  # the admin's mode, kept by each rewrite
cat >"$work/nccltune.yaml" <<EOF
env:
  store: $work/store
daemon:
  interval: 1h
  runtime_dir: $work/run
  state_dir: $work/state
  metrics_dir: $work/metrics
  nccl_conf: {manage: true, path: $work/nccl.conf}
  nccl_lib: $fakenccl
  cuda_lib: $fakecuda
EOF
cp "$work/nccltune.yaml" "$work/good-config.yaml"
ln -s "$fixtures/nodes/dgx-h100" "$work/node"
node_yaml=$work/run/node.yaml
metrics=$work/metrics/nccltune.prom

"$listener" "$work/notify.sock" >"$work/notify.log" 2>&1 &
listener_pid=$!
for _ in $(seq 50); do [ -S "$work/notify.sock" ] && break; sleep 0.1; done

# --- start on the healthy snapshot --------------------------------------------------------------
NOTIFY_SOCKET=$work/notify.sock WATCHDOG_USEC=400000 \
  "$nccltuned" --config "$work/nccltune.yaml" --from "$work/node" 2>"$work/daemon.log" &
daemon_pid=$!
wait_for "$work/notify.log" "READY=1"
wait_for "$node_yaml" "schema:"
expect_in "$work/notify.log" "STATUS=8 GPUs, 8 NICs:" "STATUS with the scan's summary"
expect_in "$node_yaml" 'key: "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28"' "node type key from the snapshot and the fake NCCL"
expect_in "$node_yaml" "fail: 0" "healthy node: no failures"
expect_in "$node_yaml" "drift: []" "healthy node: no drift"
expect_in "$metrics" 'nccltune_devices{kind="gpu"} 8' "metrics: GPU count"
expect_in "$metrics" 'nccltune_check_verdicts{verdict="fail"} 0' "metrics: no failures"
expect_in "$metrics" '# TYPE nccltune_drift gauge' "metrics: TYPE lines"
expect_in "$metrics" 'nccltune_gdr_ready 1' "metrics: GPUDirect RDMA ready (nvidia_peermem, IOMMU passthrough)"
expect_in "$node_yaml" 'ready: true' "node.yaml: GPUDirect RDMA ready"
expect_in "$work/run/nccl.env" "NCCL_MIN_NCHANNELS=16" "nccl.env from the single-node profile (1n)"
expect_in "$work/run/nccl.env" "# nccltuned: $work/store/$h100_key/1n.yaml" "nccl.env names its profile"
expect_in "$metrics" "nccltune_profile_info{key=\"$h100_key\",nodes=\"1\"" "metrics: the active profile"
expect_in "$work/nccl.conf" "NCCL_DEBUG=WARN" "the admin's nccl.conf line kept"
expect_in "$work/nccl.conf" "# BEGIN nccltuned" "nccl.conf block added"
expect_in "$work/nccl.conf" "NCCL_MIN_NCHANNELS=16" "nccl.conf block holds the profile"
[ "$(stat -c %a "$work/nccl.conf")" = 640 ] && pass || fail "nccl.conf mode is $(stat -c %a "$work/nccl.conf"), was 640"
[ -f "$work/state/last-good.yaml" ] && pass || fail "last good state not saved"
# WATCHDOG_USEC=0.4 s: pings every 0.2 s while the daemon sleeps between scans.
wait_for "$work/notify.log" "WATCHDOG=1"
# ... and right before and after each scan, so a slow one cannot starve it: before the first READY.
first=$(grep -m1 -oE 'WATCHDOG=1|READY=1' "$work/notify.log")
[ "$first" = WATCHDOG=1 ] && pass || fail "no WATCHDOG=1 around the first scan (first message: $first)"
sleep 1
if [ "$(count_of "$work/notify.log" "WATCHDOG=1")" -ge 3 ]; then pass; else fail "watchdog pings: $(count_of "$work/notify.log" "WATCHDOG=1") in over 1 s"; fi

# --- the hardware drifts: swap in the drifted snapshot and reload -------------------------------
ln -sfn "$fixtures/daemon/h100-drifted" "$work/node"
kill -HUP "$daemon_pid"
wait_for "$node_yaml" "gpu_missing"
wait_for "$work/notify.log" "RELOADING=1"
expect_in "$work/daemon.log" "warning: drift: GPU7 0000:db:00.0 is missing" "drift logged at warning level with details"
expect_in "$work/daemon.log" "warning: drift: NIC5 mlx5_5 port is DOWN, was ACTIVE" "port drift logged"
expect_in "$work/daemon.log" "warning: drift: GPU2 0000:3a:00.0 PCIe link is x8, was x16" "link drift logged"
expect_in "$node_yaml" 'kind: "node_type_changed"' "node type change in node.yaml"
expect_in "$node_yaml" 'id: "drift"' "drift shows in the verdicts"
expect_not_in "$node_yaml" "fail: 0" "verdicts now have failures"
expect_in "$metrics" 'nccltune_drift{kind="gpu_missing"} 1' "metrics: GPU missing"
expect_in "$metrics" 'nccltune_drift{kind="port_not_active"} 1' "metrics: port drift"
expect_in "$metrics" 'nccltune_devices{kind="gpu"} 7' "metrics: GPU count changed"
expect_in "$metrics" 'name="mlx5_5",pci="0000:ac:00.0",state="DOWN"} 0' "metrics: port state"
expect_not_in "$metrics" 'nccltune_check_verdicts{verdict="fail"} 0' "metrics: failures counted"
expect_in "$metrics" 'nccltune_gdr_ready 0' "metrics: ACS redirect above GPU3 blocks GPUDirect RDMA"
expect_in "$work/run/nccl.env" "no profile for h100-80gb-hbm3.7gpu" "7-GPU node type has no profile: nccl.env says so"
expect_not_in "$work/run/nccl.env" "NCCL_" "no settings for an untuned node type"
expect_not_in "$work/nccl.conf" "# BEGIN nccltuned" "block removed from nccl.conf"
expect_in "$work/nccl.conf" "NCCL_DEBUG=WARN" "the admin's line still there"
if [ "$(count_of "$work/notify.log" "READY=1")" -ge 2 ]; then pass; else fail "READY=1 again after the reload"; fi

# --- the facts cannot be read at all: the drift found before is still reported -------------------
mkdir -p "$work/empty"
ln -sfn "$work/empty" "$work/node"
kill -HUP "$daemon_pid"
wait_for "$node_yaml" "topology unreadable"
expect_in "$node_yaml" 'kind: "gpu_missing"' "unreadable facts: the previous drift stays in node.yaml"
expect_in "$metrics" 'nccltune_drift{kind="gpu_missing"} 1' "unreadable facts: the previous drift stays in the metrics"
expect_not_in "$work/daemon.log" "drift cleared" "unreadable facts clear no drift"

# --- fixed: back to the healthy snapshot; the drift clears --------------------------------------
ln -sfn "$fixtures/nodes/dgx-h100" "$work/node"
kill -HUP "$daemon_pid"
wait_for "$work/daemon.log" "drift cleared: GPU7 0000:db:00.0 is missing"
wait_for "$metrics" 'nccltune_drift{kind="gpu_missing"} 0'
wait_for "$node_yaml" "drift: []"
expect_in "$metrics" 'nccltune_check_verdicts{verdict="fail"} 0' "metrics: failures cleared"

# --- an invalid config on reload is kept out ---------------------------------------------------
sed 's/interval: 1h/interval: 1h\n  intervall: 2h/' "$work/good-config.yaml" >"$work/nccltune.yaml"
ln -sfn "$fixtures/daemon/h100-drifted" "$work/node"
kill -HUP "$daemon_pid"
wait_for "$work/daemon.log" "error: reload: "
expect_in "$work/daemon.log" "error: reload: $work/nccltune.yaml:5: daemon: unknown key 'intervall'; keeping the previous configuration" "reload error names file, line and key"
wait_for "$node_yaml" "gpu_missing"  # still scanning, with the old config's directories
if kill -0 "$daemon_pid" 2>/dev/null; then pass; else fail "daemon died on an invalid config"; fi
wait_for "$work/notify.log" "config error"

# --- SIGTERM: clean exit within a second -----------------------------------------------------
start=$(date +%s%N)
kill -TERM "$daemon_pid"
wait "$daemon_pid"
code=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
daemon_pid=""
[ "$code" -eq 0 ] && pass || fail "SIGTERM: exit $code, expected 0"
[ "$elapsed_ms" -lt 1000 ] && pass || fail "SIGTERM: exited after $elapsed_ms ms"
expect_in "$work/notify.log" "STOPPING=1" "STOPPING=1 on SIGTERM"

# --- an NCCL upgrade: the library file changes, the next scan reads the new version ---------------
# Accepted, not drift: the node type key, nccl.env and the last good state follow it.
mkdir -p "$work/lib"
cp "$fakenccl" "$work/lib/libnccl.so.2"
cp "$fixtures/models/dgx-h100.yaml" "$work/model.yaml"  # ncclGetVersion: the default, 2.28.9
sed -e "s|nccl_lib: .*|nccl_lib: $work/lib/libnccl.so.2|" -e "s|interval: 1h|interval: 1s|" \
  -e "s|$work/state|$work/upgrade/state|" -e "s|$work/run|$work/upgrade/run|" "$work/good-config.yaml" >"$work/upgrade.yaml"
ln -sfn "$fixtures/nodes/dgx-h100" "$work/node"
NCCLTUNE_FAKE_MODEL=$work/model.yaml "$nccltuned" --config "$work/upgrade.yaml" --from "$work/node" \
  2>"$work/upgrade.log" &
daemon_pid=$!
wait_for "$work/upgrade/run/node.yaml" ".nccl2.28"
printf 'nccl_version: 22901\n' >>"$work/model.yaml"
cp "$fakenccl" "$work/lib/new.so" && mv "$work/lib/new.so" "$work/lib/libnccl.so.2"  # as a package upgrade does
wait_for "$work/upgrade/run/node.yaml" 'nccl_version: "2.29.1"'
expect_in "$work/upgrade.log" "info: NCCL version is 2.29.1, was 2.28.9: accepted" "an NCCL upgrade is logged at info"
expect_not_in "$work/upgrade.log" "warning: drift" "an NCCL upgrade is not drift"
expect_in "$work/upgrade/run/node.yaml" "drift: []" "an NCCL upgrade: no drift in node.yaml"
expect_in "$work/upgrade/state/last-good.yaml" 'key: "h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.29"' "the new version is the last good one"
expect_in "$work/upgrade/run/nccl.env" "no profile for h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.29" "nccl.env follows the upgrade"
kill -TERM "$daemon_pid"; wait "$daemon_pid"; daemon_pid=""

# --- a bad config at start: refuse, one line naming the file and the key ------------------------
printf 'daemon:\n  metrics_dir: relative/dir\n' >"$work/bad.yaml"
"$nccltuned" --config "$work/bad.yaml" --once >"$work/out" 2>"$work/err"
code=$?
[ "$code" -ne 0 ] && pass || fail "bad config at start: exit 0"
expect_in "$work/err" "$work/bad.yaml:2: daemon.metrics_dir: must be an absolute path" "start error names file, line and key"
[ "$(grep -c . "$work/err")" -eq 1 ] && pass || fail "bad config at start: expected one line, got: $(cat "$work/err")"

# --- missing libraries and a live read: degraded facts, still running ---------------------------
printf 'daemon:\n  nvml_lib: /nonexistent/libnvidia-ml.so.1\n  nccl_lib: /nonexistent/libnccl.so.2\n  cuda_lib: /nonexistent/libcuda.so.1\n' >"$work/live.yaml"
"$nccltuned" --config "$work/live.yaml" --once --runtime-dir "$work/live/run" --state-dir "$work/live/state" \
  --metrics-dir "$work/live/metrics" 2>"$work/live.log"
code=$?
[ "$code" -eq 0 ] && pass || fail "live read with missing libraries: exit $code"
expect_in "$work/live/run/node.yaml" "schema:" "live node.yaml written"
expect_in "$work/live/run/node.yaml" "NCCL version unknown" "a missing NCCL is recorded as degraded"
expect_in "$work/live/run/node.yaml" "NVML: " "a missing NVML is recorded as degraded"
expect_in "$work/live/metrics/nccltune.prom" "nccltune_degraded 1" "degraded facts in the metrics"

# --- a hung nvidia-smi (the live fallback without NVML): killed after 10 s, its signals free -------
# The fake records its pid and its blocked-signal mask (builtins only: bash blocks SIGCHLD while a
# child runs), then hangs as on a GPU fallen off the bus.
mkdir -p "$work/bin"
printf '#!/bin/bash\necho $$ >>"%s/smi-pids"\nwhile read -r l; do case $l in SigBlk*) echo "$l";; esac; done </proc/$$/status >"%s/smi-sigblk"\nexec sleep 60\n' \
  "$work" "$work" >"$work/bin/nvidia-smi"
chmod +x "$work/bin/nvidia-smi"
start=$(date +%s)
PATH="$work/bin:$PATH" "$nccltuned" --config "$work/live.yaml" --interval 1h --runtime-dir "$work/hung/run" \
  --state-dir "$work/hung/state" --metrics-dir "$work/hung/metrics" 2>"$work/hung.log" &
daemon_pid=$!
for _ in $(seq 300); do grep -qF "killed" "$work/hung/run/node.yaml" 2>/dev/null && break; sleep 0.1; done
elapsed=$(( $(date +%s) - start ))
expect_in "$work/hung/run/node.yaml" "nvidia-smi topo -m: no answer in 10 s, killed" "a hung nvidia-smi is killed and recorded"
[ "$elapsed" -ge 9 ] && [ "$elapsed" -le 20 ] && pass || fail "hung nvidia-smi: node.yaml after $elapsed s, expected about 10"
expect_in "$work/smi-sigblk" "SigBlk:	0000000000000000" "nvidia-smi starts with no blocked signal"
kill -TERM "$daemon_pid"; wait "$daemon_pid"; daemon_pid=""
# --once blocks no signal: SIGTERM ends a scan waiting on a hung nvidia-smi at once.
PATH="$work/bin:$PATH" "$nccltuned" --config "$work/live.yaml" --once --runtime-dir "$work/once/run" \
  --state-dir "$work/once/state" --metrics-dir "$work/once/metrics" 2>"$work/once.log" &
daemon_pid=$!
for _ in $(seq 100); do [ "$(grep -c . "$work/smi-pids" 2>/dev/null)" = 2 ] && break; sleep 0.1; done
start=$(date +%s%N)
kill -TERM "$daemon_pid"; wait "$daemon_pid"; code=$?; daemon_pid=""
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$code" -eq 143 ] && [ "$elapsed_ms" -lt 2000 ] && pass || fail "--once: SIGTERM gave exit $code after $elapsed_ms ms"

# --- the fleet survey: this node's verdict as metrics; a malformed survey is an error metric -------
# The snapshot's host is h100-node01: it is the fixture's n3, slow with every partner.
sed 's/"n3"/"h100-node01"/' "$fixtures/fleet/survey-8n.json" >"$work/fleet.json"
printf 'env:\n  store: %s\ndaemon:\n  fleet_survey: %s\n  nccl_lib: %s\n  cuda_lib: %s\n' \
  "$work/store" "$work/fleet.json" "$fakenccl" "$fakecuda" >"$work/fleet.yaml"
fleet_once() {
  "$nccltuned" --config "$work/fleet.yaml" --once --from "$fixtures/nodes/dgx-h100" --runtime-dir "$work/fleet/run" \
    --state-dir "$work/fleet/state" --metrics-dir "$work/fleet/metrics" 2>"$work/fleet.log"
}
expect_status 0 "--once with a fleet survey" fleet_once
fleet_metrics=$work/fleet/metrics/nccltune.prom
expect_in "$fleet_metrics" 'nccltune_fleet_survey_error 0' "metrics: the survey was read"
expect_in "$fleet_metrics" 'nccltune_fleet_node_status{status="suspect"} 1' "metrics: this node is a suspect"
expect_in "$fleet_metrics" 'nccltune_fleet_pair_busbw_bytes_per_second{partner="n0"} 24800000000' "metrics: a pair's busbw"
printf '{"schema": "nccltune/fleet/v1", "nodes": "eight"}' >"$work/fleet.json"
expect_status 0 "--once with a malformed fleet survey" fleet_once
expect_in "$fleet_metrics" 'nccltune_fleet_survey_error 1' "metrics: a malformed survey"
expect_not_in "$fleet_metrics" 'nccltune_fleet_node_status' "metrics: no status from a malformed survey"
[ "$(grep -c "warning: fleet survey: $work/fleet.json: " "$work/fleet.log")" -eq 1 ] && pass ||
  fail "a malformed survey: expected one warning naming it in $(cat "$work/fleet.log")"

# --- NCCL Inspector's textfiles: observed/tuned ratios per shape as metrics, a low row as drift ---
# The observe fixture's 2 hosts x 2 GPUs as a job of 2 nodes x 8 (this node's key), against a
# store whose 2-node profile has busbw results (the observe fixture's, under this node's key).
mkdir -p "$work/inspector/old" "$work/istore/$h100_key"
cp "$fixtures"/inspector/prom-2n2g/*/*.prom "$work/inspector/"
# 16 ranks: an AllGather's part of a rank is a quarter of the 4 ranks' (Inspector sizes it by one
# rank's part), so that the job's buffer stays 1 MiB.
sed -i -e 's/n_nodes="2",nranks="4"/n_nodes="2",nranks="16"/' \
  -e 's/collective="AllGather",message_size="256-257KB"/collective="AllGather",message_size="64-65KB"/' "$work"/inspector/*.prom
# Inspector removes its textfiles only when a job ends cleanly: a killed job's file, not rewritten
# for two intervals, is not read.
sed 's/comm_name="world"/comm_name="ended job"/' "$work"/inspector/nccl_inspector_metrics_3f2a*50.prom \
  >"$work/inspector/old/nccl_inspector_metrics_00000000-0000-0000-0000-000000000000.prom"
touch -d '1 day ago' "$work/inspector/old/nccl_inspector_metrics_00000000-0000-0000-0000-000000000000.prom"
sed -e "s/key: \"h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28\"/key: \"$h100_key\"/" -e 's/gpus_per_node: 2$/gpus_per_node: 8/' \
  -e 's/ranks: 4$/ranks: 16/' "$fixtures/profiles/with-plugin-2n.yaml" >"$work/istore/$h100_key/2n.yaml"
chmod -R go-w "$work/istore"
printf 'env:\n  store: %s\ndaemon:\n  inspector: {dir: %s, drift_ratio: 0.95, drift_intervals: 1}\n  nccl_lib: %s\n  cuda_lib: %s\n' \
  "$work/istore" "$work/inspector" "$fakenccl" "$fakecuda" >"$work/inspector.yaml"
inspector_once() {
  "$nccltuned" --config "$work/inspector.yaml" --once --from "$fixtures/nodes/dgx-h100" \
    --runtime-dir "$work/insp/run" --state-dir "$work/insp/state" --metrics-dir "$work/insp/metrics" 2>"$work/inspector.log"
}
expect_status 0 "--once with an Inspector directory" inspector_once
inspector_metrics=$work/insp/metrics/nccltune.prom
expect_in "$inspector_metrics" 'nccltune_inspector_files 4' "metrics: the job's four textfiles, not the ended job's"
expect_in "$inspector_metrics" 'nccltune_inspector_profile_found 1' "metrics: the job's profile was found"
expect_in "$inspector_metrics" 'nccltune_observed_busbw_ratio{shape="world",collective="all_reduce",min_bytes="1048576",max_bytes="2097151"} 0.99' \
  "metrics: the world's all_reduce ratio"
expect_in "$inspector_metrics" 'nccltune_observed_unmeasured_time_share{shape="rail",collective="all_reduce"' \
  "metrics: the rails' unmeasured time share"
expect_in "$work/inspector.log" "warning: drift: world all_gather 1048576-2097151 bytes has run at 91% of the profile's busbw" \
  "a row below drift_ratio is logged as drift"
expect_not_in "$work/inspector.log" "drift: world all_reduce" "a row above drift_ratio is not drift"

# --- the installed unit ------------------------------------------------------------------------
# As a package build does it: --prefix /usr into a staging DESTDIR, from a umask 002 shell as many
# sites have. The config goes where the binaries read it (the path compiled in, which
# `nccltuned --help` shows).
config_path=$("$nccltuned" --help | sed -n 's/.*--config TEXT=\([^ ]*\).*/\1/p')
check "nccltuned --help shows its config path ('$config_path')" test -n "$config_path"
if (umask 002 && DESTDIR="$work/dest" cmake --install "$build_dir" --prefix /usr >"$work/install.log" 2>&1); then
  pass
else
  fail "cmake --install"; cat "$work/install.log"
fi
expect_equal "$(find "$work/dest" -type d -perm /022)" "" \
  "cmake --install under umask 002 creates no group- or world-writable directory"
unit=$work/dest/usr/lib/systemd/system/nccltuned.service
[ -x "$work/dest/usr/sbin/nccltuned" ] && pass || fail "nccltuned not installed to sbin"
[ -f "$work/dest$config_path" ] && pass || fail "config not installed where nccltuned reads it ($config_path)"
expect_in "$unit" "ExecStart=/usr/sbin/nccltuned" "unit names the installed binary"
"$build_dir/nccltune" env --help >"$work/env-help.txt" 2>&1
expect_in "$work/env-help.txt" "$config_path" "nccltune env reads the same config as nccltuned"
# The compiled-in path follows the prefix CMake is configured with: /usr gives /etc.
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build_dir/CMakeCache.txt")
cmake -S "$source_dir" -B "$work/usr-build" -DCMAKE_INSTALL_PREFIX=/usr -DNCCLTUNE_BUILD_TESTS=OFF >"$work/configure.log" 2>&1
expect_in "$work/configure.log" "config file /etc/nccltune/nccltune.yaml" "prefix /usr: the config path is /etc/nccltune/nccltune.yaml"
for line in Type=notify WatchdogSec= ExecReload= ProtectSystem=strict ProtectHome=yes PrivateTmp=yes NoNewPrivileges=yes \
            RuntimeDirectory=nccltune StateDirectory=nccltune SystemCallFilter=~@clock \
            "ReadWritePaths=-/var/lib/prometheus/node-exporter -/var/lib/node_exporter/textfile_collector"; do
  expect_in "$unit" "$line" "unit hardening"
done
if grep -q '^PrivateDevices=' "$unit"; then fail "PrivateDevices= would hide /dev/nvidia* and /dev/infiniband"; else pass; fi
# Before systemd 253 ProtectClock= implies DeviceAllow=char-rtc: every other device is denied.
if grep -q '^ProtectClock=' "$unit"; then fail "ProtectClock= would deny /dev/nvidia* on systemd < 253"; else pass; fi
if ! command -v systemd-analyze >/dev/null; then
  fail "systemd-analyze is not installed (run.sh test installs systemd)"
else
  # verify wants ExecStart= to exist: a copy of the unit points into the staging DESTDIR.
  mkdir -p "$work/verify"
  sed "s#=/usr/sbin/nccltuned#=$work/dest/usr/sbin/nccltuned#" "$unit" >"$work/verify/nccltuned.service"
  # The check itself works here: a unit with a typo is reported.
  sed 's/^Type=notify/Tpye=notify/' "$work/verify/nccltuned.service" >"$work/verify/broken-nccltuned.service"
  systemd-analyze verify "$work/verify/broken-nccltuned.service" >"$work/broken.log" 2>&1
  expect_in "$work/broken.log" "Tpye" "systemd-analyze reports a broken unit"
  # Our unit: nothing reported about its own lines (the host's other units may warn).
  systemd-analyze verify "$work/verify/nccltuned.service" >"$work/verify.log" 2>&1
  code=$?
  if [ "$code" -eq 0 ] && ! grep -q "nccltuned.service" "$work/verify.log"; then pass
  else fail "systemd-analyze verify (exit $code):"; sed 's/^/  | /' "$work/verify.log"; fi
fi

finish
