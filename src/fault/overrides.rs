//! A site's overrides of single codes of the vendor catalogs: "Xid 94 is a GPU reset here",
//! "treat SXid 20001 as a service call", or an action for a code a newer driver added.
//!
//! They are entries of the compatibility matrix (`faults:` in a `--matrix` file), so they
//! travel like the rest of it: validated at build time, carried in the image beside the
//! lock (`blueprint.matrix.json`, covered by the blueprint id) and applied by verify on the
//! node. `explain` lists the ones in use and the acceptance record names every finding an
//! override decided.

use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Action, FaultClass, Judgement, Severity, amd_ras};

/// The vendor catalogs nodeimg judges by.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Catalog {
    /// NVIDIA's Xid catalog (code: the Xid number).
    NvidiaXid,
    /// The NVSwitch SXids of the Fabric Manager User Guide (code: the SXid number).
    NvidiaSxid,
    /// AMD's RAS signals (code: the signal of `src/fault/amd-ras.csv`, e.g. `ue`).
    AmdRas,
}

impl Catalog {
    /// The class a finding of the catalog has when nothing else says.
    pub fn default_class(self) -> FaultClass {
        match self {
            Catalog::NvidiaSxid => FaultClass::Link,
            Catalog::NvidiaXid | Catalog::AmdRas => FaultClass::Device,
        }
    }
}

/// One site override: the catalog's code, what to do instead, and why (`source`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Override {
    pub catalog: Catalog,
    pub code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<FaultClass>,
    pub action: Action,
    /// Without it, the action's own severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    pub source: String,
}

impl Override {
    /// Checks the code against its catalog's form: a number for Xids and SXids (any
    /// number: a site may name a code a newer driver added), a known signal for AMD.
    pub fn check(&self) -> Result<(), String> {
        match self.catalog {
            Catalog::NvidiaXid | Catalog::NvidiaSxid => {
                self.code.parse::<u32>().map(drop).map_err(|_| {
                    format!("`{}` is not an {} code (a number)", self.code, self.catalog)
                })
            }
            Catalog::AmdRas => amd_ras::Signal::from_str(&self.code)
                .map(drop)
                .map_err(|_| {
                    format!(
                        "`{}` is not an AMD RAS signal ({})",
                        self.code,
                        amd_ras::Signal::names().join(", ")
                    )
                }),
        }
    }

    /// The finding's judgement under this override: its action, its severity or the
    /// action's, its class or the catalog's (or `base`'s, when the catalog knows the code).
    pub fn judgement(&self, base: Option<Judgement>) -> Judgement {
        let fault = self
            .class
            .or(base.map(|b| b.fault))
            .unwrap_or_else(|| self.catalog.default_class());
        Judgement {
            fault,
            action: self.action,
            severity: self.severity.unwrap_or_else(|| self.action.severity()),
        }
    }

    /// `nvidia-xid 94`, as messages name the overridden code.
    pub fn key(&self) -> String {
        format!("{} {}", self.catalog, self.code)
    }
}

/// The overrides in use, found by catalog and code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    items: Vec<Override>,
}

impl Overrides {
    /// Later entries for the same code replace earlier ones.
    pub fn new(items: impl IntoIterator<Item = Override>) -> Self {
        let mut out = Overrides::default();
        for o in items {
            out.items
                .retain(|have| !(have.catalog == o.catalog && have.code == o.code));
            out.items.push(o);
        }
        out
    }

    pub fn find(&self, catalog: Catalog, code: &str) -> Option<&Override> {
        self.items
            .iter()
            .find(|o| o.catalog == catalog && o.code == code)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Override> {
        self.items.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xid(code: &str, action: Action) -> Override {
        Override {
            catalog: Catalog::NvidiaXid,
            code: code.to_owned(),
            class: None,
            action,
            severity: None,
            source: "site".to_owned(),
        }
    }

    #[test]
    fn codes_are_checked_and_the_last_entry_wins() {
        assert!(xid("94", Action::ResetGpu).check().is_ok());
        assert!(xid("x94", Action::ResetGpu).check().is_err());
        let amd = Override {
            catalog: Catalog::AmdRas,
            ..xid("ue", Action::Service)
        };
        assert!(amd.check().is_ok());
        let o = Overrides::new([xid("94", Action::ResetGpu), xid("94", Action::Service)]);
        assert_eq!(
            o.find(Catalog::NvidiaXid, "94").map(|o| o.action),
            Some(Action::Service)
        );
        let j = xid("999", Action::RebootNode).judgement(None);
        assert_eq!(
            (j.fault, j.severity),
            (FaultClass::Device, Severity::Critical)
        );
    }
}
