#!/usr/bin/env bash
# Runs the nccltune binary as ops would: exit codes, one-line errors, formats, snapshots.
# usage: cli_test.sh NCCLTUNE FIXTURES
nccltune=$1
fixtures=$2
source "$(dirname "$0")/lib.sh"

expect_exit 0 "--help" -- "$nccltune" --help
for sub in topo check; do
  expect_exit 0 "$sub --help" -- "$nccltune" "$sub" --help
  expect_in "$work/out" "--from" "$sub --help lists --from"
done

expect_exit 0 "healthy DGX-H100 check" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100"
expect_in "$work/out" "NCCL_IB_HCA='=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7'" "all eight NICs recommended"
# Problems only, as NHC prints them: a healthy node says its verdict and exports, no PASS line.
expect_equal "$(head -1 "$work/out")" "PASS: 34 checks, 0 warnings, 0 failures" "healthy check: the verdict first"
expect_not_in "$work/out" "PASS  " "healthy check: no PASS line"
expect_not_in "$work/out" "GPUDirect RDMA" "healthy check: no GDR state line"
expect_exit 0 "healthy DGX-H100 check --verbose" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100" --verbose
expect_equal "$(grep -c '^PASS  ' "$work/out")" 34 "check --verbose lists every check"
expect_equal "$(tail -1 "$work/out")" "PASS: 34 passed, 0 warnings, 0 failures" "check --verbose: its verdict line as before"

expect_exit 2 "degraded DGX-H100 check" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-degraded"
expect_in "$work/out" "FAIL  pcie_link         GPU2" "degraded link named"
expect_in "$work/out" "NIC5 (mlx5_5)" "down port named"
expect_in "$work/out" "DOWN" "down port state"
expect_equal "$(sed -n '/^[A-Z]*: /q;p' "$work/out" | cut -c1-6 | tr '\n' ' ')" "FAIL   FAIL   WARN   " \
  "degraded check: its two failures and its warning, nothing else, before the verdict"
expect_in "$work/out" "the link trained narrower; reseat or replace" "degraded check: the fix on the FAIL line"
expect_in "$work/out" "FAIL: 35 checks, 1 warning, 2 failures" "degraded check: the verdict line"
expect_not_in "$work/out" "PASS  " "degraded check: no PASS line"
expect_exit 2 "degraded DGX-H100 check --verbose" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-degraded" --verbose
expect_equal "$(grep -c '^PASS  ' "$work/out")" 32 "degraded check --verbose lists the passed checks too"

expect_exit 1 "idle DGX-H100 check (warnings only)" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-idle"

expect_exit 2 "degraded check as JSON" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-degraded" --format json
expect_in "$work/out" '"schema": "nccltune/check/v1"' "check JSON schema"
expect_in "$work/out" '"verdict": "FAIL"' "check JSON verdict"
expect_equal "$(grep -c '"verdict": "PASS"' "$work/out")" 32 "check JSON lists the passed checks"

# RoCE: the GID index NCCL should use, NICs that disagree on it, an MTU that caps RoCE's path MTU.
expect_exit 1 "RoCE box check (GPUs behind the other switch warn)" -- "$nccltune" check --from "$fixtures/nodes/pcie-4gpu"
expect_in "$work/out" "export NCCL_IB_GID_INDEX='3'" "RoCE v2 IPv4 GID index recommended"
expect_exit 1 "RoCE box check --verbose" -- "$nccltune" check --from "$fixtures/nodes/pcie-4gpu" --verbose
expect_in "$work/out" "PASS  roce_mtu          NIC0 (mlx5_0)        MTU 9000 on ens1f0np0: RoCE path MTU 4096" "jumbo MTU passes"
expect_exit 1 "two RoCE NICs at MTU 1500 (warnings only)" -- "$nccltune" check --from "$fixtures/nodes/roce-2nic-mtu1500"
expect_in "$work/out" "WARN  roce_gid_index    node" "GID index disagreement named"
expect_in "$work/out" "(mlx5_0: 3, mlx5_1: 5)" "each NIC's index named"
expect_in "$work/out" "ip link set dev ens2f0np0 mtu 9000" "MTU warning says what to do"
expect_not_in "$work/out" "NCCL_IB_GID_INDEX='" "no single GID index when the NICs disagree"

# GPUDirect RDMA's prerequisites.
expect_exit 1 "no nvidia_peermem on kernel 5.4 (warnings only)" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-no-peermem"
expect_in "$work/out" "neither nvidia_peermem nor nv_peer_mem is loaded, and dma-buf cannot be used (kernel 5.4.0-216-generic is older than 5.12" "missing peermem and old kernel named"
expect_in "$work/out" "GPUDirect RDMA is off whatever NCCL_NET_GDR_LEVEL says and network traffic is staged through host memory" "what NCCL does without GDR"
expect_exit 1 "no nvidia_peermem, --verbose" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-no-peermem" --verbose
expect_in "$work/out" "GPUDirect RDMA: blocked by gdr_peer_memory" "GDR verdict"
expect_exit 0 "healthy DGX-H100: GDR ready" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100" --verbose
expect_in "$work/out" "GPUDirect RDMA: ready" "GDR ready"
expect_exit 1 "IOMMU in DMA mode as JSON" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-iommu-dma" --format json
expect_in "$work/out" '"blocked_by": [' "GDR blockers in JSON"
expect_in "$work/out" '"gdr_iommu"' "the IOMMU named as the blocker"

cat >"$work/expect.yaml" <<'YAML'
gpus: 8
nics: 8
nic_rate_gbps: 800
max_gpu_nic_link: PIX
YAML
expect_exit 2 "check --expect with a faster NIC rate" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100" --expect "$work/expect.yaml"
expect_in "$work/out" "below the expected 800 Gb/s" "rate expectation named"

echo "gpus: 8" >"$work/typo.yaml"; echo "nic_rates: 4" >>"$work/typo.yaml"
expect_exit 3 "check --expect with an unknown key" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100" --expect "$work/typo.yaml"
expect_one_line "$work/err" "unknown expect key"
expect_in "$work/err" "typo.yaml:2: unknown key 'nic_rates'" "expect error names file and key"

expect_exit 0 "topo JSON from a snapshot" -- "$nccltune" topo --from "$fixtures/nodes/dgx-a100" --format json
expect_in "$work/out" '"schema": "nccltune/topology/v1"' "topology JSON schema"
expect_in "$work/out" '"GPU1": "NIC1"' "nearest NIC in JSON"
expect_in "$work/out" '"bar1_bytes": null,' "BAR1 unknown to a snapshot without it is null"
expect_exit 0 "topo YAML from nvidia-smi text" -- "$nccltune" topo --from "nvidia-smi:$fixtures/nvidia-smi/dgx-h100-8gpu-10nic.txt" --format yaml
expect_in "$work/out" 'schema: "nccltune/topology/v1"' "topology YAML schema"

# `nvidia-smi -q` text: each GPU's memory and BAR1 in bytes, null where the driver said N/A.
q=$fixtures/nvidia-smi-q
expect_exit 0 "topo JSON from nvidia-smi -q text" -- "$nccltune" topo --from "nvidia-smi-q:$q/rtx4090-x8-bar1-256m.txt" --format json
expect_in "$work/out" '"memory_bytes": 25757220864,' "FB total of 24564 MiB in bytes"
expect_in "$work/out" '"bar1_bytes": 268435456,' "BAR1 total of 256 MiB in bytes"
expect_in "$work/out" '"memory_bytes": "nvidia-smi"' "memory's source named"
expect_exit 0 "topo JSON from a Grace nvidia-smi -q" -- "$nccltune" topo --from "nvidia-smi-q:$q/gh200-gb10-bar1-na.txt" --format json
expect_in "$work/out" '"bar1_bytes": null,' "BAR1 N/A stays null"
expect_exit 0 "topo table from nvidia-smi -q text" -- "$nccltune" topo --from "nvidia-smi-q:$q/dgx-h100-8gpu-full.txt"
expect_in "$work/out" "GPU2    0000:3a:00.0  Gen5 x8 (max Gen5 x16) *    NVIDIA H100 80GB HBM3, 81559 MiB, BAR1 128 GiB" "narrow link, memory and BAR1 in the table"
expect_exit 2 "check of nvidia-smi -q text with a narrow link" -- "$nccltune" check --from "nvidia-smi-q:$q/dgx-h100-8gpu-full.txt"
expect_in "$work/out" "FAIL  pcie_link         GPU2" "narrow link from nvidia-smi -q named"
printf 'GPU 00000000:18:00.0\n    BAR1 Memory Usage\n        Total : 256 XiB\n' >"$work/bad-q.txt"
expect_exit 1 "a damaged nvidia-smi -q" -- "$nccltune" topo --from "nvidia-smi-q:$work/bad-q.txt"
expect_one_line "$work/err" "damaged nvidia-smi -q"
expect_in "$work/err" "bad-q.txt:3: '256 XiB' is not a size in KiB, MiB or GiB" "parse error names the file and line"

expect_exit 0 "topo as an NCCL topology file" -- "$nccltune" topo --from "$fixtures/nodes/dgx-h100" --format nccl-xml
expect_in "$work/out" '<system version="1"' "NCCL topology root"
# Well-formed as NCCL writes it, one tag a line: tags balanced, one root, nothing outside tags.
if awk '
  function fail_xml() { bad = 1; exit }
  /^ *<!--.*-->$/ { next }
  /^ *<\/[a-z]+>$/ { name = $0; sub(/^ *<\//, "", name); sub(/>$/, "", name)
                      if (depth == 0 || stack[depth] != name) fail_xml(); depth--; next }
  /^ *<[a-z]+( [a-z_]+="[^"<&]*")*\/>$/ { if (depth == 0) fail_xml(); next }
  /^ *<[a-z]+( [a-z_]+="[^"<&]*")*>$/ { name = $0; sub(/^ *</, "", name); sub(/[ >].*/, "", name)
                                        if (depth == 0 && roots++) fail_xml(); stack[++depth] = name; next }
  { fail_xml() }
  END { if (bad || depth != 0 || roots != 1) exit 1 }' "$work/out"; then pass; else fail "topo --format nccl-xml is not well-formed"; fi
gpus=$(grep -c '<gpu[ />]' "$work/out")
if [ "$gpus" -eq 8 ]; then pass; else fail "topo --format nccl-xml: $gpus <gpu> elements, expected 8"; fi

printf 'GPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tPIX\t X \n' >"$work/asym.txt"
expect_exit 1 "an asymmetric nvidia-smi matrix" -- "$nccltune" topo --from "nvidia-smi:$work/asym.txt"
expect_one_line "$work/err" "asymmetric matrix"
expect_in "$work/err" "asym.txt:" "parse error names the file"

expect_exit 3 "a missing snapshot (a usage error)" -- "$nccltune" topo --from "$work/nothing-here"
expect_one_line "$work/err" "missing snapshot"
expect_exit 1 "hwloc: with a truncated XML" -- bash -c "head -c 300 '$fixtures/nodes/dgx-h100/hwloc.xml' >'$work/cut.xml'; '$nccltune' topo --from 'hwloc:$work/cut.xml'"
expect_in "$work/err" "cut.xml" "truncated XML named"

expect_exit 0 "topo on this machine" -- "$nccltune" topo
expect_exit 0 "topo --capture on this machine" -- "$nccltune" topo --capture "$work/snap" --format json
expect_exit 0 "replay the capture" -- "$nccltune" topo --from "$work/snap" --format json
expect_exit 1 "capture into a non-empty directory" -- "$nccltune" topo --capture "$work/snap"
expect_in "$work/err" "not empty" "non-empty capture refused"

# topo: the peak of each generated node (JSON contract) and the table's line.
peak_of() {  # peak_of SNAPSHOT: "intra inter" from topo --format json
  "$nccltune" topo --from "$fixtures/nodes/$1" --format json | tr -d ' \n' |
    sed -n 's/.*"peak":{"intra_node_gbps":\([^,]*\),[^}]*"inter_node_gbps":\([^,]*\),.*/\1 \2/p'
}
expect_equal "$(peak_of dgx-h100)" "450.0 50.0" "DGX-H100: NVLink4 x18, 400G per GPU"
expect_equal "$(peak_of dgx-a100)" "300.0 25.0" "DGX-A100: NVLink3 x12, 200G per GPU"
expect_equal "$(peak_of pcie-4gpu)" "31.50769230769231 3.125" "PCIe Gen4 x16 box, one 100G NIC for 4 GPUs"
expect_equal "$(peak_of dgx-h100-degraded)" "450.0 null" "a rail down: across nodes unknown"
expect_exit 0 "topo table" -- "$nccltune" topo --from "$fixtures/nodes/dgx-h100"
expect_in "$work/out" "Peak per GPU and direction: within the node 450.0 GB/s (NVLink4 x18); across nodes 50.0 GB/s (1x mlx5 400 Gb/s per GPU)" "table: peak line"
expect_exit 0 "topo from nvidia-smi only" -- "$nccltune" topo --from "nvidia-smi:$fixtures/nvidia-smi/dgx-h100-8gpu-10nic.txt" --format json
expect_in "$work/out" '"intra_node_gbps": null' "nvidia-smi names no GPU model: peak unknown, not guessed"

# BAR1 smaller than the memory on a node with RDMA NICs: the healthy DGX-H100 snapshot, its GPUs
# given `nvidia-smi -q` totals (its own NVML knows none): 256 MiB warns, 128 GiB passes.
smi_q() {  # smi_q BAR1_MIB: nvidia-smi -q text for the DGX-H100's eight GPUs
  printf '==============NVSMI LOG==============\n\nDriver Version                            : 550.127.05\n\n'
  for bus in 18 2A 3A 5D 9A AB BA DB; do
    printf 'GPU 00000000:%s:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n' "$bus"
    printf '    FB Memory Usage\n        Total                             : 81559 MiB\n'
    printf '    BAR1 Memory Usage\n        Total                             : %s MiB\n' "$1"
  done
}
for bar1 in 256 131072; do
  cp -R "$fixtures/nodes/dgx-h100" "$work/bar1-$bar1"
  smi_q "$bar1" >"$work/bar1-$bar1/nvidia-smi-q.txt"
done
expect_exit 1 "BAR1 256 MiB with RDMA NICs" -- "$nccltune" check --from "$work/bar1-256"
expect_in "$work/out" "WARN  bar1              GPU0" "BAR1 warning per GPU"
expect_in "$work/out" "BAR1 256 MiB, memory 81559 MiB: BAR1 is smaller than the GPU's memory, so GPUDirect RDMA cannot map all of it" "BAR1 warning explained"
expect_exit 0 "BAR1 covering the memory" -- "$nccltune" check --from "$work/bar1-131072" --verbose
expect_in "$work/out" "BAR1 128 GiB, memory 81559 MiB: GPUDirect RDMA can map all of it" "BAR1 pass"
expect_exit 0 "topo --format json with BAR1" -- "$nccltune" topo --from "$work/bar1-256" --format json
expect_in "$work/out" '"bar1_bytes": 268435456' "BAR1 in the topology JSON"
expect_in "$work/out" '"memory_bytes": 85520809984' "memory in the topology JSON"

# import --from: published nccl-tests logs read against the node they ran on.
published=$fixtures/nccl-tests/published
import_peak() {  # import_peak DESCRIPTION EXPECTED LOG SNAPSHOT [ARGS...]
  local what=$1 want=$2 log=$3 snapshot=$4
  shift 4
  expect_exit 0 "$what" -- "$nccltune" import "$published/$log" --from "$fixtures/nodes/$snapshot" "$@"
  expect_in "$work/err" "$want" "$what: % of peak"
}
import_peak "2x H100, 16 ranks" "400 GB/s (network, 1x mlx5 400 Gb/s per GPU x 8 GPUs); busbw at 16G is 471.22 GB/s, 118% of peak (above the line rate" \
  oci-h100-2node-16rank-allreduce.txt dgx-h100
import_peak "8x H100 with SHARP, rank list elided" "busbw at 8G is 386.56 GB/s, 97% of peak" \
  coreweave-h100-64gpu-sharp-allreduce.txt dgx-h100 --nodes 8 --ranks 64
import_peak "2x H200, one GPU and NIC each" "50 GB/s (network, 1x mlx5 400 Gb/s per GPU); busbw at 8G is 31.89 GB/s, 64% of peak" \
  gke-h200-2node-1gpu-1nic-allreduce.txt dgx-h100
import_peak "GB200 NVL72 rack" "900 GB/s (NVLink5 x18, one NVLink domain of up to 72 GPUs across nodes); busbw at 8G is 834.57 GB/s, 93% of peak" \
  coreweave-gb200-nvl72-1rack-allreduce.txt gb200-tray --nodes 18 --ranks 72
expect_exit 0 "import --json FILE --from: the line on stdout" -- "$nccltune" import "$published/gke-h200-2node-1gpu-1nic-allreduce.txt" \
  --from "$fixtures/nodes/dgx-h100" --json "$work/gke.json"
expect_in "$work/out" "# Peak bus bandwidth   : 50 GB/s" "import --json: peak line on stdout"
expect_in "$work/gke.json" '"peak_busbw_gbps": 50.0' "import --json: peak in the JSON"
expect_exit 0 "import, rank list elided, no counts" -- "$nccltune" import "$published/coreweave-gb200-nvl72-1rack-allreduce.txt" --from "$fixtures/nodes/gb200-tray"
expect_in "$work/err" "unknown (the run's node and rank counts are not known (import: --nodes N --ranks N))" "unknown counts: said how to give them"

# import of nccl-tests' -J file: the rows the console output of the same run gives, at the
# precision the console printed (the file keeps 6 decimals); alltoallv's summary lines skipped.
rows_as_printed() {  # rows_as_printed BENCH_JSON: one line per row, numbers as nccl-tests prints them
  python3 - "$1" <<'PY'
import json, sys
def printed(value, width):
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        if len(fmt % (width, value)) <= width:
            return (fmt % (width, value)).strip()
    return "%.1e" % value
for row in json.load(open(sys.argv[1]))["rows"]:
    cells = [str(row[k]) for k in ("bytes", "count", "type", "redop", "root")]
    for m in (row["out_of_place"], row["in_place"]):
        cells += [printed(m["time_us"], 7), printed(m["algbw"], 6), printed(m["busbw"], 6), str(m["wrong"])]
    print(" ".join(cells))
PY
}
for pair in alltoallv-2.19.6-summary-json-pair all-reduce-2.19.6-per-iter-json-pair; do
  expect_exit 0 "import $pair.json" -- "$nccltune" import "$fixtures/nccl-tests/$pair.json" --json "$work/$pair-json.json"
  expect_exit 0 "import $pair.txt" -- "$nccltune" import "$fixtures/nccl-tests/$pair.txt" --json "$work/$pair-text.json"
  expect_in "$work/$pair-json.json" '"format": "nccl-tests-json"' "import $pair.json: says it read a -J file"
  expect_equal "$(rows_as_printed "$work/$pair-json.json")" "$(rows_as_printed "$work/$pair-text.json")" \
    "import $pair: the -J file gives the console output's rows"
done
expect_in "$work/err" "per-iteration columns (-I 1: i_min i_max i_p99 i_cv%) not imported" "import -I 1 console output: says what it left out"
printf '{"version":3,"results":[{"size":8,"count":2,"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":"fast"}}]}' >"$work/bad-run.json"
expect_exit 2 "import: a -J file with a bad field" -- "$nccltune" import "$work/bad-run.json"
expect_one_line "$work/err" "import: a -J file with a bad field"
expect_in "$work/err" "bad-run.json: results[0].out_of_place.time: not a number" "import: the bad field named"

# explain: NCCL INFO logs from public issues; exit codes as check's, JSON contract, stdin.
logs=$fixtures/nccl-info-logs
expect_exit 0 "explain, OFI plugin log" -- "$nccltune" explain "$logs/aws-ofi-nccl-715-p4d-efa-ofi-1.11.0.txt"
expect_exit 1 "explain, GDR off (warnings only)" -- "$nccltune" explain "$logs/nccl-1412-a100x16-2node-ib-no-gdr.txt"
expect_in "$work/out" "GDR       0/4 network connections" "explain text: GDR x/y"
expect_exit 2 "explain, IB completion errors" -- "$nccltune" explain "$logs/nccl-1405-roce-ipv6-completion-error-status12.txt" --format json
expect_in "$work/out" '"schema": "nccltune/nccl-log/v1"' "explain JSON schema"
expect_in "$work/out" '"check": "ib_completion"' "explain JSON verdict"
expect_exit 2 "explain - (stdin)" -- sh -c '"$1" explain - --format json <"$2"' sh "$nccltune" "$logs/synthetic-2.28-tuning-2node-ib.txt"
expect_in "$work/out" '"nccl_version": "2.28.9"' "explain stdin: version"
expect_in "$work/out" '"source": "-"' "explain stdin: named -"
expect_exit 1 "explain, several files" -- "$nccltune" explain "$logs/nccl-1052-h800-2node-roce-1hca-2.18.5.txt" "$logs/nccl-892-h800x8-nccl-algo-env-0-nvls.txt"
expect_exit 3 "explain, missing file" -- "$nccltune" explain "$work/no-such.log"
expect_one_line "$work/err" "explain, missing file"
# explain of current NCCL: GB200 MNNVL lines with one degraded GPU (a warning, not a failure),
# symmetric-kernel and copy-engine choices, rank 0's tuning table, all in the JSON.
expect_exit 1 "explain, GB200 MNNVL, one GPU degraded" -- "$nccltune" explain "$logs/synthetic-2.28-gb200-nvl72-mnnvl-degraded.txt" --format json
expect_in "$work/out" '"mnnvl": true' "explain JSON: mnnvl"
expect_in "$work/out" '"check": "mnnvl"' "explain JSON: MNNVL health verdict"
expect_in "$work/out" '"DEGRADED_BW"' "explain JSON: the health field named"
expect_exit 0 "explain, symmetric kernels and copy engine" -- "$nccltune" explain "$logs/synthetic-2.29-b200-symmetric-copy-engine.txt" --format json
expect_in "$work/out" '"kernel": "AllReduce_RSxLDMC_AGxSTMC"' "explain JSON: symmetric kernel choice"
expect_in "$work/out" '"path": "copy_engine"' "explain JSON: copy-engine choice"
expect_exit 0 "explain, tuning table" -- "$nccltune" explain "$logs/synthetic-2.28-tuning-table-8node-pat.txt" --format json
expect_in "$work/out" '"tuning_tables"' "explain JSON: tuning tables"
expect_in "$work/out" '"algo": "PAT"' "explain JSON: the table's PAT block"
# explain of 2025-26 logs as a careful reader reads them: a configured timeout is no failure, a
# setting a net plugin forced is info, a tuner that hands its choices back is NCCL's own, a log
# without INFO lines warns, NVLS follows what NCCL enabled, GDR advice names the cause the log gives.
expect_exit 0 "explain, NCCL_IB_TIMEOUT set (no timeout)" -- "$nccltune" explain "$logs/nccl-1814-ib-timeout-set-by-environment.txt"
expect_not_in "$work/out" "timeout " "explain: no timeout verdict from a variable's name"
expect_exit 1 "explain, aws-ofi-nccl 1.18 on g7e" -- "$nccltune" explain "$logs/aws-ofi-nccl-1.18-g7e-efa-2.29.2-plugin-forced-simple.txt"
expect_in "$work/out" "info  env            NCCL_PROTO=simple was set by the net plugin (aws-ofi-nccl)" "explain: plugin-forced protocol is info"
expect_in "$work/out" "tuner     internal (nccl_ofi_tuner fell back)" "explain: the fallen-back tuner is NCCL's own"
expect_in "$work/out" 'the log says why at' "explain: GDR advice names the cause"
expect_exit 1 "explain --format json, aws-ofi-nccl 1.18 on g7e" -- "$nccltune" explain "$logs/aws-ofi-nccl-1.18-g7e-efa-2.29.2-plugin-forced-simple.txt" --format json
expect_in "$work/out" '"in_effect": "internal"' "explain JSON: tuner in effect"
expect_in "$work/out" '"cuda_driver": "12.8"' "explain JSON: cudaDriverVersion"
expect_exit 1 "explain, nccl-tests without INFO lines" -- "$nccltune" explain "$logs/nccl-info-free-oci-b4-2.29.3-version-only.txt"
expect_in "$work/out" "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING" "explain: how to get NCCL's account"
expect_exit 1 "explain, NCCL_ALGO=RING" -- "$nccltune" explain "$logs/synthetic-2.28-nccl-algo-ring-nvls-available.txt"
expect_in "$work/out" "NVLS is off: NCCL_ALGO=RING leaves it out" "explain: NVLS off under NCCL_ALGO=RING"
expect_not_in "$work/out" "NVLS on with" "explain: NVLS not reported on"
expect_exit 1 "explain, asked-for tuner not found (2.28)" -- "$nccltune" explain "$logs/synthetic-2.28-tuner-plugin-not-found.txt"
expect_in "$work/out" "tuner plugin nccltune was asked for but NCCL fell back" "explain: asked for a tuner but fell back"
# import of a shell session, a head cut off, NCCL's INFO lines in between.
nccl_tests=$fixtures/nccl-tests
expect_exit 0 "import, prompt and echo around the command" -- "$nccltune" import "$nccl_tests/all-reduce-prompt-echo-session.txt" --json "$work/session.json"
expect_in "$work/session.json" '"mpirun"' "import: argv from the command, not the prompt or the echo"
expect_not_in "$work/session.json" 'root@gpu-st-ml-1' "import: the prompt is not argv"
expect_in "$work/session.json" '"ranks": 2' "import: -np read once the prompt is gone"
expect_exit 0 "import, head cut off" -- "$nccltune" import "$nccl_tests/all-reduce-2.29.2-g7e-head-cut.txt" --json "$work/headcut.json"
expect_in "$work/headcut.json" '"op_assumed": false' "import: the concluded line names the op"
expect_exit 0 "import, NCCL INFO lines" -- "$nccltune" import "$nccl_tests/all-reduce-2.29.2-g7e-efa-info-lines.txt" --json "$work/info.json"
expect_in "$work/info.json" '"cuda_driver": "12.8"' "import: NCCL's cudaDriverVersion"

# observe: NCCL Inspector's records (tests/fixtures/inspector) against a profile.
inspector=$fixtures/inspector
expect_exit 2 "observe, a straggler" -- "$nccltune" observe "$inspector/job-straggler" --profile "$fixtures/profiles/with-plugin-2n.yaml"
expect_in "$work/out" "rank 3 on node-b" "observe: the straggler named with its host"
expect_exit 1 "observe, below tuned and unmeasured" -- "$nccltune" observe "$inspector/job-2n2g" --profile "$fixtures/profiles/with-plugin-2n.yaml" --format json --out "$work/observe.json"
expect_in "$work/observe.json" '"schema": "nccltune/observe/v1"' "observe --out: the JSON written"
expect_in "$work/observe.json" '"tune": "nccltune tune --comms world,rail --ops all_reduce"' "observe: the tune line of an unmeasured rail"
expect_exit 1 "observe, bad records" -- "$nccltune" observe "$inspector/bad" "$inspector/empty"
expect_in "$work/err" "node-x-pid1.log:4: a truncated record" "observe: a truncated record named with file and line"
expect_in "$work/err" "empty: no Inspector records" "observe: an empty directory named"
# Inspector's Prometheus textfiles: what NCCL ran against the profile's choice; a suspect host.
expect_exit 1 "observe, textfiles" -- "$nccltune" observe "$inspector/prom-2n2g" --profile "$fixtures/profiles/with-plugin-2n.yaml" --format json
expect_in "$work/out" '"verdict": "not_served"' "observe: a textfile's algo_proto that is not the profile's choice"
expect_exit 2 "observe, a suspect host" -- "$nccltune" observe "$inspector/prom-suspect"
expect_in "$work/out" "node-c: 2 of 2 network communicators slow" "observe: the suspect named"
key=h100-80gb-hbm3.2gpu.nics-unknown.nccl2.28
mkdir -p -m 0755 "$work/observe-store/$key" && chmod 0755 "$work/observe-store"
install -m 0644 "$fixtures/profiles/with-plugin-2n.yaml" "$work/observe-store/$key/2n.yaml"
expect_exit 2 "observe --profiles, the store's profile for the job's 2 nodes" -- "$nccltune" observe "$inspector/job-straggler" --profiles "$work/observe-store" --node-type "$key"
expect_in "$work/out" "profile: $work/observe-store/$key/2n.yaml" "observe --profiles: the store's 2n.yaml read"
expect_in "$work/out" "world (2 nodes x 2)" "observe --profiles: the world's section"
expect_exit 3 "observe, no records at all" -- "$nccltune" observe "$inspector/empty"
expect_exit 3 "observe, --profile and --profiles" -- "$nccltune" observe "$inspector/job-2n2g" --profile a.yaml --profiles store --node-type k


# report --observed: what observe wrote, drawn alone and in the profile's report; a file observe
# did not write is one line naming it and the field.
expect_exit 0 "report --observed alone" -- "$nccltune" report --observed "$work/observe.json" -o "$work/observed.html"
expect_in "$work/observed.html" "The observed job alone: no profile given" "report --observed: the page says it has no profile"
expect_in "$work/observed.html" 'class="share unmeasured" data-shape="rail"' "report --observed: the unmeasured rail marked"
expect_exit 0 "report PROFILE --observed" -- "$nccltune" report "$fixtures/profiles/with-plugin-2n.yaml" --observed "$work/observe.json" -o "$work/observed-profile.html"
expect_in "$work/observed-profile.html" '<section id="observed">' "report PROFILE --observed: the section in the profile's report"
printf '{"schema": "nccltune/observe/v1", "context": {"dirs": []}}\n' >"$work/observe-bad.json"
expect_exit 2 "report --observed, a field missing" -- "$nccltune" report --observed "$work/observe-bad.json" -o "$work/bad.html"
expect_in "$work/err" "observe-bad.json: context.records: missing" "report --observed: the file and the field named"
expect_exit 2 "report --observed with --fleet and no profile" -- "$nccltune" report --observed "$work/observe.json" --fleet "$fixtures/fleet/survey-8n.json" -o "$work/bad.html"
expect_in "$work/err" "--observed without a PROFILE draws the observed job alone" "report --observed: what goes with it alone"

finish
