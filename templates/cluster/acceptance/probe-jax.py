{% raw %}#!/usr/bin/env python3
# nodeimg acceptance probe for JAX: run in the JAX framework Job (layer 5), in the
# user's JAX image. Prints one JSON object per step in the probe/v1 format that
# `nodeimg accept` reads (suite "jax"); everything else it prints is ignored.
#   python3 probe-jax.py jax          one process, every local device
#   python3 probe-jax.py multinode    one process per node; JAX_COORDINATOR_ADDRESS,
#                                     JAX_NUM_PROCESSES and JAX_PROCESS_ID name the run
import json
import os
import sys
import time
import traceback

SUITE = sys.argv[1] if len(sys.argv) > 1 else "jax"
FAILED = []
PROCESS = int(os.environ.get("JAX_PROCESS_ID", "0"))


def emit(step, status, seconds, **fields):
    if PROCESS != 0:
        return
    line = {"nodeimg": "probe/v1", "suite": "jax", "step": step, "status": status,
            "seconds": round(seconds, 3)}
    # A multi-node run belongs to every node in it: it names none.
    if SUITE != "multinode":
        line["node"] = os.environ.get("NODE_NAME", os.uname().nodename)
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


if SUITE not in ("jax", "multinode"):
    sys.exit(f"unknown suite {SUITE}: jax or multinode")
if SUITE == "multinode":
    import jax  # noqa: E402
    jax.distributed.initialize(
        coordinator_address=os.environ["JAX_COORDINATOR_ADDRESS"],
        num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
        process_id=PROCESS)
import jax  # noqa: E402,F811  (after the helpers, so an import failure is still reported)
import jax.numpy as jnp  # noqa: E402


def gpus():
    return [d for d in jax.local_devices() if d.platform in ("gpu", "cuda", "rocm")]


def devices():
    requested = int(os.environ.get("NODEIMG_REQUESTED", "0"))
    found = gpus()
    if requested and len(found) != requested:
        raise RuntimeError(f"JAX sees {len(found)} GPUs, requested {requested}")
    return {"metrics": {"count": len(found)}}


def matmul_tflops(device, n=8192, iters=20):
    key = jax.random.PRNGKey(0)
    a = jax.device_put(jax.random.normal(key, (n, n), dtype=jnp.bfloat16), device)
    b = jax.device_put(jax.random.normal(key, (n, n), dtype=jnp.bfloat16), device)
    f = jax.jit(lambda x, y: x @ y)
    f(a, b).block_until_ready()
    start = time.monotonic()
    for _ in range(iters):
        c = f(a, b)
    c.block_until_ready()
    seconds = time.monotonic() - start
    if not bool(jnp.isfinite(c).all()):
        raise RuntimeError(f"non-finite matmul result on {device}")
    return 2 * n ** 3 * iters / seconds / 1e12


def tensor():
    rates = [matmul_tflops(d) for d in gpus()]
    if not rates:
        raise RuntimeError("no GPU")
    return {"metrics": {"tflops": round(min(rates), 1)}}


def psum_busbw(size_bytes=1 << 28, iters=20):
    # An all-reduce (psum) across every device of the run, as pmap lays it out: NCCL or
    # RCCL underneath, bus bandwidth as nccl-tests counts it.
    local = jax.local_device_count()
    n = jax.device_count()
    x = jnp.ones((local, size_bytes // 4), dtype=jnp.float32)
    f = jax.pmap(lambda v: jax.lax.psum(v, "d"), axis_name="d")
    y = f(x)
    y.block_until_ready()
    if float(y[0][0]) != float(n):
        raise RuntimeError(f"psum over {n} devices gave {float(y[0][0])}")
    start = time.monotonic()
    for _ in range(iters):
        y = f(x)
    y.block_until_ready()
    seconds = (time.monotonic() - start) / iters
    return size_bytes / seconds / 1e9 * 2 * (n - 1) / max(n, 1)


def collective():
    return {"metrics": {"busbw_gbps": round(psum_busbw(), 1), "devices": jax.device_count()}}


def multinode():
    busbw = psum_busbw()
    return {"metrics": {"busbw_gbps": round(busbw, 1), "devices": jax.device_count(),
                        "processes": jax.process_count()}}


if SUITE == "jax":
    for name, fn in [("devices", devices), ("tensor", tensor), ("collective", collective)]:
        step(name, fn)
else:
    step("multinode", multinode)
sys.exit(1 if FAILED else 0)
{% endraw %}
