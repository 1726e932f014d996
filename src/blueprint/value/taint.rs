//! Node taints written as kubectl writes them: `key[=value]:Effect`.

use std::fmt;
use std::str::FromStr;

use super::text_value;
use super::{LabelKey, LabelValue};

/// Kubernetes spells effects in PascalCase, as the variants are named.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Taint {
    pub key: LabelKey,
    pub value: Option<LabelValue>,
    pub effect: TaintEffect,
}

impl FromStr for Taint {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (kv, effect) = s
            .rsplit_once(':')
            .ok_or_else(|| format!("taint `{s}` needs an effect: `key=value:NoSchedule`"))?;
        let effect = match effect {
            "NoSchedule" => TaintEffect::NoSchedule,
            "PreferNoSchedule" => TaintEffect::PreferNoSchedule,
            "NoExecute" => TaintEffect::NoExecute,
            other => {
                return Err(format!(
                    "taint `{s}` has effect `{other}`; use NoSchedule, PreferNoSchedule or NoExecute"
                ));
            }
        };
        let (key, value) = match kv.split_once('=') {
            Some((k, v)) => (k, Some(v.parse().map_err(|e| format!("taint `{s}`: {e}"))?)),
            None => (kv, None),
        };
        let key = key.parse().map_err(|e| format!("taint `{s}`: {e}"))?;
        Ok(Self { key, value, effect })
    }
}

impl fmt::Display for Taint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.key)?;
        if let Some(v) = &self.value {
            write!(f, "={v}")?;
        }
        write!(f, ":{}", self.effect)
    }
}

text_value!(
    Taint,
    "taint",
    "A taint: `key[=value]:Effect`, Effect one of NoSchedule, PreferNoSchedule, NoExecute.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints() {
        let t: Taint = "nvidia.com/gpu=present:NoSchedule".parse().unwrap();
        assert_eq!(t.key.as_str(), "nvidia.com/gpu");
        assert_eq!(t.effect, TaintEffect::NoSchedule);
        assert_eq!(t.to_string(), "nvidia.com/gpu=present:NoSchedule");
        assert!(
            "x:NoSchedul"
                .parse::<Taint>()
                .unwrap_err()
                .contains("effect `NoSchedul`")
        );
        assert!(
            "x=y"
                .parse::<Taint>()
                .unwrap_err()
                .contains("needs an effect")
        );
        let bare: Taint = "dedicated:NoExecute".parse().unwrap();
        assert_eq!(bare.value, None);
    }
}
