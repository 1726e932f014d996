//! The Kubernetes API, for the Node, the Pods on it and the RuntimeClasses: the raw JSON the API server
//! returns, read by the same parsers as `kubectl get -o json` output, so a file and the
//! API give the same typed view. Credentials come from a kubeconfig (`--kubeconfig`,
//! `$KUBECONFIG`, `~/.kube/config`) or, inside a Pod, the service account.
//!
//! Requests run on a current-thread runtime under one deadline.

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::Request;
use kube::core::params::{GetParams, ListParams};
use kube::{Client, Config};
use std::path::Path;
use std::time::Duration;

/// What the API returned for one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// `GET /api/v1/nodes/{name}`.
    pub node: String,
    /// `GET /api/v1/pods?fieldSelector=spec.nodeName={name}`.
    pub pods: String,
    /// `GET /apis/node.k8s.io/v1/runtimeclasses`.
    pub runtime_classes: String,
    /// The API server the answers came from.
    pub server: String,
}

/// Reads the Node `name`, the Pods bound to it and the cluster's RuntimeClasses.
pub fn fetch(name: &str, kubeconfig: Option<&Path>, timeout: Duration) -> Result<Fetched, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the HTTP runtime: {e}"))?;
    runtime.block_on(async {
        tokio::time::timeout(timeout, fetch_async(name, kubeconfig))
            .await
            .map_err(|_| {
                format!(
                    "the Kubernetes API did not answer within {}s",
                    timeout.as_secs()
                )
            })?
    })
}

async fn config(kubeconfig: Option<&Path>) -> Result<Config, String> {
    match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path)
                .map_err(|e| format!("kubeconfig {}: {e}", path.display()))?;
            Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .map_err(|e| format!("kubeconfig {}: {e}", path.display()))
        }
        // $KUBECONFIG, ~/.kube/config, then the in-cluster service account.
        None => Config::infer().await.map_err(|e| {
            format!("no Kubernetes credentials (kubeconfig or in-cluster service account): {e}")
        }),
    }
}

async fn fetch_async(name: &str, kubeconfig: Option<&Path>) -> Result<Fetched, String> {
    let config = config(kubeconfig).await?;
    let server = config.cluster_url.to_string();
    let client =
        Client::try_from(config).map_err(|e| format!("Kubernetes client for {server}: {e}"))?;
    let get = Request::new("/api/v1/nodes")
        .get(name, &GetParams::default())
        .map_err(|e| format!("node {name}: {e}"))?;
    let node = client
        .request_text(get)
        .await
        .map_err(|e| format!("GET node {name} from {server}: {e}"))?;
    let list = Request::new("/api/v1/pods")
        .list(&ListParams::default().fields(&format!("spec.nodeName={name}")))
        .map_err(|e| format!("pods of {name}: {e}"))?;
    let pods = client
        .request_text(list)
        .await
        .map_err(|e| format!("GET pods on {name} from {server}: {e}"))?;
    let list = Request::new("/apis/node.k8s.io/v1/runtimeclasses")
        .list(&ListParams::default())
        .map_err(|e| format!("runtime classes: {e}"))?;
    let runtime_classes = client
        .request_text(list)
        .await
        .map_err(|e| format!("GET runtimeclasses from {server}: {e}"))?;
    Ok(Fetched {
        node,
        pods,
        runtime_classes,
        server,
    })
}
