//! The rendered acceptance workloads (`cluster/acceptance/`): which ones each example
//! blueprint renders, that every Pod lands only on gated nodes of its blueprint, runs a
//! pinned image and gets the node's GPUs through the declared path, and — in the opt-in
//! corpus suite — that every manifest validates against the published schema of its kind,
//! kubeconform-style: core kinds against yannh's standalone-strict schemas, MPIJob and
//! JobSet against their CRDs' `openAPIV3Schema` tightened with `additionalProperties: false`.

use std::collections::BTreeMap;

use crate::support::{accept_fixture, k8s_schema, k8s_schema::validate, root, variant::Variant};
use nodeimg::blueprint::model::acceptance::pinned;
use nodeimg::render::{Templates, render};
use serde_json::{Value, json};

/// The diagnostics of a variant that does not load, as `path: message` lines.
fn refused(v: &Variant) -> String {
    v.try_load()
        .expect_err("refused")
        .iter()
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `cluster/acceptance/*` of a blueprint, each file parsed as one YAML document.
fn acceptance(v: &Variant) -> BTreeMap<String, Value> {
    let bp = v.load();
    let rendered = render(&bp, &Templates::embedded()).unwrap_or_else(|e| panic!("{e}"));
    rendered
        .cluster
        .files()
        .filter_map(|(path, _, bytes)| {
            let name = path.strip_prefix("acceptance/")?;
            if !name.ends_with(".yaml") {
                return None; // whole-gpus.sh
            }
            let doc: Value = serde_yaml::from_slice(bytes)
                .unwrap_or_else(|e| panic!("{path}: {e}\n{}", String::from_utf8_lossy(bytes)));
            Some((name.to_owned(), doc))
        })
        .collect()
}

/// `cluster/remediation/readmission*`: the acceptance workloads placed for re-admission,
/// and their table.
fn readmission(v: &Variant) -> BTreeMap<String, Value> {
    let bp = v.load();
    let rendered = render(&bp, &Templates::embedded()).unwrap_or_else(|e| panic!("{e}"));
    rendered
        .cluster
        .files()
        .filter(|(path, _, _)| path.starts_with("remediation/readmission"))
        .map(|(path, _, bytes)| {
            let doc: Value =
                serde_yaml::from_slice(bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
            (path.to_owned(), doc)
        })
        .collect()
}

fn names(docs: &BTreeMap<String, Value>) -> Vec<(&str, &str)> {
    docs.iter()
        .map(|(n, d)| (n.as_str(), d["kind"].as_str().unwrap()))
        .collect()
}

/// Every Pod spec in an object (a Pod's `spec`, a Job's template, each MPIJob replica's,
/// each JobSet replicated Job's), with its path.
fn pod_specs<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(o) => {
            if o.contains_key("containers") {
                out.push((at.clone(), v));
            }
            for (k, x) in o {
                pod_specs(x, format!("{at}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pod_specs(x, format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn examples_render_the_workloads_that_apply_to_them() {
    let h100 = acceptance(&Variant::of("h100-sxm-ubuntu"));
    assert_eq!(
        names(&h100),
        vec![
            ("dcgm-diag-job.yaml", "Job"),
            ("framework-job.yaml", "Job"),
            ("framework-multinode.yaml", "MPIJob"),
            ("namespace.yaml", "Namespace"),
            ("nccl-job.yaml", "Job"),
            ("nccl-multinode.yaml", "MPIJob"),
            ("nvbandwidth-job.yaml", "Job"),
            ("rdma-pair.yaml", "MPIJob"),
            ("scripts.yaml", "ConfigMap"),
            ("smoke-pod.yaml", "Pod"),
            ("storage-job.yaml", "Job"),
        ]
    );
    // AMD: the operator's test runner in place of DCGM, rocm-bandwidth-test in place of
    // nvbandwidth (`-a`, the matrix the thresholds are defined on, then `-A`); JobSet for the
    // multi-node runs; the blueprint leaves the multi-node all-reduce out.
    let mi300x = acceptance(&Variant::of("mi300x-rhel"));
    let rbt = &mi300x["rocm-bandwidth-job.yaml"]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        rbt["command"][2],
        "rocm-bandwidth-test -a && rocm-bandwidth-test -A"
    );
    assert_eq!(
        names(&mi300x),
        vec![
            ("framework-job.yaml", "Job"),
            ("framework-multinode.yaml", "JobSet"),
            ("namespace.yaml", "Namespace"),
            ("nccl-job.yaml", "Job"),
            ("rdma-pair.yaml", "JobSet"),
            ("rocm-bandwidth-job.yaml", "Job"),
            ("scripts.yaml", "ConfigMap"),
            ("smoke-pod.yaml", "Pod"),
            ("test-runner-access.yaml", "List"),
            ("test-runner-job.yaml", "Job"),
        ]
    );
    assert!(acceptance(&Variant::of("cpu-minimal")).is_empty());
    // Without images nothing renders (nodeimg never picks an image for you).
    let bare = Variant::of("h100-sxm-ubuntu").set("acceptance", json!({"dcgm": {"level": 2}}));
    assert!(acceptance(&bare).is_empty());
    // The DCGM level reaches the command line.
    let level2 = Variant::of("h100-sxm-ubuntu").set("acceptance.dcgm.level", json!(2));
    let dcgm = &acceptance(&level2)["dcgm-diag-job.yaml"];
    let command = dcgm["spec"]["template"]["spec"]["containers"][0]["command"][2]
        .as_str()
        .unwrap();
    assert!(command.ends_with("dcgmi diag -r 2 -j"), "{command}");
}

#[test]
fn every_pod_is_gated_pinned_and_gets_every_gpu() {
    for (bp, labels, resource) in [
        (
            "h100-sxm-ubuntu",
            vec![("platform.example.com/node-class", "h100-sxm")],
            "nvidia.com/gpu",
        ),
        ("mi300x-rhel", vec![], "amd.com/gpu"),
    ] {
        let docs = acceptance(&Variant::of(bp));
        for (file, doc) in &docs {
            let mut specs = Vec::new();
            pod_specs(doc, file.clone(), &mut specs);
            for (at, spec) in specs {
                let containers = spec["containers"].as_array().unwrap();
                for c in containers {
                    let image = c["image"].as_str().unwrap();
                    assert!(pinned(image).is_ok(), "{at}: {image}");
                }
                // MPI launchers only start the ranks: they may run anywhere.
                if containers[0]["name"] == "launcher" {
                    assert!(c_has_no_gpu(containers), "{at}: a launcher holds GPUs");
                    continue;
                }
                let selector = &spec["nodeSelector"];
                assert_eq!(selector["nodeimg.dev/acceptance"], "run", "{at}");
                for (k, v) in &labels {
                    assert_eq!(selector[*k], *v, "{at}");
                }
                if bp == "h100-sxm-ubuntu" {
                    assert_eq!(
                        spec["tolerations"][0],
                        serde_json::json!({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}),
                        "{at}"
                    );
                }
                let gpus = &containers[0]["resources"]["limits"][resource];
                // The RDMA pair holds GPUs only for GPUDirect, the storage Job never; the
                // rest always does.
                let holds = !file.starts_with("storage")
                    && (!file.starts_with("rdma") || bp == "h100-sxm-ubuntu");
                if holds {
                    assert_eq!(gpus, 8, "{at}: {resource}");
                }
            }
        }
    }
}

fn c_has_no_gpu(containers: &[Value]) -> bool {
    containers.iter().all(|c| c.get("resources").is_none())
}

#[test]
fn dra_blueprints_claim_the_devices() {
    let dra = Variant::of("h100-sxm-ubuntu").set("kubernetes.deviceInjection.mode", json!("dra"));
    let docs = acceptance(&dra);
    let claim = &docs["gpu-claim.yaml"];
    assert_eq!(claim["apiVersion"], "resource.k8s.io/v1");
    assert_eq!(claim["kind"], "ResourceClaimTemplate");
    let request = &claim["spec"]["spec"]["devices"]["requests"][0];
    assert_eq!(request["exactly"]["deviceClassName"], "gpu.nvidia.com");
    assert_eq!(request["exactly"]["count"], 8);
    let smoke = &docs["smoke-pod.yaml"]["spec"];
    assert_eq!(
        smoke["resourceClaims"][0]["resourceClaimTemplateName"],
        "nodeimg-acceptance-gpus"
    );
    assert_eq!(
        smoke["containers"][0]["resources"],
        serde_json::json!({"claims": [{"name": "gpus"}]})
    );
}

#[test]
fn jobset_engine_is_refused_for_the_multi_node_all_reduce() {
    let jobset = Variant::of("h100-sxm-ubuntu").set("acceptance.multiNode.engine", json!("jobset"));
    let err = refused(&jobset);
    assert!(err.starts_with("acceptance.multiNode.engine: "), "{err}");
    // Listing the tests without it is the way out.
    let listed = jobset.set(
        "acceptance.tests",
        json!(["kubernetes", "smoke", "nccl", "rdma", "framework"]),
    );
    assert!(listed.try_load().is_ok());
    // An unpinned image is refused with its field.
    let unpinned = Variant::of("h100-sxm-ubuntu").set(
        "acceptance.images.framework",
        json!("registry.gpu.example.com/acceptance/pytorch:25.10-py3"),
    );
    let err = refused(&unpinned);
    assert!(err.starts_with("acceptance.images.framework: "), "{err}");
    // A test the hardware cannot run is refused with its index.
    let dcgm_on_amd = Variant::of("mi300x-rhel").set("acceptance.tests[1]", json!("dcgm"));
    let err = refused(&dcgm_on_amd);
    assert!(err.starts_with("acceptance.tests[1]: "), "{err}");
    let runner_on_nvidia =
        Variant::of("h100-sxm-ubuntu").set("acceptance.tests", json!(["test-runner"]));
    let err = refused(&runner_on_nvidia);
    assert!(
        err.starts_with("acceptance.tests[0]: ") && err.contains("AMD GPUs only"),
        "{err}"
    );
    // TensorRT-LLM on AMD GPUs: refused with its field.
    let digest = "c".repeat(64);
    let trtllm_on_amd = Variant::of("mi300x-rhel")
        .set(
            "acceptance.images.inference",
            json!(format!(
                "registry.gpu.example.com/acceptance/trtllm:1.0.0@sha256:{digest}"
            )),
        )
        .set(
            "acceptance.inference",
            json!({"engine": "trtllm", "model": "/models/Qwen2.5-0.5B-Instruct"}),
        );
    let err = refused(&trtllm_on_amd);
    assert!(err.starts_with("acceptance.inference.engine: "), "{err}");
}

/// The AMD test runner's Job, the way the runner reads it (ROCm/gpu-operator
/// `docs/test/manual-test.md`): `TEST_TRIGGER=MANUAL`, its pod, namespace and node from
/// the downward API, `config.json` in `/etc/test-runner/` with the recipe under the
/// `MANUAL` trigger, a service account allowed to write events and patch the node, and
/// every GPU of the node.
#[test]
fn the_amd_test_runner_runs_the_blueprints_recipe_on_every_gpu() {
    let v = Variant::of("mi300x-rhel").set("acceptance.testRunner.recipe", json!("iet_single"));
    let docs = acceptance(&v);
    let job = &docs["test-runner-job.yaml"];
    let spec = &job["spec"]["template"]["spec"];
    let c = &spec["containers"][0];
    let env: BTreeMap<&str, &Value> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e))
        .collect();
    assert_eq!(env["TEST_TRIGGER"]["value"], "MANUAL");
    for (name, field) in [
        ("POD_NAME", "metadata.name"),
        ("POD_NAMESPACE", "metadata.namespace"),
        ("NODE_NAME", "spec.nodeName"),
    ] {
        assert_eq!(
            env[name]["valueFrom"]["fieldRef"]["fieldPath"], field,
            "{name}"
        );
    }
    assert_eq!(c["resources"]["limits"]["amd.com/gpu"], 8);
    // config.json, from the scripts ConfigMap, where the runner looks for it.
    let mount = c["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"] == "/etc/test-runner/")
        .expect("the config folder is mounted");
    let volume = spec["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    let cm = &volume["configMap"];
    let scripts = &docs["scripts.yaml"];
    assert_eq!(cm["name"], scripts["metadata"]["name"]);
    assert_eq!(cm["items"][0]["path"], "config.json");
    let key = cm["items"][0]["key"].as_str().unwrap();
    let config: Value = serde_json::from_str(scripts["data"][key].as_str().unwrap()).unwrap();
    let case = &config["TestConfig"]["GPU_HEALTH_CHECK"]["TestLocationTrigger"]["global"]["TestParameters"]
        ["MANUAL"]["TestCases"][0];
    assert_eq!(case["Recipe"], "iet_single");
    assert_eq!(case["TimeoutSeconds"], 1200);
    // The service account may write the result in its namespace and label the node;
    // nothing grants it events beyond its namespace.
    let access = &docs["test-runner-access.yaml"]["items"];
    let ns = &job["metadata"]["namespace"];
    let sa = &access[0];
    assert_eq!(sa["kind"], "ServiceAccount");
    assert_eq!(spec["serviceAccountName"], sa["metadata"]["name"]);
    assert_eq!(&sa["metadata"]["namespace"], ns);
    let grants = rbac_grants(access, &sa["metadata"]["name"], ns);
    assert!(
        grants.contains(&(Some(ns.to_string()), "events".into(), "create".into())),
        "{grants:?}"
    );
    assert!(
        grants.contains(&(None, "nodes".into(), "patch".into())),
        "{grants:?}"
    );
    let wide: Vec<_> = grants
        .iter()
        .filter(|(scope, ..)| scope.is_none())
        .collect();
    assert_eq!(
        wide,
        [&(None, "nodes".to_string(), "patch".to_string())],
        "{grants:?}"
    );
    // Without its image, nothing renders; an unknown recipe name is refused.
    let bare = Variant::of("mi300x-rhel")
        .remove("acceptance.images.testRunner")
        .set("acceptance.tests", json!(["kubernetes", "smoke"]));
    assert!(!acceptance(&bare).contains_key("test-runner-job.yaml"));
    let bad = Variant::of("mi300x-rhel").set("acceptance.testRunner.recipe", json!("gst\"}"));
    assert!(refused(&bad).starts_with("acceptance.testRunner.recipe: "));
}

/// Every Pod spec of the RDMA workloads (the pair, the multi-node runs), launchers aside,
/// with the metadata of its template.
fn rdma_pods(docs: &BTreeMap<String, Value>) -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    for file in [
        "rdma-pair.yaml",
        "nccl-multinode.yaml",
        "framework-multinode.yaml",
    ] {
        let Some(doc) = docs.get(file) else { continue };
        let mut templates = Vec::new();
        pod_specs(doc, file.to_owned(), &mut templates);
        for (at, spec) in templates {
            if spec["containers"][0]["name"] == "launcher" {
                continue;
            }
            // The template holding this spec: its metadata sits next to it.
            let path = at.trim_start_matches(file).trim_end_matches(".spec");
            let mut meta = doc;
            for k in path.split('.').filter(|k| !k.is_empty()) {
                meta = match k.split_once('[') {
                    Some((k, i)) => &meta[k][i.trim_end_matches(']').parse::<usize>().unwrap()],
                    None => &meta[k],
                };
            }
            out.push((at, spec.clone(), meta["metadata"].clone()));
        }
    }
    out
}

#[test]
fn rdma_pods_reach_the_rails_the_way_the_blueprint_says() {
    // No resource named: the node's network namespace, privileged for /dev/infiniband,
    // and the MPI workers' sshd off the node's port 22.
    let docs = acceptance(&Variant::of("h100-sxm-ubuntu"));
    let pods = rdma_pods(&docs);
    assert_eq!(pods.len(), 3, "{pods:?}");
    for (at, spec, _) in &pods {
        assert_eq!(spec["hostNetwork"], true, "{at}");
        assert_eq!(spec["dnsPolicy"], "ClusterFirstWithHostNet", "{at}");
        let c = &spec["containers"][0];
        assert_eq!(c["securityContext"]["privileged"], true, "{at}");
        // sshd, started by the power sampler's worker form on the GPU workers.
        let command = c["command"].as_array().unwrap();
        assert_eq!(
            command[command.len() - 4..],
            json!(["/usr/sbin/sshd", "-De", "-p", "2222"])
                .as_array()
                .unwrap()[..],
            "{at}"
        );
    }
    let launcher = &docs["rdma-pair.yaml"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
        ["containers"][0]["command"];
    let argv: Vec<&str> = launcher
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        argv.windows(3)
            .any(|w| w == ["--mca", "plm_rsh_args", "-p 2222"]),
        "{argv:?}"
    );
    // The single-node all-reduce needs no network: it stays in its Pod's namespace.
    let nccl = &docs["nccl-job.yaml"]["spec"]["template"]["spec"];
    assert!(nccl.get("hostNetwork").is_none(), "{nccl}");

    // The Network Operator's way (RoCE): the device plugin's resource, a Multus network
    // per rail, IPC_LOCK instead of privileged, and the Pod's own namespace.
    let docs = acceptance(&Variant::of("mi300x-rhel"));
    let pods = rdma_pods(&docs);
    assert_eq!(pods.len(), 2, "the pair and the framework run: {pods:?}");
    for (at, spec, meta) in &pods {
        assert!(spec.get("hostNetwork").is_none(), "{at}");
        let c = &spec["containers"][0];
        assert_eq!(
            c["resources"]["limits"]["rdma/rdma_shared_device_a"], 1,
            "{at}"
        );
        assert_eq!(
            c["securityContext"],
            json!({"capabilities": {"add": ["IPC_LOCK"]}}),
            "{at}"
        );
        assert_eq!(
            meta["annotations"]["k8s.v1.cni.cncf.io/networks"],
            "rail-0,rail-1,rail-2,rail-3,rail-4,rail-5,rail-6,rail-7",
            "{at}"
        );
    }
    // A GID index named in the blueprint reaches ib_write_bw.
    let gid = Variant::of("mi300x-rhel").set("acceptance.rdma.gidIndex", json!(3));
    let docs = acceptance(&gid);
    let env = &docs["rdma-pair.yaml"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
        ["spec"]["containers"][0]["env"];
    assert!(
        env.as_array()
            .unwrap()
            .contains(&json!({"name": "NODEIMG_RDMA_GID_INDEX", "value": "3"})),
        "{env}"
    );
}

#[test]
fn roce_rails_without_an_address_in_the_pod_are_refused() {
    let no_networks = Variant::of("mi300x-rhel").remove("acceptance.rdma.networks");
    let err = refused(&no_networks);
    assert!(err.starts_with("acceptance.rdma.networks: "), "{err}");
    assert!(err.contains("RoCE"), "{err}");
    // The node's namespace has the addresses already.
    let host = Variant::of("mi300x-rhel").remove("acceptance.rdma");
    assert!(host.try_load().is_ok());
    // Both ways at once, or neither, are refused with the field.
    let both = Variant::of("mi300x-rhel").set("acceptance.rdma.hostNetwork", json!(true));
    assert!(refused(&both).starts_with("acceptance.rdma.hostNetwork: "));
    let neither = host.set("acceptance.rdma", json!({"hostNetwork": false}));
    assert!(refused(&neither).starts_with("acceptance.rdma.resources: "));
    // InfiniBand rails are addressed by LID: the resource alone is enough.
    let ib = Variant::of("h100-sxm-ubuntu").set(
        "acceptance.rdma",
        json!({"resources": {"rdma/rdma_shared_device_a": 1}}),
    );
    assert!(ib.try_load().is_ok(), "{:?}", ib.try_load().err());
}

/// The probe and the RDMA script as the ConfigMap carries them.
fn scripts() -> (String, String) {
    let docs = acceptance(&Variant::of("h100-sxm-ubuntu"));
    let data = &docs["scripts.yaml"]["data"];
    (
        data["probe.py"].as_str().unwrap().to_owned(),
        data["rdma-pair.sh"].as_str().unwrap().to_owned(),
    )
}

#[test]
#[ignore = "needs python3 and sh (the scripts the workloads run)"]
fn the_scripts_the_workloads_run_compile() {
    let (probe, rdma) = scripts();
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("probe.py");
    std::fs::write(&py, &probe).unwrap();
    let out = std::process::Command::new("python3")
        .args(["-m", "py_compile"])
        .arg(&py)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sh = dir.path().join("rdma-pair.sh");
    std::fs::write(&sh, &rdma).unwrap();
    let out = std::process::Command::new("sh")
        .arg("-n")
        .arg(&sh)
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The probe's lines are the format `nodeimg accept` reads: an unknown suite is
    // refused before torch is imported.
    let out = std::process::Command::new("python3")
        .arg(&py)
        .arg("bogus")
        .output()
        .expect("python3");
    assert!(!out.status.success());
}

/// The framework and NCCL Jobs run their workload under the power sampler: the rendered
/// script asks nvidia-smi (NVIDIA) or amd-smi (AMD) for the fields `nodeimg accept` reads,
/// runs the workload with its exit status, and prints the samples after the workload's
/// output where accept finds them, read as taken under that workload's load (matmul or
/// all-reduce). The vendor tool is a stand-in here (no GPU): a shell script that checks the
/// arguments it is given and prints its output format until it is stopped; the workload is
/// a shell printing a probe line or an nccl-tests table.
#[test]
#[ignore = "needs sh (the script the framework and NCCL Jobs run)"]
fn the_power_sampler_runs_the_workload_and_prints_what_accept_reads() {
    let docs = acceptance(&Variant::of("h100-sxm-ubuntu"));
    let script = docs["scripts.yaml"]["data"]["sample-power.sh"]
        .as_str()
        .unwrap();
    let query = format!("--query-gpu={}", nodeimg::accept::power::QUERY.join(","));
    assert!(script.contains(&query), "{script}");
    assert!(!script.contains("amd-smi"), "{script}");
    let smi = format!(
        "#!/bin/sh\n[ \"$1\" = \"{query}\" ] && [ \"$2\" = --format=csv ] && [ \"$3\" = -lms ] || {{ echo \"bad arguments: $*\"; exit 2; }}\n\
echo 'timestamp, index, pci.bus_id, power.draw [W], enforced.power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz], temperature.gpu, clocks_throttle_reasons.sw_power_cap, clocks_throttle_reasons.hw_slowdown, clocks_throttle_reasons.hw_thermal_slowdown, clocks_throttle_reasons.hw_power_brake_slowdown, clocks_throttle_reasons.sw_thermal_slowdown'\n\
while :; do echo '2026/12/05 14:02:11.601, 0, 00000000:19:00.0, 688.40 W, 700.00 W, 1755 MHz, 1980 MHz, 66, Active, Not Active, Not Active, Not Active, Not Active'; sleep 0.1; done\n"
    );
    run_sampled(&docs, "nvidia-smi", &smi, |s| {
        assert_eq!(s.power, Some(688.4));
        assert_eq!(s.limit, Some(700.0));
        assert_eq!(s.active, ["sw_power_cap"]);
    });
}

/// The same on an AMD node: amd-smi's power cap once, then its metric JSON each round, read
/// into the same samples; a socket thermal violation is what the judge fails.
#[test]
#[ignore = "needs sh (the script the framework and NCCL Jobs run)"]
fn the_amd_power_sampler_runs_the_workload_and_prints_what_accept_reads() {
    let docs = acceptance(&Variant::of("mi300x-rhel"));
    let script = docs["scripts.yaml"]["data"]["sample-power.sh"]
        .as_str()
        .unwrap();
    assert!(
        script.contains("amd-smi metric --power --clock --temperature --throttle --json"),
        "{script}"
    );
    assert!(!script.contains("nvidia-smi"), "{script}");
    let smi = r#"#!/bin/sh
case "$*" in
  "static --limit --json")
    echo '[{"gpu": 0, "limit": {"max_power": {"value": 750, "unit": "W"}, "socket_power": {"value": 750, "unit": "W"}}}]';;
  "metric --power --clock --temperature --throttle --json")
    sleep 0.1
    cat <<'JSON'
[
    {
        "gpu": 0,
        "power": {"socket_power": {"value": 731, "unit": "W"}, "throttle_status": "THROTTLED", "power_management": "ENABLED"},
        "clock": {"gfx_0": {"clk": {"value": 1900, "unit": "MHz"}, "max_clk": {"value": 2100, "unit": "MHz"}}},
        "temperature": {"edge": "N/A", "hotspot": {"value": 97, "unit": "C"}, "mem": {"value": 80, "unit": "C"}},
        "throttle": {"ppt_violation_status": "NOT ACTIVE", "socket_thermal_violation_status": "ACTIVE"}
    }
]
JSON
    ;;
  *) echo "bad arguments: $*"; exit 2;;
esac
"#;
    run_sampled(&docs, "amd-smi", smi, |s| {
        assert_eq!(s.power, Some(731.0));
        assert_eq!(s.limit, Some(750.0));
        assert_eq!(s.sm_clock, Some(1900.0));
        assert_eq!(s.active, ["amd.socket_thermal", "amd.throttled"]);
        assert!(
            s.active.iter().any(
                |r| nodeimg::accept::power::reasons::lookup(r).is_some_and(|x| x.cooling_power)
            )
        );
    });
}

/// Runs the rendered `sample-power.sh` of `docs` around a stand-in workload per Job, with
/// `tool` (the vendor's sampler, a stand-in written from `body`) on the PATH, and checks
/// that each Job runs it from the scripts ConfigMap and that accept reads the workload's
/// output and the samples from the log; `check` judges the first sample.
fn run_sampled(
    docs: &BTreeMap<String, Value>,
    tool: &str,
    body: &str,
    check: impl Fn(&nodeimg::accept::power::Sample),
) {
    use nodeimg::accept::input::Output;
    use nodeimg::accept::power::Load;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let stand_in = bin.join(tool);
    std::fs::write(&stand_in, body).unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sh = dir.path().join("sample-power.sh");
    std::fs::write(
        &sh,
        docs["scripts.yaml"]["data"]["sample-power.sh"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    let probe_line = r#"{"nodeimg": "probe/v1", "suite": "framework", "step": "load", "status": "pass", "seconds": 0.5, "rank": 0, "world_size": 1, "metrics": {"tflops": 640.0}}"#;
    let table = dir.path().join("nccl-tests.out");
    std::fs::write(
        &table,
        accept_fixture::nccl(&[accept_fixture::NODE], 8, 480.0),
    )
    .unwrap();
    let cases = [
        (
            "framework-job.yaml",
            "torchrun",
            format!("echo '{probe_line}'"),
            Load::Gemm,
        ),
        (
            "nccl-job.yaml",
            "all_reduce_perf",
            format!("cat '{}'", table.display()),
            Load::Nccl,
        ),
    ];
    for (file, workload, stand_in, load) in cases {
        // The rendered Job runs the sampler from the scripts ConfigMap, around its workload.
        let spec = &docs[file]["spec"]["template"]["spec"];
        let command: Vec<&str> = spec["containers"][0]["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(
            &command[..3],
            ["/bin/sh", "/opt/nodeimg/sample-power.sh", workload],
            "{file}"
        );
        let mount = spec["containers"][0]["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["mountPath"] == "/opt/nodeimg")
            .unwrap_or_else(|| panic!("{file}: no /opt/nodeimg mount"));
        let volume = spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == mount["name"])
            .unwrap_or_else(|| panic!("{file}: no volume {}", mount["name"]));
        assert_eq!(
            volume["configMap"]["name"], docs["scripts.yaml"]["metadata"]["name"],
            "{file}"
        );

        let out = std::process::Command::new("sh")
            .arg(&sh)
            .args(["sh", "-c", &format!("sleep 0.5; {stand_in}; exit 3")])
            .env("PATH", &path)
            .output()
            .expect("sh");
        assert_eq!(
            out.status.code(),
            Some(3),
            "{file}: the workload's exit status"
        );
        let log = dir.path().join(format!("{file}.log"));
        std::fs::write(&log, &out.stdout).unwrap();
        let inputs =
            nodeimg::accept::input::load_with_samples(&log).unwrap_or_else(|e| panic!("{e}"));
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(inputs.len(), 2, "{file}: {said}");
        match (&inputs[0].output, load) {
            (Output::Probe(_), Load::Gemm) | (Output::Nccl(_), Load::Nccl) => {}
            (other, _) => panic!("{file}: {other:?}"),
        }
        match &inputs[1].output {
            Output::Power(s) => {
                assert_eq!(s.load, load, "{file}");
                assert!(s.error.is_none(), "{file}: {:?}\n{said}", s.error);
                assert!(!s.samples.is_empty());
                check(&s.samples[0]);
            }
            other => panic!("{file}: {other:?}"),
        }
    }
}

/// The multi-node PyTorch, JAX and NCCL runs, through the MPI Operator and the JobSet
/// controller, run each node's workload under the sampler, and their logs hold one section
/// per node, named. The rendered commands run here with stand-ins: `nvidia-smi` (node-b's
/// GPU 1 in hardware slowdown), the workloads, and an `mpirun` that starts each rank with
/// its host's own /tmp (a folder per host) and its MPI local rank.
#[test]
#[ignore = "needs sh (the commands the multi-node Pods run)"]
fn the_multinode_runs_sample_power_on_every_node() {
    use nodeimg::accept::input::{Output, load_with_samples};
    use nodeimg::accept::power::Load;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let table = dir.path().join("nccl-tests.out");
    std::fs::write(&table, accept_fixture::nccl(&["gpu-a", "gpu-b"], 8, 480.0)).unwrap();
    let query = format!("--query-gpu={}", nodeimg::accept::power::QUERY.join(","));
    let stand_ins = [
        (
            "nvidia-smi",
            format!(
                "#!/bin/sh\n[ \"$1\" = \"{query}\" ] || {{ echo \"bad arguments: $*\"; exit 2; }}\n\
node=${{NODE_NAME:-$(cat \"$NODEIMG_NODE_FILE\")}}\n\
echo 'timestamp, index, power.draw [W], enforced.power.limit [W], clocks_throttle_reasons.hw_slowdown'\n\
slow='Not Active'; [ \"$node\" = node-b ] && slow=Active\n\
while :; do echo \"2026/12/05 14:02:11.601, 0, 690.00 W, 700.00 W, Not Active\"; echo \"2026/12/05 14:02:11.601, 1, 610.00 W, 700.00 W, $slow\"; sleep 0.1; done\n"
            ),
        ),
        (
            "torchrun",
            "#!/bin/sh\nsleep 0.4\necho '{\"nodeimg\": \"probe/v1\", \"suite\": \"framework\", \"step\": \"multinode\", \"status\": \"pass\", \"seconds\": 3.1, \"rank\": 0, \"world_size\": 16}'\n".to_owned(),
        ),
        (
            "python3",
            "#!/bin/sh\nsleep 0.4\n[ \"${OMPI_COMM_WORLD_RANK:-0}\" = 0 ] || exit 0\ncase \"$1\" in\n  *probe-jax.py) echo '{\"nodeimg\": \"probe/v1\", \"suite\": \"jax\", \"step\": \"multinode\", \"status\": \"pass\", \"seconds\": 2.0}';;\n  *) echo '{\"nodeimg\": \"probe/v1\", \"suite\": \"framework\", \"step\": \"multinode\", \"status\": \"pass\", \"seconds\": 3.1, \"rank\": 0, \"world_size\": 16}';;\nesac\n".to_owned(),
        ),
        (
            "all_reduce_perf",
            format!(
                "#!/bin/sh\nsleep 0.4\n[ \"$OMPI_COMM_WORLD_RANK\" = 0 ] && cat '{}'\nexit 0\n",
                table.display()
            ),
        ),
        (
            "mpirun",
            r#"#!/bin/sh
# Stand-in: every host of the hostfile runs $PER ranks (one with --host), each host with
# its own /tmp (a folder of $ROOT), and the -x variables: NODEIMG_POWER_KEEP's file is
# that name in the host's folder, so a rank sees only what its launcher passed.
host=
keep=
while [ $# -gt 0 ]; do
  case "$1" in
    --allow-run-as-root) shift;;
    --host) host=$2; shift 2;;
    -np|--map-by) shift 2;;
    --mca) shift 3;;
    -x) case "$2" in
          NODEIMG_POWER_KEEP=?*) keep=${2#NODEIMG_POWER_KEEP=};;
          *) export "$2";;
        esac; shift 2;;
    *) break;;
  esac
done
per=$PER; [ -n "$host" ] && per=1
n=0
for h in ${host:-$(sed 's/ .*//' "$NODEIMG_MPI_HOSTFILE")}; do
  r=0
  while [ $r -lt $per ]; do
    NODEIMG_NODE_FILE=$ROOT/$h/node NODEIMG_POWER_KEEP=${keep:+$ROOT/$h/${keep##*/}} \
      OMPI_COMM_WORLD_LOCAL_RANK=$r OMPI_COMM_WORLD_RANK=$n "$@" &
    r=$((r + 1)); n=$((n + 1))
  done
done
wait
"#
            .to_owned(),
        ),
    ];
    for (name, body) in &stand_ins {
        let f = bin.join(name);
        std::fs::write(&f, body).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Runs a rendered command with the scripts ConfigMap's sampler where the Pod mounts it.
    let run = |docs: &BTreeMap<String, Value>, argv: &Value, env: &[(&str, String)]| {
        let sh = dir.path().join("sample-power.sh");
        std::fs::write(
            &sh,
            docs["scripts.yaml"]["data"]["sample-power.sh"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        let argv: Vec<String> = argv
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let a = a.as_str().unwrap();
                if a == "/opt/nodeimg/sample-power.sh" {
                    sh.display().to_string()
                } else {
                    a.to_owned()
                }
            })
            .collect();
        assert_eq!(argv[0], "/bin/sh", "{argv:?}");
        let out = std::process::Command::new("sh")
            .args(&argv[1..])
            .env("PATH", &path)
            .env("ROOT", dir.path())
            .env("PER", "2")
            .env("NODEIMG_MPI_HOSTFILE", dir.path().join("hostfile"))
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .output()
            .expect("sh");
        assert!(
            out.status.success(),
            "{argv:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    // What accept reads from one log: the workload's output, then each node's samples.
    let read = |file: &str, log: &[u8], nodes: &[&str], load: Load| {
        let at = dir.path().join(format!("{file}.log"));
        std::fs::write(&at, log).unwrap();
        let said = String::from_utf8_lossy(log);
        let inputs = load_with_samples(&at).unwrap_or_else(|e| panic!("{file}: {e}\n{said}"));
        match (&inputs[0].output, load) {
            (Output::Probe(_), Load::Framework) | (Output::Nccl(_), Load::Nccl) => {}
            (other, _) => panic!("{file}: {other:?}"),
        }
        let sets: Vec<&nodeimg::accept::power::Samples> = inputs[1..]
            .iter()
            .map(|i| match &i.output {
                Output::Power(s) => s,
                other => panic!("{file}: {other:?}"),
            })
            .collect();
        let named: Vec<&str> = sets.iter().map(|s| s.node.as_deref().unwrap()).collect();
        assert_eq!(named, nodes, "{file}:\n{said}");
        for s in &sets {
            assert_eq!(s.load, load, "{file}");
            assert!(s.error.is_none(), "{file}: {:?}\n{said}", s.error);
            let slow = s
                .samples
                .iter()
                .any(|x| x.index == 1 && x.active == ["hw_slowdown"]);
            assert_eq!(slow, s.node.as_deref() == Some("node-b"), "{file}\n{said}");
        }
    };

    // The MPI Operator: the workers keep their node's name, the launcher runs mpirun and
    // then prints each worker's section in turn.
    let docs = acceptance(&with_engines());
    for (file, load) in [
        ("framework-multinode.yaml", Load::Framework),
        ("framework-jax-multinode.yaml", Load::Framework),
        ("nccl-multinode.yaml", Load::Nccl),
    ] {
        let job = &docs[file];
        assert_eq!(job["kind"], "MPIJob", "{file}");
        let name = job["metadata"]["name"].as_str().unwrap();
        let ns = job["metadata"]["namespace"].as_str().unwrap();
        let specs = &job["spec"]["mpiReplicaSpecs"];
        let hosts: Vec<String> = (0..2)
            .map(|i| format!("{name}-worker-{i}.{name}.{ns}.svc"))
            .collect();
        std::fs::write(
            dir.path().join("hostfile"),
            hosts
                .iter()
                .map(|h| format!("{h} slots=8\n"))
                .collect::<String>(),
        )
        .unwrap();
        let worker = &specs["Worker"]["template"]["spec"]["containers"][0];
        for (host, node) in hosts.iter().zip(["node-a", "node-b"]) {
            let tmp = dir.path().join(host);
            let _ = std::fs::remove_dir_all(&tmp);
            std::fs::create_dir(&tmp).unwrap();
            // sshd is `true` here: the worker keeps its node's name and starts it.
            let mut argv = worker["command"].clone();
            let n = argv.as_array().unwrap().len();
            argv.as_array_mut().unwrap().truncate(n - 3);
            argv.as_array_mut().unwrap()[3] = "true".into();
            run(
                &docs,
                &argv,
                &[
                    ("NODE_NAME", node.to_owned()),
                    ("NODEIMG_NODE_FILE", tmp.join("node").display().to_string()),
                ],
            );
        }
        let launcher = &specs["Launcher"]["template"]["spec"]["containers"][0]["command"];
        let log = run(&docs, launcher, &[]);
        read(file, &log, &["node-a", "node-b"], load);
    }

    // The JobSet controller: each node's Pod runs its workload under the sampler, its log
    // holds that node's section.
    let docs = acceptance(
        &with_engines()
            .set("acceptance.multiNode.engine", json!("jobset"))
            .set(
                "acceptance.tests",
                json!(["kubernetes", "nccl", "framework", "jax", "inference"]),
            ),
    );
    for file in ["framework-multinode.yaml", "framework-jax-multinode.yaml"] {
        let job = &docs[file];
        assert_eq!(job["kind"], "JobSet", "{file}");
        let c = &job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]
            [0];
        let env: Vec<&str> = c["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert!(env.contains(&"NODE_NAME"), "{file}: {env:?}");
        for (i, node) in ["node-a", "node-b"].iter().enumerate() {
            let log = run(
                &docs,
                &c["command"],
                &[
                    ("NODE_NAME", (*node).to_owned()),
                    ("JOB_COMPLETION_INDEX", i.to_string()),
                    ("JAX_COORDINATOR_ADDRESS", "x:1234".to_owned()),
                    ("JAX_NUM_PROCESSES", "2".to_owned()),
                ],
            );
            read(file, &log, &[node], Load::Framework);
        }
    }
}

/// The JAX and inference Jobs of the H100 example, and their scripts run for real: the
/// JAX probe refuses an unknown suite before importing JAX (no JAX here), and the
/// inference check starts a stand-in engine (a small Python server that speaks vLLM's
/// OpenAI-compatible streaming protocol: no GPU here), waits for it, asks the fixed prompt
/// and prints the line `nodeimg accept` reads.
/// The H100 example with a JAX image and an inference engine serving a model baked into
/// its image.
fn with_engines() -> Variant {
    let digest = "c".repeat(64);
    Variant::of("h100-sxm-ubuntu")
        .set(
            "acceptance.images.jax",
            json!(format!("registry.gpu.example.com/acceptance/jax:25.10-py3@sha256:{digest}")),
        )
        .set(
            "acceptance.images.inference",
            json!(format!(
                "registry.gpu.example.com/acceptance/vllm-openai:v0.11.0-qwen2.5-0.5b@sha256:{digest}"
            )),
        )
        .set(
            "acceptance.inference",
            json!({"engine": "vllm", "model": "/models/Qwen2.5-0.5B-Instruct"}),
        )
}

#[test]
fn the_engines_render_where_their_images_are_given() {
    let plain = acceptance(&Variant::of("h100-sxm-ubuntu"));
    assert!(!plain.contains_key("framework-jax-job.yaml"));
    assert!(!plain.contains_key("inference-job.yaml"));
    assert!(
        plain["scripts.yaml"]["data"]
            .get("serve-check.py")
            .is_none()
    );
    let docs = acceptance(&with_engines());
    for file in ["framework-jax-job.yaml", "inference-job.yaml"] {
        let job = &docs[file];
        assert_eq!(job["kind"], "Job", "{file}");
        let pod = &job["spec"]["template"]["spec"];
        // Gated like every acceptance workload, and on every GPU of the node.
        assert_eq!(
            pod["nodeSelector"]["nodeimg.dev/acceptance"], "run",
            "{file}"
        );
        assert_eq!(
            pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], 8,
            "{file}"
        );
    }
    let data = &docs["scripts.yaml"]["data"];
    assert!(data["probe-jax.py"].as_str().unwrap().contains("probe/v1"));
    assert!(
        data["serve-check.py"]
            .as_str()
            .unwrap()
            .contains("/v1/completions")
    );
    // A test that names an engine without its image is refused.
    let refused_why = refused(
        &Variant::of("h100-sxm-ubuntu").set("acceptance.tests", json!(["kubernetes", "jax"])),
    );
    assert!(
        refused_why.contains("acceptance.images.jax"),
        "{refused_why}"
    );
    let refused_why = refused(&with_engines().set("acceptance.inference.model", json!("models/x")));
    assert!(
        refused_why.contains("acceptance.inference.model"),
        "{refused_why}"
    );
}

/// The JAX multi-node run, through either engine: one process per node, all told the same
/// coordinator (the Pod of process 0, by the name the engine gives it) and their count, each
/// its own id. The Pod's shell line runs here with a stand-in `python3` that prints what
/// the probe would read.
#[test]
#[ignore = "needs sh (the line the JAX multi-node Pods run)"]
fn the_jax_multinode_run_names_its_coordinator_and_process_ids() {
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("python3");
    std::fs::write(
        &py,
        "#!/bin/sh\necho \"$JAX_COORDINATOR_ADDRESS $JAX_NUM_PROCESSES $JAX_PROCESS_ID $*\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Runs `argv` (a Pod's command: /bin/sh -c LINE) with `env`; what the probe would read.
    let run = |argv: &[Value], env: &[(&str, &str)]| -> String {
        let argv: Vec<&str> = argv.iter().map(|v| v.as_str().unwrap()).collect();
        // The shell line, after the power sampler that runs it.
        let at = argv.iter().position(|a| *a == "-c").expect("a shell line") - 1;
        assert_eq!(argv[at], "/bin/sh");
        let out = std::process::Command::new("sh")
            .args(&argv[at + 1..])
            .env("PATH", &path)
            .envs(env.iter().copied())
            .output()
            .expect("sh");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };

    // JobSet: an Indexed Job, the completion index is the process id.
    let docs = acceptance(
        &with_engines()
            .set("acceptance.multiNode.engine", json!("jobset"))
            .set(
                "acceptance.tests",
                json!(["kubernetes", "nccl", "framework", "jax", "inference"]),
            ),
    );
    let js = &docs["framework-jax-multinode.yaml"];
    assert_eq!(js["kind"], "JobSet");
    let name = js["metadata"]["name"].as_str().unwrap();
    let rjob = &js["spec"]["replicatedJobs"][0];
    let job = &rjob["template"]["spec"];
    assert_eq!(job["completionMode"], "Indexed");
    let nodes = job["completions"].as_u64().unwrap();
    assert!(nodes >= 2);
    assert_eq!(js["spec"]["network"]["enableDNSHostnames"], true);
    let pod = &job["template"]["spec"];
    let c = &pod["containers"][0];
    assert!(c["image"].as_str().unwrap().contains("/jax:"));
    assert_eq!(c["resources"]["limits"]["nvidia.com/gpu"], 8);
    assert!(
        pod["affinity"]["podAntiAffinity"].is_object(),
        "one Pod per node"
    );
    let env: BTreeMap<&str, &str> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| Some((e["name"].as_str().unwrap(), e["value"].as_str()?)))
        .collect();
    // JobSet names Pod 0 of Job 0 `<jobset>-<replicatedJob>-0-0` under the subdomain `<jobset>`.
    let coordinator = format!("{name}-{}-0-0.{name}:1234", rjob["name"].as_str().unwrap());
    assert_eq!(env["JAX_COORDINATOR_ADDRESS"], coordinator);
    assert_eq!(env["JAX_NUM_PROCESSES"], nodes.to_string());
    let said = run(
        c["command"].as_array().unwrap(),
        &[
            ("JAX_COORDINATOR_ADDRESS", env["JAX_COORDINATOR_ADDRESS"]),
            ("JAX_NUM_PROCESSES", env["JAX_NUM_PROCESSES"]),
            ("JOB_COMPLETION_INDEX", "1"),
        ],
    );
    assert_eq!(
        said,
        format!("{coordinator} {nodes} 1 /opt/nodeimg/probe-jax.py multinode")
    );

    // MPI Operator: one rank per worker, the rank is the process id, worker 0 coordinates.
    let docs = acceptance(&with_engines());
    let mpi = &docs["framework-jax-multinode.yaml"];
    assert_eq!(mpi["kind"], "MPIJob");
    let name = mpi["metadata"]["name"].as_str().unwrap();
    let spec = &mpi["spec"];
    assert_eq!(spec["slotsPerWorker"], 1);
    let workers = spec["mpiReplicaSpecs"]["Worker"]["replicas"]
        .as_u64()
        .unwrap();
    let launcher =
        spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
            .as_array()
            .unwrap();
    let argv: Vec<&str> = launcher.iter().map(|v| v.as_str().unwrap()).collect();
    let np = argv.iter().position(|a| *a == "-np").unwrap();
    assert_eq!(argv[np + 1], workers.to_string());
    assert!(
        argv.windows(2).any(|w| w == ["--map-by", "ppr:1:node"]),
        "{argv:?}"
    );
    let exported: BTreeMap<&str, &str> = argv
        .windows(2)
        .filter(|w| w[0] == "-x")
        .filter_map(|w| w[1].split_once('='))
        .collect();
    let coordinator = format!("{name}-worker-0.{name}.gpu-acceptance.svc:1234");
    let ns = mpi["metadata"]["namespace"].as_str().unwrap();
    assert_eq!(
        exported["JAX_COORDINATOR_ADDRESS"],
        coordinator.replace("gpu-acceptance", ns)
    );
    assert_eq!(exported["JAX_NUM_PROCESSES"], workers.to_string());
    let said = run(
        launcher,
        &[
            (
                "JAX_COORDINATOR_ADDRESS",
                exported["JAX_COORDINATOR_ADDRESS"],
            ),
            ("JAX_NUM_PROCESSES", exported["JAX_NUM_PROCESSES"]),
            ("OMPI_COMM_WORLD_RANK", "1"),
        ],
    );
    assert!(
        said.ends_with(" 1 /opt/nodeimg/probe-jax.py multinode"),
        "{said}"
    );
    // Without a JAX image, no run.
    assert!(
        !acceptance(&Variant::of("h100-sxm-ubuntu")).contains_key("framework-jax-multinode.yaml")
    );
}

#[test]
#[ignore = "needs python3 (the scripts the JAX and inference Jobs run)"]
fn the_jax_and_inference_jobs_run_their_scripts() {
    let docs = acceptance(&with_engines());
    let container = |file: &str| docs[file]["spec"]["template"]["spec"]["containers"][0].clone();
    let jax = container("framework-jax-job.yaml");
    assert_eq!(
        jax["command"],
        json!(["python3", "/opt/nodeimg/probe-jax.py", "jax"])
    );
    assert!(jax["image"].as_str().unwrap().contains("/jax:"));
    let inf = container("inference-job.yaml");
    assert_eq!(
        inf["command"],
        json!([
            "python3",
            "/opt/nodeimg/serve-check.py",
            "vllm",
            "/models/Qwen2.5-0.5B-Instruct",
            "8",
            "128"
        ])
    );
    assert_eq!(inf["resources"]["limits"]["nvidia.com/gpu"], 8);
    let data = &docs["scripts.yaml"]["data"];
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, data[name].as_str().unwrap()).unwrap();
        p
    };
    let probe = write("probe-jax.py");
    let check = write("serve-check.py");
    for py in [&probe, &check] {
        let out = std::process::Command::new("python3")
            .args(["-m", "py_compile"])
            .arg(py)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = std::process::Command::new("python3")
        .arg(&probe)
        .arg("bogus")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown suite"));

    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let engine = bin.join("vllm");
    std::fs::write(&engine, STAND_IN_VLLM).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let args: Vec<&str> = inf["command"].as_array().unwrap()[2..]
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let out = std::process::Command::new("python3")
        .arg(&check)
        .args(&args)
        .env("PATH", &path)
        .env("NODEIMG_PORT", port.to_string())
        .env("NODE_NAME", "gpu-node-01")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let steps = nodeimg::accept::probe::parse(&stdout).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(steps.len(), 1);
    let serve = &steps[0];
    assert_eq!(serve.suite, nodeimg::accept::probe::Suite::Inference);
    assert_eq!(serve.name, "serve");
    assert_eq!(serve.metrics["tokens"], 11.0);
    assert!(serve.metrics["ttft_ms"] >= 50.0, "{:?}", serve.metrics);
    assert!(serve.metrics["tokens_per_second"] > 0.0);
    // An engine that dies before serving fails the step, with its status.
    std::fs::write(&engine, "#!/bin/sh\nexit 7\n").unwrap();
    let out = std::process::Command::new("python3")
        .arg(&check)
        .args(&args)
        .env("PATH", &path)
        .env("NODEIMG_PORT", port.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let steps = nodeimg::accept::probe::parse(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(steps[0].status, nodeimg::accept::probe::StepStatus::Fail);
    assert!(steps[0].error.as_deref().unwrap().contains("status 7"));

    // TensorRT-LLM: `trtllm-serve MODEL --host --port --tp_size`, the model under the name
    // its /v1/models lists, judged the same way.
    let docs = acceptance(&with_engines().set(
        "acceptance.inference",
        json!({"engine": "trtllm", "model": "/models/Qwen2.5-0.5B-Instruct"}),
    ));
    let inf = docs["inference-job.yaml"]["spec"]["template"]["spec"]["containers"][0].clone();
    assert_eq!(inf["command"][2], "trtllm");
    std::fs::write(
        dir.path().join("serve-check.py"),
        docs["scripts.yaml"]["data"]["serve-check.py"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let serve = bin.join("trtllm-serve");
    std::fs::write(&serve, STAND_IN_TRTLLM).unwrap();
    std::fs::set_permissions(&serve, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args: Vec<&str> = inf["command"].as_array().unwrap()[2..]
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let out = std::process::Command::new("python3")
        .arg(&check)
        .args(&args)
        .env("PATH", &path)
        .env("NODEIMG_PORT", port.to_string())
        .env("NODE_NAME", "gpu-node-01")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let steps = nodeimg::accept::probe::parse(&stdout).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].status, nodeimg::accept::probe::StepStatus::Pass);
    assert_eq!(steps[0].metrics["tokens"], 11.0);
    assert!(
        steps[0].metrics["ttft_ms"] >= 50.0,
        "{:?}",
        steps[0].metrics
    );
}

/// A stand-in for `trtllm-serve` (TensorRT-LLM 1.0): the model path first, then `--host`,
/// `--port`, `--tp_size`; it serves the model under its folder's name, lists it on
/// `/v1/models` and refuses a completion for another name, as its OpenAI server does.
const STAND_IN_TRTLLM: &str = r#"#!/usr/bin/env python3
import json, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
assert args[0] == "/models/Qwen2.5-0.5B-Instruct", args
assert args[args.index("--tp_size") + 1] == "8", args
assert args[args.index("--host") + 1] == "127.0.0.1", args
port = int(args[args.index("--port") + 1])
NAME = "Qwen2.5-0.5B-Instruct"
class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        if self.path == "/v1/models":
            body = json.dumps({"object": "list", "data": [{"id": NAME, "object": "model", "created": 0, "owned_by": "tensorrt_llm"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("model") != NAME:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        assert body["stream"] and body["temperature"] == 0 and body["stream_options"]["include_usage"], body
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(0.05)
        for w in ["2", ",", " 3", ",", " 5", ",", " 7", ",", " 11", ",", " 13"]:
            chunk = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": NAME,
                     "choices": [{"index": 0, "text": w, "logprobs": None, "finish_reason": None}]}
            self.wfile.write(("data: " + json.dumps(chunk) + "\n\n").encode())
            self.wfile.flush()
            time.sleep(0.01)
        usage = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": NAME,
                 "choices": [], "usage": {"prompt_tokens": 12, "total_tokens": 23, "completion_tokens": 11}}
        self.wfile.write(("data: " + json.dumps(usage) + "\n\ndata: [DONE]\n\n").encode())
        self.wfile.flush()
        self.close_connection = True
HTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

/// A stand-in for `vllm serve`: checks the arguments the check gives, then answers
/// `/health` and a streamed `/v1/completions` as vLLM's OpenAI-compatible server does
/// (server-sent `data: {...}` events, a usage event, `data: [DONE]`).
const STAND_IN_VLLM: &str = r#"#!/usr/bin/env python3
import json, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
assert args[0] == "serve" and args[1] == "/models/Qwen2.5-0.5B-Instruct", args
assert args[args.index("--tensor-parallel-size") + 1] == "8", args
port = int(args[args.index("--port") + 1])
assert args[args.index("--served-model-name") + 1] == "nodeimg", args
class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["model"] == "nodeimg" and body["stream"] and body["temperature"] == 0, body
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(0.05)
        for w in ["2", ",", " 3", ",", " 5", ",", " 7", ",", " 11", ",", " 13"]:
            chunk = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": "nodeimg",
                     "choices": [{"index": 0, "text": w, "logprobs": None, "finish_reason": None}],
                     "usage": None}
            self.wfile.write(("data: " + json.dumps(chunk) + "\n\n").encode())
            self.wfile.flush()
            time.sleep(0.01)
        usage = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": "nodeimg",
                 "choices": [], "usage": {"prompt_tokens": 12, "total_tokens": 23, "completion_tokens": 11}}
        self.wfile.write(("data: " + json.dumps(usage) + "\n\ndata: [DONE]\n\n").encode())
HTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

// ---- the opt-in schema suite -------------------------------------------------------

/// Kinds rendered without a vendored schema (DRA's ResourceClaimTemplate: the corpus
/// holds no resource.k8s.io schema); checked by the default tests above instead.
const UNVALIDATED: &[&str] = &["ResourceClaimTemplate"];

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas"]
fn acceptance_manifests_validate_against_their_published_schemas() {
    k8s_schema::dir();
    let h100 = Variant::of("h100-sxm-ubuntu");
    let variants = [
        ("h100-sxm-ubuntu", h100.clone()),
        ("mi300x-rhel", Variant::of("mi300x-rhel")),
        ("h100 with JAX and vLLM", with_engines()),
        (
            "h100 with JAX over JobSet",
            with_engines()
                .set("acceptance.multiNode.engine", json!("jobset"))
                .set(
                    "acceptance.tests",
                    json!(["kubernetes", "nccl", "framework", "jax", "inference"]),
                ),
        ),
        (
            "h100 time-sliced",
            h100.clone().set(
                "accelerators.sharing",
                json!({"mode": "time-slicing", "replicas": 4}),
            ),
        ),
        (
            "h100 with DRA",
            h100.clone()
                .set("kubernetes.deviceInjection.mode", json!("dra")),
        ),
        (
            "h100 with JobSet",
            h100.clone()
                .set("acceptance.multiNode.engine", json!("jobset"))
                .set(
                    "acceptance.tests",
                    json!([
                        "kubernetes",
                        "smoke",
                        "dcgm",
                        "nvbandwidth",
                        "nccl",
                        "rdma",
                        "framework"
                    ]),
                ),
        ),
    ];
    let mut problems = Vec::new();
    let mut checked = 0;
    for core in ["v1.34.2-standalone-strict", "v1.36.0-standalone-strict"] {
        for (what, variant) in &variants {
            // A `List` (kubectl applies its items) is checked item by item.
            let docs = acceptance(variant)
                .into_iter()
                .chain(readmission(variant))
                .flat_map(|(file, doc)| match doc["items"].as_array() {
                    Some(items) if doc["kind"] == "List" => items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| (format!("{file} items[{i}]"), item.clone()))
                        .collect(),
                    _ => vec![(file, doc)],
                });
            for (file, doc) in docs {
                match validate(core, &doc) {
                    Ok(errors) => {
                        checked += 1;
                        problems.extend(
                            errors
                                .into_iter()
                                .map(|e| format!("{what} {file} ({core}): {e}")),
                        );
                    }
                    Err(_) if UNVALIDATED.contains(&doc["kind"].as_str().unwrap()) => {}
                    Err(kind) => {
                        problems.push(format!("{what} {file}: no vendored schema for {kind}"))
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 40, "only {checked} manifests checked");

    // The check can fail: a misspelled field in a core kind and in a CRD kind.
    let docs = acceptance(&h100);
    let mut job = docs["nccl-job.yaml"].clone();
    job["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always".into();
    assert!(
        !validate("v1.36.0-standalone-strict", &job)
            .unwrap()
            .is_empty()
    );
    let mut mpijob = docs["nccl-multinode.yaml"].clone();
    mpijob["spec"]["slotsPerWorkerTypo"] = 1.into();
    assert!(
        !validate("v1.36.0-standalone-strict", &mpijob)
            .unwrap()
            .is_empty()
    );
    let mut mpijob = docs["nccl-multinode.yaml"].clone();
    mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]
        ["limitz"] = serde_json::json!({});
    assert!(
        !validate("v1.36.0-standalone-strict", &mpijob)
            .unwrap()
            .is_empty()
    );
    // A Role (its ClusterRole twin's schema) with a ClusterRole-only field, a typo.
    let access = &acceptance(&Variant::of("mi300x-rhel"))["test-runner-access.yaml"]["items"];
    let role = access[1].clone();
    assert_eq!(role["kind"], "Role");
    assert!(
        validate("v1.36.0-standalone-strict", &role)
            .unwrap()
            .is_empty()
    );
    for (field, value) in [
        ("aggregationRule", serde_json::json!({})),
        ("rulez", serde_json::json!([])),
    ] {
        let mut bad = role.clone();
        bad[field] = value;
        assert!(
            !validate("v1.36.0-standalone-strict", &bad)
                .unwrap()
                .is_empty(),
            "{field}"
        );
    }
}

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas"]
fn the_validator_accepts_the_upstream_samples() {
    // Known-good inputs: the samples each project ships with its CRD.
    let dir = k8s_schema::dir();
    let mut seen = 0;
    for sub in [
        "crds/mpi-operator/v0.8.0/samples",
        "crds/jobset/v0.12.0/samples",
    ] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for doc in serde_yaml::Deserializer::from_str(&text) {
                let doc: Value = serde::Deserialize::deserialize(doc).unwrap();
                if doc.is_null() {
                    continue;
                }
                let errors = validate("v1.36.0-standalone-strict", &doc).unwrap();
                assert!(errors.is_empty(), "{}: {errors:?}", path.display());
                seen += 1;
            }
        }
    }
    assert!(seen >= 2, "{seen} samples");
}

/// The smoke Pod names itself through the downward API, and the rendered probe prints
/// that name with the UUIDs it sees, in the lines `nodeimg accept` reads: what
/// `smoke.mapping` matches with dcgm-exporter's pod labels. `torch` is a stand-in module
/// here (no GPU) that reports two devices with UUIDs as PyTorch's CUDA build does.
#[test]
#[ignore = "needs python3 (the script the smoke Pod runs)"]
fn the_smoke_probe_prints_its_pod_and_the_uuids_it_sees() {
    let docs = acceptance(&Variant::of("h100-sxm-ubuntu"));
    let env = &docs["smoke-pod.yaml"]["spec"]["containers"][0]["env"];
    let field = |name: &str| {
        env.as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {env}"))["valueFrom"]["fieldRef"]["fieldPath"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(field("POD_NAME"), "metadata.name");
    assert_eq!(field("POD_NAMESPACE"), "metadata.namespace");

    let (probe, _) = scripts();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("probe.py"), &probe).unwrap();
    let torch = dir.path().join("torch");
    std::fs::create_dir(&torch).unwrap();
    std::fs::write(
        torch.join("__init__.py"),
        "import types, uuid\n\
version = types.SimpleNamespace(cuda='12.8')\n\
class _P:\n    def __init__(self, i):\n        self.name = 'NVIDIA H100 80GB HBM3'\n        self.uuid = uuid.UUID(int=i + 1)\n        self.pci_bus_id = 0x19 + 0x20 * i\n\
cuda = types.SimpleNamespace(device_count=lambda: 2, get_device_properties=_P)\n",
    )
    .unwrap();
    let out = std::process::Command::new("python3")
        .arg(dir.path().join("probe.py"))
        .arg("smoke")
        .env("PYTHONPATH", dir.path())
        .env("NODE_NAME", "gpu-node-01")
        .env("POD_NAME", "nodeimg-acceptance-smoke")
        .env("POD_NAMESPACE", "nodeimg-acceptance")
        .env("NODEIMG_REQUESTED", "2")
        .env("NODEIMG_HOLD_SECONDS", "0")
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let steps = nodeimg::accept::probe::parse(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    let devices = steps
        .iter()
        .find(|s| s.name == "devices")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(devices.pod.as_deref(), Some("nodeimg-acceptance-smoke"));
    assert_eq!(devices.namespace.as_deref(), Some("nodeimg-acceptance"));
    let uuids: Vec<&str> = devices
        .devices
        .iter()
        .flatten()
        .filter_map(|d| d.uuid.as_deref())
        .collect();
    assert_eq!(
        uuids,
        [
            "GPU-00000000-0000-0000-0000-000000000001",
            "GPU-00000000-0000-0000-0000-000000000002"
        ],
        "{stdout}"
    );
}

/// What the RBAC objects of `items` grant the service account `sa` of namespace `ns`:
/// (the namespace a Role binds it in, or None for cluster-wide; resource; verb), through
/// each binding whose subject it is and the role that binding names.
fn rbac_grants(items: &Value, sa: &Value, ns: &Value) -> Vec<(Option<String>, String, String)> {
    let items = items.as_array().unwrap();
    let mut out = Vec::new();
    for b in items
        .iter()
        .filter(|i| i["kind"] == "RoleBinding" || i["kind"] == "ClusterRoleBinding")
    {
        let bound =
            b["subjects"].as_array().unwrap().iter().any(|s| {
                s["kind"] == "ServiceAccount" && &s["name"] == sa && &s["namespace"] == ns
            });
        if !bound {
            continue;
        }
        let role = items
            .iter()
            .find(|r| {
                r["kind"] == b["roleRef"]["kind"]
                    && r["metadata"]["name"] == b["roleRef"]["name"]
                    && (r["kind"] == "ClusterRole"
                        || r["metadata"]["namespace"] == b["metadata"]["namespace"])
            })
            .unwrap_or_else(|| panic!("{} names no role here", b["metadata"]["name"]));
        let scope = (b["kind"] == "RoleBinding").then(|| b["metadata"]["namespace"].to_string());
        for rule in role["rules"].as_array().unwrap() {
            for res in rule["resources"].as_array().unwrap() {
                for verb in rule["verbs"].as_array().unwrap() {
                    out.push((
                        scope.clone(),
                        res.as_str().unwrap().to_owned(),
                        verb.as_str().unwrap().to_owned(),
                    ));
                }
            }
        }
    }
    out
}

/// Under MIG the smoke probe names each MIG device it sees by its parent GPU and GPU
/// instance, what dcgm-exporter labels the instance's series with (`UUID`, `GPU_I_ID`):
/// `nvidia-smi -q -x` here prints a real A100 in MIG mode (the corpus's
/// `nvidia-smi-xml/telegraf/a100-sxm4-v12.xml`: one GPU, MIG devices 0–3 on GPU
/// instances 3–6) and `nvidia-smi -L` that GPU's list in the layout of the corpus's H100
/// MIG capture; the stand-in `torch` reports the MIG devices 1 and 3 by their UUIDs.
#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus and runs python3 (cargo test -- --ignored)"]
fn the_smoke_probe_names_each_mig_devices_parent_and_instance() {
    let xml = root().join("../shared/corpus/nvidia-smi-xml/telegraf/a100-sxm4-v12.xml");
    assert!(xml.exists(), "corpus path {} is missing", xml.display());
    let parent = "GPU-513536b6-7d19-9063-b049-1e69664bb298";
    assert!(std::fs::read_to_string(&xml).unwrap().contains(parent));
    let mig = |i: u32| format!("MIG-{i:08x}-5d0c-5a8b-9c3d-2e1f0a9b8c7d");
    let (probe, _) = scripts();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("probe.py"), &probe).unwrap();
    let torch = dir.path().join("torch");
    std::fs::create_dir(&torch).unwrap();
    std::fs::write(
        torch.join("__init__.py"),
        format!(
            "import types, uuid\n\
version = types.SimpleNamespace(cuda='12.2')\n\
_U = ['{}', '{}']\n\
class _P:\n    def __init__(self, i):\n        self.name = 'NVIDIA A100-SXM4-80GB MIG 2g.20gb'\n        self.uuid = uuid.UUID(_U[i])\n\
cuda = types.SimpleNamespace(device_count=lambda: 2, get_device_properties=_P)\n",
            &mig(1)[4..],
            &mig(3)[4..]
        ),
    )
    .unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let listing: String =
        std::iter::once(format!("GPU 0: NVIDIA A100-SXM4-80GB (UUID: {parent})\n"))
            .chain((0..4).map(|i| format!("  MIG 2g.20gb     Device  {i}: (UUID: {})\n", mig(i))))
            .collect();
    std::fs::write(bin.join("smi-L.txt"), listing).unwrap();
    let smi = bin.join("nvidia-smi");
    std::fs::write(
        &smi,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n  -L) cat '{}' ;;\n  -q) cat '{}' ;;\n  *) exit 9 ;;\nesac\n",
            bin.join("smi-L.txt").display(),
            xml.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("python3")
        .arg(dir.path().join("probe.py"))
        .arg("smoke")
        .env("PYTHONPATH", dir.path())
        .env("PATH", path)
        .env("POD_NAME", "nodeimg-acceptance-smoke")
        .env("POD_NAMESPACE", "nodeimg-acceptance")
        .env("NODEIMG_REQUESTED", "2")
        .env("NODEIMG_HOLD_SECONDS", "0")
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let steps = nodeimg::accept::probe::parse(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    let devices = steps
        .iter()
        .find(|s| s.name == "devices")
        .and_then(|s| s.devices.clone())
        .unwrap_or_else(|| panic!("{stdout}"));
    let seen: Vec<(Option<&str>, Option<&str>, Option<u32>)> = devices
        .iter()
        .map(|d| (d.uuid.as_deref(), d.parent.as_deref(), d.gpu_instance))
        .collect();
    assert_eq!(
        seen,
        [
            (Some(mig(1).as_str()), Some(parent), Some(4)),
            (Some(mig(3).as_str()), Some(parent), Some(6)),
        ],
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
