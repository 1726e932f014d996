//! The cluster-side values the node depends on, read the way their
//! consumers read them: the NPD custom plugin monitor (NPD's condition
//! polarity), tolerations of every DaemonSet that must run on the tainted
//! node (core/v1 matching, cross-checked at render), the NFD worker's
//! configuration in its Helm values, the GPU Operator's pinned component
//! images, and the AMD DeviceConfig for the pinned chart.

use crate::support::*;
use nodeimg::render::tolerations;
use serde_json::{Value, json};

fn cluster(r: &nodeimg::render::Rendered, path: &str) -> Value {
    cluster_file(r, path)
}

fn tolerated(list: &Value, taint: &str) -> bool {
    let t: nodeimg::blueprint::value::Taint = taint.parse().unwrap();
    list.as_array()
        .is_some_and(|l| l.iter().any(|x| tolerations::tolerates(x, &t)))
}

#[test]
fn npd_reads_a_custom_plugin_monitor_whose_condition_is_a_problem() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    assert!(
        r.layer
            .files()
            .all(|(p, _, _)| !p.contains("node-problem-detector")),
        "NPD reads no host folder: its configuration is cluster-side"
    );
    let v = cluster(&r, "node-problem-detector-values.yaml");
    // The chart mounts custom_monitor_definitions at /custom-config and
    // passes custom_plugin_monitors to --config.custom-plugin-monitor.
    let defs = v["settings"]["custom_monitor_definitions"]
        .as_object()
        .unwrap();
    let (file, text) = defs.iter().next().unwrap();
    assert_eq!(
        v["settings"]["custom_plugin_monitors"],
        json!([format!("/custom-config/{file}")])
    );
    let monitor: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    assert_eq!(monitor["plugin"], "custom");
    let cond = &monitor["conditions"][0];
    let rule = &monitor["rules"][0];
    // NPD sets a permanent rule's condition True when the plugin reports
    // NonOK: the condition must name the problem, its default reason health.
    assert_eq!(rule["type"], "permanent");
    assert_eq!(rule["condition"], cond["type"]);
    assert_eq!(cond["type"], "GPUProblem");
    assert_eq!(cond["reason"], "GPUsHealthy");
    assert_ne!(rule["reason"], cond["reason"]);
    // The plugin runs the node's verifier in the host's namespaces.
    assert_eq!(rule["path"], "/usr/bin/nsenter");
    let args: Vec<&str> = rule["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let bin = args
        .iter()
        .position(|a| *a == "/usr/local/bin/nodeimg")
        .unwrap();
    assert!(args[..bin].contains(&"--mount") && args[..bin].contains(&"--target"));
    assert_eq!(&args[bin + 2..bin + 5], &["verify", "--phase", "health"]);
    assert_eq!(v["hostPID"], true);
    assert_eq!(v["securityContext"]["privileged"], true);
    assert!(tolerated(
        &v["tolerations"],
        "nvidia.com/gpu=present:NoSchedule"
    ));
}

#[test]
fn every_node_daemonset_tolerates_the_node_taints() {
    // H100: an external NFD (the operator's is off) and the operator's operands.
    let r = rendered(&example("h100-sxm-ubuntu"));
    let taint = "nvidia.com/gpu=present:NoSchedule";
    assert!(tolerated(
        &cluster(&r, "nfd-values.yaml")["worker"]["tolerations"],
        taint
    ));
    assert!(tolerated(
        &cluster(&r, "gpu-operator-values.yaml")["daemonsets"]["tolerations"],
        taint
    ));
    // MI300X: DeviceConfig DaemonSets (the operator defaults to none), the
    // driver's KMM pods included (chart v1.5.1 has spec.driver.tolerations).
    let r = rendered(&example("mi300x-rhel"));
    let taint = "amd.com/gpu=present:NoSchedule";
    let dc = amd_deviceconfig(&r);
    for list in [
        &dc["spec"]["devicePlugin"]["devicePluginTolerations"],
        &dc["spec"]["devicePlugin"]["nodeLabellerTolerations"],
        &dc["spec"]["metricsExporter"]["tolerations"],
        &dc["spec"]["driver"]["tolerations"],
        &cluster(&r, "nfd-values.yaml")["worker"]["tolerations"],
        &cluster(&r, "node-problem-detector-values.yaml")["tolerations"],
    ] {
        assert!(tolerated(list, taint), "{list}");
    }
    // A taint of another key with NoExecute reaches every list too.
    let bp = Variant::of("mi300x-rhel")
        .set(
            "kubernetes.taints",
            json!([
                "amd.com/gpu=present:NoSchedule",
                "fleet.example.com/burn-in:NoExecute"
            ]),
        )
        .load();
    let r = rendered(&bp);
    assert!(tolerations::check(&r, &bp.spec().kubernetes.taints).is_empty());
    assert!(tolerated(
        &amd_deviceconfig(&r)["spec"]["metricsExporter"]["tolerations"],
        "fleet.example.com/burn-in:NoExecute"
    ));
}

/// The AMD DeviceConfig as the cluster gets it: its own CR (chart before v1.3.0), or
/// the chart's default DeviceConfig, made from the values' `deviceConfig.spec`.
fn amd_deviceconfig(r: &nodeimg::render::Rendered) -> Value {
    if r.cluster.file("amd-deviceconfig.yaml").is_some() {
        return cluster(r, "amd-deviceconfig.yaml");
    }
    let values = cluster(r, "amd-gpu-operator-values.yaml");
    json!({
        "apiVersion": "amd.com/v1alpha1",
        "kind": "DeviceConfig",
        "metadata": {"name": "default", "namespace": "kube-amd-gpu"},
        "spec": values["deviceConfig"]["spec"],
    })
}

/// The MI300X example on chart v1.2.0, whose DeviceConfig has no driver tolerations.
fn mi300x_chart_v1_2() -> Variant {
    Variant::of("mi300x-rhel").set("accelerators.operator.version", json!("v1.2.0"))
}

#[test]
fn amd_driver_tolerations_follow_the_pinned_chart() {
    // v1.2.0 on a node tainted NoSchedule: the KMM pods could never tolerate the taint
    // (the CRD has no spec.driver.tolerations; the API server prunes it), so the driver
    // never loads: refused, naming the field, the chart and the fix.
    let d = mi300x_chart_v1_2().try_load().unwrap_err();
    let e = d
        .iter()
        .find(|d| d.code == "amd-driver-tolerations")
        .unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(e.path.to_string(), "accelerators.operator.version");
    for want in [
        "spec.driver.tolerations",
        "v1.2.0",
        "v1.3.1",
        "amd.com/gpu=present:NoSchedule",
    ] {
        assert!(e.message.contains(want), "{want}: {}", e.message);
    }
    let hint = e.hint.as_deref().unwrap();
    assert!(
        hint.contains("v1.3.1") && hint.contains("preinstalled"),
        "{hint}"
    );
    // v1.3.0 renders the DeviceConfig from its values, still without the field.
    let d = Variant::of("mi300x-rhel")
        .set("accelerators.operator.version", json!("v1.3.0"))
        .try_load()
        .unwrap_err();
    assert!(
        d.iter().any(|d| d.code == "amd-driver-tolerations"),
        "{d:?}"
    );
    // NoExecute blocks too; PreferNoSchedule keeps no pod off the node.
    let noexec = mi300x_chart_v1_2().set(
        "kubernetes.taints",
        json!(["fleet.example.com/burn-in:NoExecute"]),
    );
    assert!(noexec.try_load().is_err());
    let prefer = mi300x_chart_v1_2().set(
        "kubernetes.taints",
        json!(["amd.com/gpu=present:PreferNoSchedule"]),
    );
    let bp = prefer.load();
    let r = rendered(&bp);
    let dc = cluster(&r, "amd-deviceconfig.yaml");
    assert_eq!(dc["spec"]["driver"]["enable"], true);
    // Not rendered where the chart would prune it; and the render cross-check agrees.
    assert!(dc["spec"]["driver"].get("tolerations").is_none(), "{dc}");
    assert!(tolerations::check(&r, &bp.spec().kubernetes.taints).is_empty());
    // A driver the operator does not build needs no tolerations on v1.2.0.
    assert!(
        mi300x_chart_v1_2()
            .set("accelerators.driver.authority", json!("preinstalled"))
            .set(
                "accelerators.operator.manages",
                json!(["device-plugin", "metrics-exporter"])
            )
            .remove("accelerators.operator.driverImage")
            .remove("accelerators.operator.moduleSigning")
            .try_load()
            .is_ok()
    );
    // v1.3.1 and later: the field is rendered, tolerating the node's taint.
    for version in ["v1.3.1", "v1.4.0", "v1.5.1"] {
        let bp = Variant::of("mi300x-rhel")
            .set("accelerators.operator.version", json!(version))
            .load();
        let dc = amd_deviceconfig(&rendered(&bp));
        assert!(
            tolerated(
                &dc["spec"]["driver"]["tolerations"],
                "amd.com/gpu=present:NoSchedule"
            ),
            "{version}: {dc}"
        );
    }
}

#[test]
fn a_template_that_drops_tolerations_is_refused_at_render() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("cluster")).unwrap();
    std::fs::write(
        dir.path().join("cluster/nfd-values.yaml.j2"),
        "worker:\n  config:\n    core:\n      labelSources: [pci]\n",
    )
    .unwrap();
    let templates = nodeimg::render::Templates::with_overrides(dir.path()).unwrap();
    let err = nodeimg::render::render(&example("h100-sxm-ubuntu"), &templates)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cluster/nfd-values.yaml")
            && err.contains("nvidia.com/gpu=present:NoSchedule"),
        "{err}"
    );
}

#[test]
fn nfd_worker_configuration_is_in_its_helm_values() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    assert!(
        r.layer
            .files()
            .all(|(p, _, _)| !p.contains("node-feature-discovery")),
        "nfd-worker reads a ConfigMap in its pod, never a host file"
    );
    let v = cluster(&r, "nfd-values.yaml");
    assert_eq!(
        v["worker"]["config"]["core"]["labelSources"],
        json!(["pci", "kernel", "cpu", "system", "network"])
    );
    // When the operator deploys NFD, the configuration goes to its subchart.
    let v = operator_deployed_nfd();
    let w = &v["node-feature-discovery"]["worker"];
    assert_eq!(w["config"]["core"]["labelSources"][0], "pci");
    assert!(tolerated(
        &w["tolerations"],
        "nvidia.com/gpu=present:NoSchedule"
    ));
}

#[test]
fn gpu_operator_images_follow_the_blueprint_pins() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let v = cluster(&r, "gpu-operator-values.yaml");
    // deviceInjection.version 0.18.1 → the device plugin's image tag (GFD shares it).
    assert_eq!(v["devicePlugin"]["version"], "v0.18.1");
    assert_eq!(v["gfd"]["version"], "v0.18.1");
    // An operator-installed driver: the chart takes an image tag.
    let bp = Variant::of("h100-sxm-ubuntu")
        .set("accelerators.driver.authority", json!("operator"))
        .set(
            "accelerators.operator.manages",
            json!([
                "driver",
                "device-plugin",
                "dcgm-exporter",
                "gpu-feature-discovery"
            ]),
        )
        .load();
    let v = cluster(&rendered(&bp), "gpu-operator-values.yaml");
    assert_eq!(v["driver"]["version"], "580.105.08");
}

#[test]
fn validate_and_render_refuse_a_chart_that_leaves_the_driver_untolerated() {
    // Without the files beside the example (overlay, registry CA), so it stands alone.
    let dir = tempfile::tempdir().unwrap();
    let bp = mi300x_chart_v1_2()
        .remove("files")
        .remove("runtime.containerd.registries")
        .write(&dir.path().join("bp.yaml"));
    let bp = bp.to_str().unwrap();
    let o = nodeimg(&["validate", bp]);
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("error[amd-driver-tolerations]: accelerators.operator.version:"),
        "{text}"
    );
    let out = dir.path().join("out");
    let o = nodeimg(&["render", "--output", out.to_str().unwrap(), bp]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.join("cluster").exists(), "nothing rendered");
}

#[test]
fn amd_deviceconfig_follows_the_pinned_chart() {
    // v1.2.0: no deviceConfig in the chart's values, so the CR is its own file.
    let bp = mi300x_chart_v1_2()
        .set("kubernetes.taints", json!([]))
        .load();
    let r = rendered(&bp);
    let values = cluster(&r, "amd-gpu-operator-values.yaml");
    assert!(values.get("deviceConfig").is_none(), "{values}");
    assert!(values.get("crds").is_none(), "{values}");
    let dc = cluster(&r, "amd-deviceconfig.yaml");
    assert_eq!(dc["apiVersion"], "amd.com/v1alpha1");
    assert_eq!(dc["kind"], "DeviceConfig");
    let d = &dc["spec"]["driver"];
    assert_eq!(d["enable"], true);
    assert_eq!(d["blacklist"], true, "the inbox amdgpu must be blacklisted");
    assert_eq!(d["version"], "6.2.4");
    // v1.3.0 and later (the example pins v1.5.1) render deviceConfig.spec themselves,
    // on helm upgrade too, so a changed spec reaches the DeviceConfig.
    let bp = Variant::of("mi300x-rhel")
        .set("accelerators.operator.version", json!("v1.3.0"))
        .set("kubernetes.taints", json!([]))
        .load();
    assert!(
        rendered(&bp)
            .cluster
            .file("amd-deviceconfig.yaml")
            .is_none()
    );
    let r = rendered(&example("mi300x-rhel"));
    assert!(r.cluster.file("amd-deviceconfig.yaml").is_none());
    let values = cluster(&r, "amd-gpu-operator-values.yaml");
    assert_eq!(
        values["crds"]["defaultCR"],
        json!({"install": true, "upgrade": true})
    );
    assert_eq!(values["deviceConfig"]["spec"]["driver"]["blacklist"], true);
    assert_eq!(values["deviceConfig"]["spec"]["driver"]["version"], "6.2.4");
    assert!(tolerated(
        &values["deviceConfig"]["spec"]["devicePlugin"]["devicePluginTolerations"],
        "amd.com/gpu=present:NoSchedule"
    ));
}

/// The DeviceConfig's test runner (CRD v1.2.0 `spec.testRunner`): enabled with the
/// acceptance's image, its ConfigMap named by `config.name` and rendered beside it in the
/// operator's namespace, the blueprint's recipe under the unhealthy-GPU watch's trigger,
/// logs kept on the node, and tolerating the node's taint. Only where the operator runs
/// the metrics exporter, whose GPU health the runner watches.
#[test]
fn amd_test_runner_watches_unhealthy_gpus_with_the_blueprints_recipe() {
    let r = rendered(&example("mi300x-rhel"));
    let dc = amd_deviceconfig(&r);
    let tr = &dc["spec"]["testRunner"];
    assert_eq!(tr["enable"], true);
    assert!(
        tr["image"]
            .as_str()
            .unwrap()
            .starts_with("registry.gpu.example.com/amd/test-runner:"),
        "{tr}"
    );
    assert_eq!(tr["logsLocation"]["hostPath"], "/var/log/amd-test-runner");
    assert!(tolerated(
        &tr["tolerations"],
        "amd.com/gpu=present:NoSchedule"
    ));
    let cm = cluster(&r, "amd-test-runner-config.yaml");
    assert_eq!(cm["kind"], "ConfigMap");
    assert_eq!(cm["metadata"]["name"], tr["config"]["name"]);
    assert_eq!(cm["metadata"]["namespace"], dc["metadata"]["namespace"]);
    let config: Value = serde_json::from_str(cm["data"]["config.json"].as_str().unwrap()).unwrap();
    let case = &config["TestConfig"]["GPU_HEALTH_CHECK"]["TestLocationTrigger"]["global"]["TestParameters"]
        ["AUTO_UNHEALTHY_GPU_WATCH"]["TestCases"][0];
    assert_eq!(case["Recipe"], "gst_single");
    assert_eq!(case["TimeoutSeconds"], 1200);
    // Chart v1.2.0: the same runner in the DeviceConfig of its own.
    let bp = mi300x_chart_v1_2()
        .set("kubernetes.taints", json!([]))
        .load();
    let dc = cluster(&rendered(&bp), "amd-deviceconfig.yaml");
    assert_eq!(dc["spec"]["testRunner"]["enable"], true);
    // Without the metrics exporter there is no health to watch: no runner, no ConfigMap.
    let bp = Variant::of("mi300x-rhel")
        .set(
            "accelerators.operator.manages",
            json!(["driver", "device-plugin"]),
        )
        .load();
    let r = rendered(&bp);
    assert!(amd_deviceconfig(&r)["spec"].get("testRunner").is_none());
    assert!(r.cluster.file("amd-test-runner-config.yaml").is_none());
}

#[test]
fn shm_is_sized_in_pods_not_on_the_host() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    assert!(
        r.layer.files().all(|(p, _, b)| !p.contains("nodeimg-shm")
            && !String::from_utf8_lossy(b).contains("remount,size=")),
        "the host's /dev/shm is not remounted (pods have their own)"
    );
    let p = cluster(&r, "shm-policy.yaml");
    assert_eq!(p["apiVersion"], "kyverno.io/v1");
    assert_eq!(p["kind"], "ClusterPolicy");
    let rule = &p["spec"]["rules"][0];
    let patch = &rule["mutate"]["patchStrategicMerge"]["spec"];
    let vol = &patch["volumes"][0];
    assert_eq!(vol["emptyDir"]["medium"], "Memory");
    assert_eq!(vol["emptyDir"]["sizeLimit"], "64Gi");
    let mount = &patch["containers"][0]["volumeMounts"][0];
    assert_eq!(mount["mountPath"], "/dev/shm");
    assert_eq!(mount["name"], vol["name"]);
    assert_eq!(patch["containers"][0]["(name)"], "*");
    // Applied to the pods that take this node's GPUs.
    let keys: Vec<&str> = rule["preconditions"]["any"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert!(
        keys.iter().any(|k| k.contains("\"nvidia.com/gpu\"")),
        "{keys:?}"
    );
    let r = rendered(&example("mi300x-rhel"));
    let p = cluster(&r, "shm-policy.yaml");
    assert_eq!(
        p["spec"]["rules"][0]["mutate"]["patchStrategicMerge"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
        "128Gi"
    );
}

fn crd_schema(file: &str, version: &str) -> Value {
    let path = root().join("../shared/corpus/k8s-schemas/crds").join(file);
    let crd: Value = serde_yaml::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap();
    crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("{file}: no version {version}"))["schema"]["openAPIV3Schema"]
        .clone()
}

/// `\0` in a CRD pattern (Go's RE2 takes it) as `\x00`, which the
/// validator's regex engine takes too; the same class of characters.
fn portable_patterns(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(p)) = o.get_mut("pattern") {
                *p = p.replace("\\0", "\\x00");
            }
            o.values_mut().for_each(portable_patterns);
        }
        Value::Array(a) => a.iter_mut().for_each(portable_patterns),
        _ => {}
    }
}

fn schema_errors(schema: &Value, doc: &Value) -> Vec<String> {
    let mut schema = schema.clone();
    portable_patterns(&mut schema);
    let schema = &schema;
    jsonschema::draft4::new(schema)
        .unwrap()
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The DeviceConfig CRD of ROCm GPU Operator chart `version`, as the corpus keeps it (the
/// chart's `crds/` file: `helm-charts/` until v1.2.0, `helm-charts-k8s/` after), tightened:
/// a field that release does not know is refused, as the API server would prune it.
fn amd_deviceconfig_crd(version: &str) -> Value {
    let dir = format!("rocm-gpu-operator/{version}");
    let file = [
        "helm-charts-k8s__crds__deviceconfig-crd.yaml",
        "helm-charts__crds__deviceconfig-crd.yaml",
    ]
    .iter()
    .map(|f| format!("{dir}/{f}"))
    .find(|f| {
        crate::support::k8s_schema::dir()
            .join("crds")
            .join(f)
            .is_file()
    })
    .unwrap_or_else(|| {
        panic!("the corpus has no DeviceConfig CRD of chart {version} under crds/{dir}")
    });
    let mut schema = crd_schema(&file, "v1alpha1");
    crate::support::k8s_schema::tighten(&mut schema);
    schema
}

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas (Kyverno, ROCm GPU Operator and NFD CRDs)"]
fn cluster_objects_validate_against_their_crds() {
    let kyverno = crd_schema("kyverno/v1.19.0/kyverno.io_clusterpolicies.yaml", "v1");
    for name in EXAMPLES {
        let bp = example(name);
        let r = rendered(&bp);
        if r.cluster.file("shm-policy.yaml").is_some() {
            let e = schema_errors(&kyverno, &cluster(&r, "shm-policy.yaml"));
            assert!(e.is_empty(), "{name}: shm-policy.yaml: {e:?}");
        }
        // The DeviceConfig against the CRD of the chart the blueprint pins.
        if r.cluster.file("amd-gpu-operator-values.yaml").is_some() {
            let pinned = bp
                .spec()
                .accelerators
                .as_ref()
                .unwrap()
                .operator
                .as_ref()
                .unwrap()
                .version
                .to_string();
            let crd = amd_deviceconfig_crd(&pinned);
            let e = schema_errors(&crd, &amd_deviceconfig(&r));
            assert!(e.is_empty(), "{name}: DeviceConfig (chart {pinned}): {e:?}");
        }
    }
    // The example's chart (v1.5.1) keeps the driver's tolerations, v1.2.0's CRD refuses
    // them: the field is pruned there, which is why it is not rendered for v1.2.0.
    let dc = amd_deviceconfig(&rendered(&example("mi300x-rhel")));
    assert!(dc["spec"]["driver"]["tolerations"].is_array(), "{dc}");
    let v1_5 = amd_deviceconfig_crd("v1.5.1");
    let v1_2 = amd_deviceconfig_crd("v1.2.0");
    assert!(schema_errors(&v1_5, &dc).is_empty());
    let e = schema_errors(&v1_2, &dc);
    assert!(e.iter().any(|e| e.contains("/spec/driver")), "{e:?}");
    // On v1.2.0 (untainted, so valid) the rendered CR is that release's own.
    let bp = mi300x_chart_v1_2()
        .set("kubernetes.taints", json!([]))
        .load();
    let dc = cluster(&rendered(&bp), "amd-deviceconfig.yaml");
    let e = schema_errors(&v1_2, &dc);
    assert!(e.is_empty(), "mi300x-rhel on v1.2.0: {e:?}");
    // The driver's upgrade policy is in both CRDs; gracePeriodSeconds only from v1.2.2, so
    // v1.2.0's policy has none and its CRD would refuse (prune) one.
    let policy = &dc["spec"]["driver"]["upgradePolicy"];
    assert_eq!(policy["enable"], true, "{dc}");
    assert!(
        policy["nodeDrainPolicy"]
            .get("gracePeriodSeconds")
            .is_none()
    );
    let mut graced = dc.clone();
    graced["spec"]["driver"]["upgradePolicy"]["nodeDrainPolicy"]["gracePeriodSeconds"] = json!(-1);
    assert!(!schema_errors(&v1_2, &graced).is_empty());
    assert!(schema_errors(&v1_5, &graced).is_empty());
    let tr = &dc["spec"]["testRunner"];
    assert_eq!(tr["enable"], true);
    let runner = &v1_2["properties"]["spec"]["properties"]["testRunner"];
    let mut bad = tr.clone();
    bad["upgradePolicy"]["upgradeStrategy"] = json!("Sometimes");
    assert!(!schema_errors(runner, &bad).is_empty());
    let mut bad = tr.clone();
    bad["recipe"] = json!("gst_single");
    assert!(!schema_errors(runner, &bad).is_empty());
    // The validator is not vacuous: wrong types fail.
    let mut bad = cluster(&rendered(&example("h100-sxm-ubuntu")), "shm-policy.yaml");
    bad["spec"]["background"] = json!("no");
    assert!(!schema_errors(&kyverno, &bad).is_empty());
    let mut bad = dc.clone();
    bad["spec"]["driver"]["blacklist"] = json!("yes");
    assert!(!schema_errors(&v1_2, &bad).is_empty());
}

/// `ExecStart=` lines of a rendered unit, each as its words.
fn exec_starts(r: &nodeimg::render::Rendered, unit: &str) -> Vec<Vec<String>> {
    let (_, _, bytes) = r
        .layer
        .files()
        .find(|(p, _, _)| *p == unit)
        .unwrap_or_else(|| panic!("{unit} not rendered"));
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("ExecStart="))
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

fn flag<'a>(argv: &'a [String], name: &str) -> Option<&'a str> {
    argv.iter()
        .find_map(|a| a.strip_prefix(name)?.strip_prefix('='))
}

#[test]
fn the_operator_without_its_toolkit_finds_the_management_cdi_spec_on_the_node() {
    // GPU Operator v25.10 on CDI gives its operands (validator, device
    // plugin) management.nvidia.com/gpu=all, which its toolkit DaemonSet
    // writes. The H100 example's operator does not run the toolkit: the
    // node writes that spec, under its own kind, beside the GPU spec.
    let unit = "etc/systemd/system/nodeimg-cdi-generate.service";
    let r = rendered(&example("h100-sxm-ubuntu"));
    assert_eq!(
        cluster(&r, "gpu-operator-values.yaml")["toolkit"]["enabled"],
        false
    );
    assert_eq!(
        cluster(&r, "gpu-operator-values.yaml")["cdi"]["enabled"],
        true
    );
    let runs = exec_starts(&r, unit);
    assert_eq!(runs.len(), 2, "{runs:?}");
    let gpu = runs.iter().find(|a| flag(a, "--mode").is_none()).unwrap();
    let management = runs
        .iter()
        .find(|a| flag(a, "--mode") == Some("management"))
        .unwrap_or_else(|| panic!("no management spec: {runs:?}"));
    assert_eq!(management[..3], ["/usr/bin/nvidia-ctk", "cdi", "generate"]);
    // Without --vendor/--class nvidia-ctk writes kind nvidia.com/gpu, and
    // the two specs would define the same devices.
    let kind = format!(
        "{}/{}",
        flag(management, "--vendor").unwrap(),
        flag(management, "--class").unwrap()
    );
    assert_eq!(kind, "management.nvidia.com/gpu");
    let out = flag(management, "--output").unwrap();
    assert_ne!(Some(out), flag(gpu, "--output"));
    assert!(
        ["/etc/cdi/", "/var/run/cdi/"]
            .iter()
            .any(|d| out.starts_with(d) && out.ends_with(".yaml")),
        "{out}"
    );
    // A node without the operator needs no management spec.
    let r = rendered(&example("h100-sxm-debian"));
    let runs = exec_starts(&r, unit);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(flag(&runs[0], "--mode"), None);
}

#[test]
fn the_pinned_nfd_release_reaches_the_values_that_deploy_it() {
    // Standalone NFD (the operator does not deploy it): its chart values.
    let r = rendered(&example("h100-sxm-ubuntu"));
    let v = cluster(&r, "nfd-values.yaml");
    assert_eq!(v["image"]["tag"], "v0.18.2");
    assert!(
        std::str::from_utf8(r.cluster.file("nfd-values.yaml").unwrap())
            .unwrap()
            .contains("--version 0.18.2"),
    );
    // The operator deploys NFD: its subchart's values carry the pin.
    let v = operator_deployed_nfd();
    assert_eq!(v["node-feature-discovery"]["image"]["tag"], "v0.18.2");
}

/// The H100 example with the GPU operator deploying NFD too: its values, after checking
/// that standalone NFD values are then not rendered and the operator's subchart is on.
fn operator_deployed_nfd() -> Value {
    let bp = Variant::of("h100-sxm-ubuntu")
        .set(
            "accelerators.operator.manages",
            json!([
                "device-plugin",
                "dcgm-exporter",
                "gpu-feature-discovery",
                "node-feature-discovery"
            ]),
        )
        .load();
    let r = rendered(&bp);
    assert!(r.cluster.file("nfd-values.yaml").is_none());
    let v = cluster(&r, "gpu-operator-values.yaml");
    assert_eq!(v["nfd"]["enabled"], true);
    v
}

/// The RuntimeClasses of a rendered class, by handler.
fn runtime_classes(r: &nodeimg::render::Rendered) -> Vec<Value> {
    r.cluster
        .files()
        .filter(|(p, _, _)| p.starts_with("runtime-classes/"))
        .map(|(p, _, _)| cluster(r, p))
        .collect()
}

#[test]
fn each_containerd_handler_has_a_runtime_class_that_keeps_pods_on_the_class() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    // The handlers containerd reads from the rendered config.
    let config: toml::Value = toml::from_str(
        std::str::from_utf8(r.layer.file("etc/containerd/config.toml").unwrap()).unwrap(),
    )
    .unwrap();
    let runtimes = config["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]
        .as_table()
        .unwrap();
    let classes = runtime_classes(&r);
    let handlers: Vec<&str> = classes
        .iter()
        .map(|c| c["handler"].as_str().unwrap())
        .collect();
    assert_eq!(handlers, ["nvidia"], "runc, the default, needs none");
    for c in &classes {
        let handler = c["handler"].as_str().unwrap();
        assert!(
            runtimes.contains_key(handler),
            "{handler} not in config.toml"
        );
        // Named per class: the GPU Operator owns a RuntimeClass `nvidia` of its own.
        assert_eq!(c["metadata"]["name"], format!("{handler}-h100-sxm-ubuntu"));
        // A Pod that names it gets the class's labels and tolerates its taints.
        assert_eq!(
            c["scheduling"]["nodeSelector"],
            json!({"platform.example.com/node-class": "h100-sxm"})
        );
        assert!(tolerated(
            &c["scheduling"]["tolerations"],
            "nvidia.com/gpu=present:NoSchedule"
        ));
    }

    // Kata and gVisor add theirs; a CPU class without extra runtimes renders none.
    let r = rendered(
        &crate::support::variant::Variant::of("h100-sxm-ubuntu")
            .set(
                "runtime.containerd.extraRuntimes",
                json!(["kata", "gvisor"]),
            )
            .load(),
    );
    let mut names: Vec<String> = runtime_classes(&r)
        .iter()
        .map(|c| {
            format!(
                "{}={}",
                c["metadata"]["name"].as_str().unwrap(),
                c["handler"]
            )
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "kata-h100-sxm-ubuntu=\"kata\"",
            "nvidia-h100-sxm-ubuntu=\"nvidia\"",
            "runsc-h100-sxm-ubuntu=\"runsc\""
        ]
    );
    assert!(runtime_classes(&rendered(&example("cpu-minimal"))).is_empty());
}

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas and ../shared/corpus/gpu-operator-helm"]
fn runtime_classes_validate_and_never_share_the_operators_name() {
    use crate::support::k8s_schema;
    let dir = k8s_schema::dir();
    let mut checked = 0;
    for name in EXAMPLES {
        let bp = example(name);
        let r = rendered(&bp);
        for doc in runtime_classes(&r) {
            for core in ["v1.34.2-standalone-strict", "v1.36.0-standalone-strict"] {
                let errors = k8s_schema::validate(core, &doc).unwrap();
                assert!(errors.is_empty(), "{name} ({core}): {errors:?}");
                checked += 1;
            }
            // The operator's own RuntimeClass is `operator.runtimeClass` of the chart the
            // blueprint pins.
            if let Some(op) = bp
                .spec()
                .accelerators
                .as_ref()
                .and_then(|a| a.operator.as_ref())
            {
                let version = op.version.to_string();
                let values = root().join(format!(
                    "../shared/corpus/gpu-operator-helm/v{}/values.yaml",
                    version.trim_start_matches('v')
                ));
                let values: Value =
                    serde_yaml::from_str(&std::fs::read_to_string(&values).unwrap()).unwrap();
                let theirs = values["operator"]["runtimeClass"].as_str().unwrap();
                assert_eq!(theirs, "nvidia");
                assert_ne!(doc["metadata"]["name"], theirs, "{name}");
            }
        }
    }
    assert!(
        dir.is_dir() && checked >= 2,
        "{checked} RuntimeClasses checked"
    );
    // The check can fail: a misspelled field.
    let mut bad = runtime_classes(&rendered(&example("h100-sxm-ubuntu"))).remove(0);
    bad["scheduling"]["nodeSelectr"] = json!({});
    assert!(
        !k8s_schema::validate("v1.36.0-standalone-strict", &bad)
            .unwrap()
            .is_empty()
    );
}
