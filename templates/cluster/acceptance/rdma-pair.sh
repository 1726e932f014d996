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
  # RoCE: the RoCE v2 GID of the port's IPv4 address (::ffff:a.b.c.d), as show_gids
  # lists it, unless the blueprint names the index. perftest's default, index 0, is the
  # link-local RoCE v1 GID that routed RoCE fabrics do not carry.
  gid=""
  if [ "$(cat "/sys/class/infiniband/$dev/ports/1/link_layer" 2>/dev/null)" = Ethernet ]; then
    idx="${NODEIMG_RDMA_GID_INDEX:-}"
    if [ -z "$idx" ]; then
      for t in "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/"*; do
        n="${t##*/}"
        [ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
        case "$(cat "/sys/class/infiniband/$dev/ports/1/gids/$n" 2>/dev/null)" in
          0000:0000:0000:0000:0000:ffff:*) idx="$n"; break ;;
        esac
      done
    fi
    if [ -z "$idx" ]; then
      echo "nodeimg: $dev: no RoCE v2 GID with an IPv4 address: the rail has no address in this Pod" >&2
      exit 1
    fi
    gid="-x $idx"
  fi
  gpu=""
  if [ -n "${NODEIMG_GPU_API:-}" ]; then
    gpu="--use_${NODEIMG_GPU_API}=$((i % NODEIMG_GPUS))"
    # Without OFED there is no nvidia_peermem: the GPU buffers are registered through
    # DMA-BUF (ibv_reg_dmabuf_mr), and perftest says "using DMA-BUF".
    if [ "${NODEIMG_GPU_DMABUF:-}" = 1 ]; then
      gpu="$gpu --use_cuda_dmabuf"
    fi
  fi
  if [ "$RANK" = 0 ]; then
    ib_write_bw -d "$dev" -p "$port" -s "$NODEIMG_RDMA_BYTES" -D 10 -F --report_gbits $gid $gpu >/dev/null
  else
    sleep 5
    ib_write_bw -d "$dev" -p "$port" -s "$NODEIMG_RDMA_BYTES" -D 10 -F --report_gbits $gid $gpu "$NODEIMG_RDMA_SERVER"
  fi
  port=$((port + 1))
  i=$((i + 1))
done
{% endraw %}
