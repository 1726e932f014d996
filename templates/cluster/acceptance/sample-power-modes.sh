#
# The power sampler's forms common to both vendors (included by sample-power.sh and
# sample-power-amd.sh): after it, `node` is the node's name where known and, with
# NODEIMG_POWER_KEEP set, the section goes to that file.
#
# Multi-node runs started by an MPI launcher (the MPI Operator) take three more forms:
#   --worker CMD...    a worker Pod keeps its node's name for the ranks (which sshd
#                      starts without the Pod's environment), then runs CMD (sshd);
#   CMD... with NODEIMG_POWER_KEEP set (mpirun -x): one rank per node (local rank 0)
#                      samples and keeps its section in that file instead of printing it;
#   --launcher MPIRUN...  the launcher runs MPIRUN, then has each worker in turn print
#                      its kept section (--print, given MPIRUN's -x NODEIMG_POWER_KEEP:
#                      the file is named once, in the launcher's command): ranks of
#                      several nodes printing at once would interleave their lines in
#                      the launcher's log.
# The node's name is kept in /tmp/nodeimg-node, the launcher reads the workers from the
# MPI Operator's /etc/mpi/hostfile (NODEIMG_NODE_FILE and NODEIMG_MPI_HOSTFILE name others).
node_file=${NODEIMG_NODE_FILE:-/tmp/nodeimg-node}
keep=${NODEIMG_POWER_KEEP:-}
case "$1" in
  --worker)
    shift
    printf '%s\n' "${NODE_NAME:-}" >"$node_file"
    exec "$@"
    ;;
  --print)
    cat "$keep" 2>/dev/null ||
      printf '# nodeimg power samples node=%s\nno samples kept on this worker\n' \
        "$(cat "$node_file" 2>/dev/null)"
    exit 0
    ;;
  --launcher)
    shift
    rsh=
    kept=
    prev=
    for arg in "$@"; do
      [ "$prev" = plm_rsh_args ] && rsh=$arg
      [ "$prev" = -x ] && case "$arg" in NODEIMG_POWER_KEEP=*) kept=$arg ;; esac
      prev=$arg
    done
    "$@"
    rc=$?
    set --
    [ -n "$rsh" ] && set -- "$@" --mca plm_rsh_args "$rsh"
    [ -n "$kept" ] && set -- "$@" -x "$kept"
    for host in $(sed 's/[ :].*//' "${NODEIMG_MPI_HOSTFILE:-/etc/mpi/hostfile}"); do
      mpirun --allow-run-as-root -np 1 --host "$host" "$@" /bin/sh "$0" --print
    done
    exit "$rc"
    ;;
esac
if [ -n "$keep" ] && [ "${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-0}}" != 0 ]; then
  exec "$@"
fi
node=${NODE_NAME:-$(cat "$node_file" 2>/dev/null)}
