#!/usr/bin/env bash
# Real NCCL's own words for rules of tests/fake-gpu/FIDELITY.md that one GPU can show: how it reads
# channel bounds (F5: MAX first, then MIN; CTA bounds) and integer values (F19: strtoll, trailing
# text dropped, no digits 0). A one-rank communicator reads neither NCCL_ALGO/NCCL_PROTO nor
# NCCL_NET_GDR_LEVEL and has no NVLS (it skips its tuning model and the network, and NVLS needs 2
# GPUs): those rules need 2+ GPUs. Each setting runs in a fresh process (NCCL reads a variable once
# per process) with NCCL_DEBUG=INFO, one rank through PyTorch's NCCL (the GPU machine's image has
# it); the lines that answer are printed. Not a ctest: run it by hand where a GPU is, and copy what
# it prints into the ledger's evidence.
# usage: tests/gpu/nccl_rules_probe.sh [OUTDIR]
set -u
out=${1:-$(mktemp -d)}
mkdir -p "$out"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
python3 - <<'EOF' || { echo "nccl_rules_probe: no PyTorch with CUDA here"; exit 77; }
import torch
assert torch.cuda.is_available()
print("torch", torch.__version__, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))
EOF

probe() {  # probe NAME VAR=VALUE...: one all_reduce on a one-rank NCCL communicator
  local name=$1
  shift
  env "$@" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,TUNING python3 - >"$out/$name.log" 2>&1 <<'EOF'
import os, torch, torch.distributed as dist
dist.init_process_group("nccl", rank=0, world_size=1, init_method="tcp://127.0.0.1:%d" % (29500 + os.getpid() % 1000),
                        device_id=torch.device("cuda:0"))
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print("PROBE all_reduce ok", float(x[0]))
dist.destroy_process_group()
EOF
  echo "== $name: $*"
  grep -E "coll channels|NVLS multicast|set by environment|Invalid value|Unrecognized|must have a prefix|PROBE|Error|WARN|Algo .* proto" \
    "$out/$name.log" | sed -E 's/^[^ ]+ [^ ]+ NCCL INFO //' | sort | uniq -c | head -20
}

probe defaults
probe min32 NCCL_MIN_NCHANNELS=32
probe min32_max8 NCCL_MIN_NCHANNELS=32 NCCL_MAX_NCHANNELS=8
probe max_ctas8 NCCL_MAX_CTAS=8
probe min_ctas24 NCCL_MIN_CTAS=24
probe max_abc NCCL_MAX_NCHANNELS=abc
probe min_32x NCCL_MIN_NCHANNELS=32x
exit 0
