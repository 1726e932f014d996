#!/bin/sh
# nodeimg acceptance: runs a workload ("$@") while amd-smi samples every GPU's socket
# power, graphics clocks, temperatures and violation (throttle) flags twice a second, after
# reading each GPU's power cap once, then prints the samples (amd-smi's JSON, one array per
# call) after the workload's own output, under the line `nodeimg accept` looks for. The
# workload's exit status is the script's. `--throttle` needs amd-smi from ROCm 6.3 on. The
# section is tagged with the node's name where the Pod knows it (NODE_NAME).
{% include "cluster/acceptance/sample-power-modes.sh" %}
samples=$(mktemp)
stop=$(mktemp -u)
(
  amd-smi static --limit --json || exit
  while [ ! -e "$stop" ]; do
    amd-smi metric --power --clock --temperature --throttle --json || exit
    sleep 0.5
  done
) >"$samples" 2>&1 &
sampler=$!
"$@"
rc=$?
# The sampler finishes the call it is in, so its last document is whole.
: >"$stop"
wait "$sampler" 2>/dev/null
rm -f "$stop"
[ -n "$keep" ] && exec >"$keep"
echo "# nodeimg power samples${node:+ node=$node}"
cat "$samples"
rm -f "$samples"
exit "$rc"
