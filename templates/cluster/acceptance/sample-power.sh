#!/bin/sh
# nodeimg acceptance: runs a workload ("$@") while nvidia-smi samples every GPU's power
# draw, power limit, SM clock, temperature and clock event (throttle) reasons twice a
# second, then prints the samples after the workload's own output, under the line
# `nodeimg accept` looks for, tagged with the node's name where the Pod knows it
# (NODE_NAME). The workload's exit status is the script's.
{% include "cluster/acceptance/sample-power-modes.sh" %}
samples=$(mktemp)
nvidia-smi --query-gpu=timestamp,index,pci.bus_id,power.draw,enforced.power.limit,clocks.sm,clocks.max.sm,temperature.gpu,clocks_throttle_reasons.sw_power_cap,clocks_throttle_reasons.hw_slowdown,clocks_throttle_reasons.hw_thermal_slowdown,clocks_throttle_reasons.hw_power_brake_slowdown,clocks_throttle_reasons.sw_thermal_slowdown \
  --format=csv -lms 500 >"$samples" 2>&1 &
sampler=$!
"$@"
rc=$?
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
[ -n "$keep" ] && exec >"$keep"
echo "# nodeimg power samples${node:+ node=$node}"
cat "$samples"
rm -f "$samples"
exit "$rc"
