//! Which node an output is from: a single-node NCCL run whose rank ran on another host
//! (or in a Pod the Pod listing places on another node), probe steps that report
//! another node, a dcgm-exporter page labelled with another host, or the AMD test runner's
//! event from another host, are not this node's and must not be judged for it; `accept` refuses them.

use crate::accept::input::{Input, Output};
use crate::k8s::Pod;

/// The prefix of every rendered acceptance workload's name, and so of its Pods' names.
const WORKLOAD_PREFIX: &str = "nodeimg-acceptance-";

/// Where the host name a single-node run printed puts it, as far as the inputs prove.
fn elsewhere(host: &str, node: &str, pods: &[&Pod]) -> Option<String> {
    if host == node || host == "localhost" {
        return None;
    }
    // A Pod without hostNetwork is named after itself: the Pod listing places it.
    if let Some(pod) = pods.iter().find(|p| p.name == host) {
        return match pod.node.as_deref() {
            Some(n) if n != node => Some(format!("in Pod {host} on node {n}")),
            _ => None,
        };
    }
    // A Pod of the rendered workloads that the inputs do not place: nothing proves it
    // ran elsewhere (the Pod listing would).
    if host.starts_with(WORKLOAD_PREFIX) {
        return None;
    }
    Some(format!(
        "on {host} (a Pod? give its listing: kubectl get pod {host} -o json)"
    ))
}

/// Outputs that name another node than `node`: a single-node NCCL run on another host
/// (or in a Pod the Pod listing places on another node), probe steps that report another
/// node. Judging them for this node would be wrong.
pub fn foreign(inputs: &[Input], node: &str) -> Vec<String> {
    let pods: Vec<&Pod> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Pods(p) => Some(p),
            _ => None,
        })
        .flatten()
        .collect();
    let mut out = Vec::new();
    for input in inputs {
        match &input.output {
            Output::Nccl(runs) => {
                for run in runs {
                    let hosts = run.hosts();
                    if let [host] = hosts.as_slice()
                        && let Some(where_) = elsewhere(host, node, &pods)
                    {
                        out.push(format!(
                            "{}:{}: ranks ran {where_}, not on {node}",
                            input.path.display(),
                            run.lines.0
                        ));
                    }
                }
            }
            Output::Probe(steps) => {
                for step in steps {
                    if let Some(other) = step.node.as_deref().filter(|n| *n != node) {
                        out.push(format!(
                            "{}:{}: step `{}` ran on {other}, not on {node}",
                            input.path.display(),
                            step.line,
                            step.name
                        ));
                    }
                }
            }
            // dcgm-exporter labels its series with the node it runs on (`Hostname`,
            // NODE_NAME under the GPU Operator): another node's page maps other GPUs.
            Output::Exporter(scrape) => {
                if let Some(other) = scrape.hostname.as_deref().filter(|h| *h != node) {
                    out.push(format!(
                        "{}: dcgm-exporter's page is node {other}'s, not {node}'s",
                        input.path.display()
                    ));
                }
            }
            // The AMD test runner labels its event with the host it ran on.
            Output::TestRunner(events) => {
                for e in events {
                    if let Some(other) = e.host.as_deref().filter(|h| *h != node) {
                        out.push(format!(
                            "{}:{}: the test runner's event `{}` is from {other}, not {node}",
                            input.path.display(),
                            e.line,
                            e.name
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accept::input::{Format, parse};
    use std::path::PathBuf;

    /// A one-rank all_reduce whose rank line names `host`.
    fn nccl_on(host: &str) -> Input {
        let text = format!(
            "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n\
             #  Rank  0 Group  0 Pid  4242 on {host} device  0 [0000:0f:00] NVIDIA H100 80GB HBM3\n\
             #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n\
             \x20    1048576        262144     float     sum      -1    20.00   52.43   52.43       0    20.00   52.43   52.43       0\n\
             # Avg bus bandwidth    : 52.43\n"
        );
        Input {
            path: PathBuf::from("nccl.log"),
            output: parse(Format::Nccl, &text, "nccl.log").unwrap(),
        }
    }

    fn pod(name: &str, node: &str) -> Input {
        let text = format!(
            r#"{{"kind": "Pod", "metadata": {{"name": "{name}", "namespace": "nodeimg-acceptance"}},
                "spec": {{"nodeName": "{node}", "containers": []}}}}"#
        );
        Input {
            path: PathBuf::from("pods.json"),
            output: parse(Format::KubernetesPods, &text, "pods.json").unwrap(),
        }
    }

    #[test]
    fn a_run_in_a_pod_is_placed_by_what_the_inputs_prove() {
        // The node itself (hostNetwork) or a Pod of the rendered workloads that nothing
        // places elsewhere: judged for the node.
        assert!(foreign(&[nccl_on("gpu-node-01")], "gpu-node-01").is_empty());
        let in_pod = nccl_on("nodeimg-acceptance-nccl-x7k2p");
        assert!(foreign(std::slice::from_ref(&in_pod), "gpu-node-01").is_empty());
        // The Pod listing places it on this node, or on another.
        let here = [
            in_pod.clone(),
            pod("nodeimg-acceptance-nccl-x7k2p", "gpu-node-01"),
        ];
        assert!(foreign(&here, "gpu-node-01").is_empty());
        let there = [in_pod, pod("nodeimg-acceptance-nccl-x7k2p", "gpu-node-02")];
        let f = foreign(&there, "gpu-node-01");
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("on node gpu-node-02"), "{f:?}");
        // Another host, or a Pod of the user's own that no listing places: refused.
        let f = foreign(&[nccl_on("gpu-node-02")], "gpu-node-01");
        assert!(f[0].contains("kubectl get pod gpu-node-02"), "{f:?}");
        let mine = [nccl_on("my-nccl-run"), pod("my-nccl-run", "gpu-node-01")];
        assert!(foreign(&mine, "gpu-node-01").is_empty());
    }
}
