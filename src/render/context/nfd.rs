//! `nfd`: the NFD worker's Helm values (its configuration and tolerations)
//! and the cluster-side NodeFeatureRule.

use crate::blueprint::Spec;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::blueprint::model::*;

#[derive(Debug, Clone, Serialize)]
pub struct Nfd<'a> {
    /// The pinned release as the chart names it (`0.18.2`), and the tag of
    /// its image (`v0.18.2`).
    pub version: Option<String>,
    pub image_tag: Option<String>,
    pub sources: &'a [NfdSource],
    /// The GPU operator deploys NFD (its values carry the worker's
    /// configuration); otherwise a standalone NFD's values are rendered.
    pub operator_managed: bool,
    /// One NodeFeatureRule rule per platform label.
    pub labels: Vec<Rule<'a>>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule<'a> {
    pub name: String,
    pub labels: BTreeMap<&'a str, &'a str>,
    pub match_features: Vec<MatchFeature<'a>>,
}

/// NFD groups expressions by feature: one matchFeatures entry each.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchFeature<'a> {
    pub feature: &'a str,
    pub match_expressions: BTreeMap<&'a str, Expression<'a>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Expression<'a> {
    pub op: MatchOp,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub value: &'a [String],
}

pub(super) fn of(s: &Spec) -> Nfd<'_> {
    let n = &s.kubernetes.nfd;
    let labels = n
        .platform_labels
        .iter()
        .map(|l| {
            let mut by_feature: BTreeMap<&str, BTreeMap<&str, Expression<'_>>> = BTreeMap::new();
            for m in &l.when {
                by_feature.entry(&m.feature).or_default().insert(
                    &m.attribute,
                    Expression {
                        op: m.op,
                        value: &m.values,
                    },
                );
            }
            Rule {
                name: format!("{}={}", l.to.as_str(), l.value.as_str()),
                labels: BTreeMap::from([(l.to.as_str(), l.value.as_str())]),
                match_features: by_feature
                    .into_iter()
                    .map(|(feature, match_expressions)| MatchFeature {
                        feature,
                        match_expressions,
                    })
                    .collect(),
            }
        })
        .collect();
    let operator_managed = s.accelerators.as_ref().is_some_and(|a| {
        a.operator
            .as_ref()
            .is_some_and(|o| o.manages.contains(&OperatorComponent::NodeFeatureDiscovery))
    });
    let version = n
        .version
        .as_ref()
        .map(|v| v.as_str().trim_start_matches('v').to_string());
    Nfd {
        image_tag: version.as_ref().map(|v| format!("v{v}")),
        version,
        sources: &n.sources,
        operator_managed,
        labels,
    }
}
