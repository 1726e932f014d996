{% raw %}#!/bin/sh
# nodeimg acceptance: ib_write_bw on every active RDMA port between two nodes, one
# port after the other; rank 0 serves, rank 1 measures and prints perftest's report.
set -eu
RANK="${OMPI_COMM_WORLD_RANK:-${JOB_COMPLETION_INDEX:?no OMPI_COMM_WORLD_RANK or JOB_COMPLETION_INDEX}}"
port=18515
i=0
for dev in $(ls /sys/class/infiniband | sort); do
  case "$(cat "/sys/class/infiniband/$dev/ports/1/state" 2>/dev/null)" in
    *ACTIVE*) ;;
    *) continue ;;
  esac
  gpu=""
  if [ -n "${NODEIMG_GPU_API:-}" ]; then
    gpu="--use_${NODEIMG_GPU_API}=$((i % NODEIMG_GPUS))"
  fi
  if [ "$RANK" = 0 ]; then
    ib_write_bw -d "$dev" -p "$port" -s "$NODEIMG_RDMA_BYTES" -D 10 -F --report_gbits $gpu >/dev/null
  else
    sleep 5
    ib_write_bw -d "$dev" -p "$port" -s "$NODEIMG_RDMA_BYTES" -D 10 -F --report_gbits $gpu "$NODEIMG_RDMA_SERVER"
  fi
  port=$((port + 1))
  i=$((i + 1))
done
{% endraw %}
