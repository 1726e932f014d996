{% raw %}#!/usr/bin/env python3
# nodeimg acceptance probe: run in the smoke Pod (layer 3) and the framework Jobs
# (layer 5), in the user's PyTorch image. Prints one JSON object per step in the
# probe/v1 format that `nodeimg accept` reads; everything else it prints is ignored.
#   python3 probe.py smoke                                  one process, every GPU
#   torchrun --standalone --nproc-per-node=N probe.py framework
#   torchrun/mpirun ... probe.py multinode                  several nodes
import json
import os
import sys
import time
import traceback

SUITE = sys.argv[1] if len(sys.argv) > 1 else "smoke"
FAILED = []


def env_int(*names, default=0):
    for n in names:
        if os.environ.get(n):
            return int(os.environ[n])
    return default


RANK = env_int("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
WORLD = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", default=1)
LOCAL = env_int("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID")
os.environ.setdefault("RANK", str(RANK))
os.environ.setdefault("WORLD_SIZE", str(WORLD))
os.environ.setdefault("LOCAL_RANK", str(LOCAL))


def emit(step, status, seconds, **fields):
    if RANK != 0 and SUITE != "smoke":
        return
    line = {"nodeimg": "probe/v1", "suite": "framework" if SUITE != "smoke" else "smoke",
            "step": step, "status": status, "seconds": round(seconds, 3)}
    # A multi-node run belongs to every node in it: it names none.
    if SUITE != "multinode":
        line["node"] = os.environ.get("NODE_NAME", os.uname().nodename)
    if SUITE == "smoke":
        # The Pod names itself (downward API): `nodeimg accept` matches the UUIDs it
        # prints with the pod dcgm-exporter's series attribute each GPU to.
        for key, env in (("pod", "POD_NAME"), ("namespace", "POD_NAMESPACE")):
            if os.environ.get(env):
                line[key] = os.environ[env]
    if SUITE != "smoke":
        line["rank"] = RANK
        line["world_size"] = WORLD
    line.update({k: v for k, v in fields.items() if v is not None})
    print(json.dumps(line), flush=True)


def step(name, fn):
    start = time.monotonic()
    try:
        fields = fn() or {}
        emit(name, "pass", time.monotonic() - start, **fields)
        return True
    except Exception as e:  # a failed step is a verdict, the next steps still run
        FAILED.append(name)
        traceback.print_exc(file=sys.stderr)
        emit(name, "fail", time.monotonic() - start, error=f"{type(e).__name__}: {e}"[:500])
        return False


def shm():
    # The size of this container's /dev/shm: the emptyDir the rendered shm policy
    # mounts (system.shmSize), or the sandbox's own 64 MiB tmpfs when it did not apply.
    st = os.statvfs("/dev/shm")
    return {"metrics": {"bytes": st.f_frsize * st.f_blocks}}


if SUITE == "smoke":
    step("shm", shm)

import torch  # noqa: E402  (after the helpers, so an import failure is still reported)


def mig_devices():
    # The MIG devices this container was given: {MIG UUID: (parent GPU UUID, GPU instance
    # id)}, what dcgm-exporter labels a MIG device's series with (UUID, GPU_I_ID). Inside
    # the container NVML lists only the MIG devices injected into it. `nvidia-smi -L`
    # names each one's UUID under its parent ("GPU 0: ... (UUID: GPU-...)", then
    # "  MIG 1g.10gb     Device  0: (UUID: MIG-...)"); `nvidia-smi -q -x` gives its
    # <gpu_instance_id> by the same <index> under the parent's <gpu> (<uuid>).
    import re
    import subprocess
    import xml.etree.ElementTree as ET
    try:
        run = lambda *a: subprocess.run(["nvidia-smi", *a], capture_output=True, text=True,
                                        timeout=120, check=True).stdout
        listing = run("-L")
        if "(UUID: MIG-" not in listing:
            return {}  # whole GPUs: the full query is not needed
        root = ET.fromstring(run("-q", "-x"))
    except (OSError, subprocess.SubprocessError, ET.ParseError):
        return {}
    instances = {}
    for gpu in root.findall("gpu"):
        for m in gpu.findall("mig_devices/mig_device"):
            gi = m.findtext("gpu_instance_id", "").strip()
            if gi.isdigit():
                instances[(gpu.findtext("uuid", "").strip(), m.findtext("index", "").strip())] = int(gi)
    out, parent = {}, None
    for line in listing.splitlines():
        g = re.match(r"GPU \d+: .*\(UUID: (GPU-[0-9a-fA-F-]+)\)", line)
        if g:
            parent = g.group(1)
            continue
        m = re.match(r"\s+MIG .*Device\s+(\d+): \(UUID: (MIG-[0-9a-fA-F-]+)\)", line)
        if m and parent and (parent, m.group(1)) in instances:
            out[m.group(2)] = (parent, instances[(parent, m.group(1))])
    return out


def device_list():
    out = []
    migs = mig_devices() if torch.version.cuda else {}
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        d = {"index": i, "name": p.name}
        uuid = getattr(p, "uuid", None)
        if uuid is not None:
            d["uuid"] = ("GPU-" if torch.version.cuda else "") + str(uuid)
            # A MIG device: CUDA names it by its own UUID (the MIG- one), or by its
            # parent's where only one MIG device of that GPU is in the container.
            mig = [k for k, (parent, _) in migs.items()
                   if k[4:].lower() == str(uuid).lower()
                   or (parent == d["uuid"] and sum(q == parent for q, _ in migs.values()) == 1)]
            if len(mig) == 1:
                d["uuid"] = mig[0]
                d["parent"], d["gpu_instance"] = migs[mig[0]]
        if hasattr(p, "pci_bus_id"):
            d["bus"] = "%04x:%02x:%02x.0" % (getattr(p, "pci_domain_id", 0), p.pci_bus_id,
                                            getattr(p, "pci_device_id", 0))
        out.append(d)
    return out


def devices():
    requested = int(os.environ.get("NODEIMG_REQUESTED", "0"))
    found = device_list()
    if requested and len(found) != requested:
        raise RuntimeError(f"received {len(found)} GPUs, requested {requested}")
    uuids = [d.get("uuid") for d in found if d.get("uuid")]
    if len(set(uuids)) != len(uuids):
        raise RuntimeError("a GPU was handed out twice")
    if SUITE == "smoke":
        return {"requested": requested, "devices": found}
    return {"metrics": {"count": len(found)}}


def matmul_tflops(device, n=8192, iters=20):
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize(device)
    start = time.monotonic()
    for _ in range(iters):
        c = a @ b
    torch.cuda.synchronize(device)
    if not torch.isfinite(c).all():
        raise RuntimeError(f"non-finite matmul result on {device}")
    return 2 * n ** 3 * iters / (time.monotonic() - start) / 1e12


def tensor():
    if SUITE == "smoke":
        rates = [matmul_tflops(torch.device("cuda", i)) for i in range(torch.cuda.device_count())]
        if not rates:
            raise RuntimeError("no GPU")
        return {"metrics": {"tflops": round(min(rates), 1)}}
    return {"metrics": {"tflops": round(matmul_tflops(torch.device("cuda", LOCAL)), 1)}}


def load():
    # A sustained matmul on this rank's GPU, long enough for nvidia-smi's one-second
    # power average to see the GPU at its power limit (DCGM's targeted power test holds
    # its load the same way): the power samples beside this run are judged on it.
    seconds = float(os.environ.get("NODEIMG_LOAD_SECONDS", "30"))
    device = torch.device("cuda", LOCAL)
    rates = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rates.append(matmul_tflops(device))
    return {"metrics": {"tflops": round(min(rates), 1)}}


def init():
    import torch.distributed as dist
    if not dist.is_initialized():
        torch.cuda.set_device(LOCAL)
        dist.init_process_group("nccl")  # RCCL on ROCm builds
    return dist


def all_reduce_busbw(size_bytes=1 << 30, iters=20):
    dist = init()
    x = torch.ones(size_bytes // 4, device="cuda", dtype=torch.float32)
    for _ in range(3):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    start = time.monotonic()
    for _ in range(iters):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    seconds = (time.monotonic() - start) / iters
    n = dist.get_world_size()
    # nccl-tests' bus bandwidth: algbw * 2(n-1)/n.
    return size_bytes / seconds / 1e9 * 2 * (n - 1) / max(n, 1)


def collective():
    return {"metrics": {"busbw_gbps": round(all_reduce_busbw(), 1)}}


def model(d=1024, layers=8):
    layer = torch.nn.TransformerEncoderLayer(d, 16, 4 * d, batch_first=True)
    return torch.nn.TransformerEncoder(layer, layers)


def inference():
    path = os.path.join(os.environ.get("NODEIMG_SCRATCH", "/tmp"), f"model-{RANK}.pt")
    torch.save(model().state_dict(), path)
    m = model().cuda(LOCAL).eval()
    m.load_state_dict(torch.load(path, map_location=f"cuda:{LOCAL}"))
    x = torch.randn(8, 512, 1024, device=f"cuda:{LOCAL}")
    with torch.inference_mode():
        m(x)
        torch.cuda.synchronize()
        start = time.monotonic()
        for _ in range(10):
            y = m(x)
        torch.cuda.synchronize()
    seconds = (time.monotonic() - start) / 10
    if not torch.isfinite(y).all():
        raise RuntimeError("non-finite inference output")
    return {"metrics": {"latency_ms": round(seconds * 1e3, 2),
                        "tokens_per_second": round(8 * 512 / seconds)}}


def checkpoint():
    path = os.path.join(os.environ.get("NODEIMG_SCRATCH", "/tmp"), f"ckpt-{RANK}.pt")
    m = model().cuda(LOCAL)
    opt = torch.optim.AdamW(m.parameters())
    m(torch.randn(2, 64, 1024, device=f"cuda:{LOCAL}")).sum().backward()
    opt.step()
    start = time.monotonic()
    torch.save({"model": m.state_dict(), "optimizer": opt.state_dict()}, path)
    saved = time.monotonic() - start
    start = time.monotonic()
    state = torch.load(path, map_location=f"cuda:{LOCAL}")
    restored = model().cuda(LOCAL)
    restored.load_state_dict(state["model"])
    torch.optim.AdamW(restored.parameters()).load_state_dict(state["optimizer"])
    loaded = time.monotonic() - start
    for (k, a), b in zip(m.state_dict().items(), restored.state_dict().values()):
        if not torch.equal(a, b):
            raise RuntimeError(f"{k} differs after restore")
    os.remove(path)
    return {"metrics": {"save_seconds": round(saved, 2), "restore_seconds": round(loaded, 2)}}


def multinode(steps=20, batch=8, seq=512):
    dist = init()
    m = torch.nn.parallel.DistributedDataParallel(model().cuda(LOCAL), device_ids=[LOCAL])
    opt = torch.optim.AdamW(m.parameters())
    x = torch.randn(batch, seq, 1024, device=f"cuda:{LOCAL}")
    for i in range(steps + 3):
        if i == 3:
            torch.cuda.synchronize()
            start = time.monotonic()
        opt.zero_grad()
        m(x).float().pow(2).mean().backward()
        opt.step()
    torch.cuda.synchronize()
    per_step = (time.monotonic() - start) / steps
    busbw = all_reduce_busbw()
    dist.barrier()
    return {"metrics": {"step_seconds": round(per_step, 3),
                        "tokens_per_second": round(batch * seq * dist.get_world_size() / per_step),
                        "busbw_gbps": round(busbw, 1)}}


if SUITE == "smoke":
    step("devices", devices)
    step("tensor", tensor)
    # Hold the GPUs a while: dcgm-exporter attributes a GPU to the Pod only while the Pod
    # runs, so its /metrics must be scraped before the Pod ends.
    hold = env_int("NODEIMG_HOLD_SECONDS")
    if hold > 0:
        print(f"holding the GPUs {hold} s for the dcgm-exporter scrape", flush=True)
        time.sleep(hold)
elif SUITE == "framework":
    for name, fn in [("devices", devices), ("tensor", tensor), ("load", load),
                     ("collective", collective), ("inference", inference),
                     ("checkpoint", checkpoint)]:
        step(name, fn)
elif SUITE == "multinode":
    step("multinode", multinode)
else:
    sys.exit(f"unknown suite {SUITE}: smoke, framework or multinode")
if SUITE != "smoke":
    try:
        import torch.distributed as dist
        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception:
        pass
sys.exit(1 if FAILED else 0)
{% endraw %}