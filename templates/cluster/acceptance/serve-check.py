{% raw %}#!/usr/bin/env python3
# nodeimg acceptance: an inference engine on the node's GPUs (layer 5). Starts the
# engine's OpenAI-compatible server on the model shipped in the image, waits until it is
# healthy, asks it a fixed prompt once (streamed, greedy), and prints one probe/v1 line
# (suite "inference", step "serve") with the time to the first token and the generation
# rate; `nodeimg accept` judges them. Only the standard library: any engine image runs it.
#   python3 serve-check.py vllm|sglang|trtllm MODEL GPUS MAX_TOKENS
import http.client
import json
import os
import signal
import subprocess
import sys
import time

ENGINE, MODEL, GPUS, MAX_TOKENS = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
PORT = int(os.environ.get("NODEIMG_PORT", "8000"))
PROMPT = "List the first ten prime numbers, separated by commas:"
READY_SECONDS = int(os.environ.get("NODEIMG_READY_SECONDS", "900"))
SERVERS = {
    "vllm": ["vllm", "serve", MODEL, "--port", str(PORT), "--tensor-parallel-size", str(GPUS),
             "--served-model-name", "nodeimg"],
    "sglang": ["python3", "-m", "sglang.launch_server", "--model-path", MODEL, "--port",
               str(PORT), "--tp-size", str(GPUS), "--served-model-name", "nodeimg"],
    # TensorRT-LLM 1.0 (`trtllm-serve <model> [--tp_size --host --port]`, the PyTorch
    # backend by default): its server has no served-name option in every release; the
    # name it serves the model under is asked of /v1/models.
    "trtllm": ["trtllm-serve", MODEL, "--host", "127.0.0.1", "--port", str(PORT), "--tp_size",
               str(GPUS)],
}
# Engines that serve the model under a name of their own, asked of /v1/models.
LISTED = {"trtllm"}


def emit(status, seconds, **fields):
    line = {"nodeimg": "probe/v1", "suite": "inference", "step": "serve", "status": status,
            "seconds": round(seconds, 3),
            "node": os.environ.get("NODE_NAME", os.uname().nodename)}
    line.update({k: v for k, v in fields.items() if v is not None})
    print(json.dumps(line), flush=True)


def request(method, path, body=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    return c, c.getresponse()


def ready(server):
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{ENGINE} exited with status {server.returncode} before serving")
        try:
            c, r = request("GET", "/health", timeout=5)
            r.read()
            c.close()
            if r.status == 200:
                return
        except OSError:
            pass
        time.sleep(2)
    raise RuntimeError(f"{ENGINE} not healthy after {READY_SECONDS} s")


def served_name():
    if ENGINE not in LISTED:
        return "nodeimg"
    c, r = request("GET", "/v1/models")
    listed = json.loads(r.read() or b"{}")
    c.close()
    if r.status != 200 or not listed.get("data"):
        raise RuntimeError(f"/v1/models answered {r.status} without a model: {listed!r:.300}")
    return listed["data"][0]["id"]


def ask():
    body = {"model": served_name(), "prompt": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0,
            "stream": True, "stream_options": {"include_usage": True}}
    start = time.monotonic()
    c, r = request("POST", "/v1/completions", body, timeout=300)
    if r.status != 200:
        raise RuntimeError(f"/v1/completions answered {r.status}: {r.read()[:300]!r}")
    first = None
    chunks = 0
    tokens = None
    text = ""
    for raw in r:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        event = json.loads(data)
        for choice in event.get("choices") or []:
            if choice.get("text"):
                if first is None:
                    first = time.monotonic()
                chunks += 1
                text += choice["text"]
        usage = event.get("usage")
        if usage and usage.get("completion_tokens"):
            tokens = usage["completion_tokens"]
    end = time.monotonic()
    c.close()
    if first is None:
        raise RuntimeError("the server streamed no token")
    tokens = tokens or chunks
    rate = (tokens - 1) / (end - first) if tokens > 1 and end > first else 0.0
    if "2" not in text or "3" not in text:
        raise RuntimeError(f"unexpected answer to the fixed prompt: {text[:200]!r}")
    return {"metrics": {"ttft_ms": round((first - start) * 1e3, 1),
                        "tokens_per_second": round(rate, 1), "tokens": tokens}}


if ENGINE not in SERVERS:
    sys.exit(f"unknown engine {ENGINE}: vllm, sglang or trtllm")
start = time.monotonic()
server = subprocess.Popen(SERVERS[ENGINE], stdout=sys.stderr, stderr=sys.stderr)
status = 0
try:
    ready(server)
    fields = ask()
    emit("pass", time.monotonic() - start, **fields)
except Exception as e:  # a failed check is a verdict
    emit("fail", time.monotonic() - start, error=f"{type(e).__name__}: {e}"[:500])
    status = 1
finally:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
sys.exit(status)
{% endraw %}
