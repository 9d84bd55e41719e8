#!/usr/bin/env python3
"""Writes a job's NCCL Inspector JSON records for bench/observe_bench.sh: 8 hosts x 8 GPUs (64
ranks), each rank's <host>-pid<pid>.log in Inspector's layout (NCCL v2.30.7-1
plugins/profiler/inspector/README.md, "Output Example"): per step a world AllReduce of a size that
cycles through 64K..256M, every 4th step a rail AllGather and a node ReduceScatter. Rank 13
(node-1, GPU 5) always has the shortest time in the world: it arrives last, a straggler.

usage: observe_inspector_gen.py DIR TOTAL_BYTES
"""
import os
import sys

HOSTS, GPUS = 8, 8
RANKS = HOSTS * GPUS
STRAGGLER = 13
SIZES = [1 << k for k in range(16, 29)]


def record(cid, name, rank, n, nn, host, pid, coll, sn, size, us, busbw):
    return ('{"header":{"id":"%s","comm_name":"%s","rank":%d,"n_ranks":%d,"nnodes":%d},'
            '"metadata":{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":'
            '"nccl_profiler_interface","dump_timestamp_us":%d,"hostname":"%s","pid":%d},'
            '"coll_perf":{"coll":"%s","coll_sn":%d,"coll_msg_size_bytes":%d,"coll_exec_time_us":%d,'
            '"coll_timing_source":"kernel_gpu","coll_algobw_gbs":%f,"coll_busbw_gbs":%f}}\n'
            % (cid, name, rank, n, nn, 1752867229276385 + sn * 50, host, pid, coll, sn, size, us,
               busbw * 0.55, busbw))


def main():
    out, total = sys.argv[1], int(sys.argv[2])
    sample = record("0x1a2b3c4d5e6f7081", "world", 63, 64, 8, "node-7", 100063, "AllReduce", 99999,
                    1 << 20, 1234, 123.456789)
    steps = max(1, int(total / RANKS / (len(sample) * 1.5)))  # 1 world + 0.5 rail/node per step
    for rank in range(RANKS):
        host_index, gpu = divmod(rank, GPUS)
        host, pid = "node-%d" % host_index, 100000 + rank
        lines = []
        rail_sn = node_sn = 0
        for step in range(1, steps + 1):
            size = SIZES[step % len(SIZES)]
            base = 20 + size // 20000
            us = base // 2 if rank == STRAGGLER else base + (rank * 7 + step) % 5
            lines.append(record("0x1a2b3c4d5e6f7081", "world", rank, RANKS, HOSTS, host, pid, "AllReduce", step,
                                size, us, 300.0 + (step % 7)))
            if step % 4 == 0:
                rail_sn += 1
                lines.append(record("0x2b%014x" % gpu, "rail %d" % gpu, host_index, HOSTS, HOSTS, host, pid,
                                    "AllGather", rail_sn, size // 8, base // 3, 45.0 + (step % 3)))
                node_sn += 1
                lines.append(record("0x3c%014x" % host_index, "node %d" % host_index, gpu, GPUS, 1, host, pid,
                                    "ReduceScatter", node_sn, size // 8, base // 4, 350.0 + (step % 5)))
        with open(os.path.join(out, "%s-pid%d.log" % (host, pid)), "w") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
