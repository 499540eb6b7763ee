#!/usr/bin/env python3
"""nccl_pingpong.py - NCCL's one-way time between two GPUs for the sizes of a ghost exchange (the scaling model's
latency and bandwidth).  Two processes under mpiexec, one GPU each, through PyTorch's NCCL backend; prints
"bytes us" lines (median of 200 round trips / 2, CUDA events), then "latency_us L" and "bandwidth_GBs B" from a fit."""
import os
import statistics

import torch
import torch.distributed as dist

rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", "0")))
size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")
torch.cuda.set_device(rank % torch.cuda.device_count())
dist.init_process_group("nccl", rank=rank, world_size=size)
peer = 1 - rank
rows = []
for nbytes in [8, 8 << 10, 64 << 10, 512 << 10, 1 << 20, 4 << 20]:
    buf = torch.zeros(max(1, nbytes // 8), dtype=torch.float64, device="cuda")
    times = []
    for it in range(220):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        dist.barrier()
        torch.cuda.synchronize()
        s.record()
        if rank == 0:
            dist.send(buf, peer)
            dist.recv(buf, peer)
        else:
            dist.recv(buf, peer)
            dist.send(buf, peer)
        e.record()
        torch.cuda.synchronize()
        if it >= 20:
            times.append(s.elapsed_time(e) * 1e3 / 2)
    rows.append((nbytes, statistics.median(times)))
# PETSc's inner products end in a host MPI_Allreduce of one double: its latency, where mpi4py runs
red = None
try:
    from mpi4py import MPI

    c = MPI.COMM_WORLD
    if c.Get_size() == size:
        v = []
        for it in range(1020):
            c.Barrier()
            t0 = MPI.Wtime()
            c.allreduce(1.0)
            if it >= 20:
                v.append((MPI.Wtime() - t0) * 1e6)
        red = statistics.median(v)
except Exception:
    pass
if rank == 0:
    if red is not None:
        print(f"allreduce_us {red:.2f}")
    for b, us in rows:
        print(f"{b} {us:.2f}")
    lat = rows[0][1]
    big = rows[-1]
    print(f"latency_us {lat:.2f}")
    print(f"bandwidth_GBs {big[0] / ((big[1] - lat) * 1e-6) / 1e9:.1f}")
dist.destroy_process_group()
