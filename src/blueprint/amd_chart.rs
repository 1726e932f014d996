//! What each AMD GPU Operator chart release has (`amd-chart.csv` beside this file, with its
//! source): the first release with each DeviceConfig field or chart feature nodeimg renders.
//! `validate` refuses a blueprint that needs a field its pinned chart lacks, and the
//! renderer writes a field only where the pinned chart's CRD keeps it (the API server
//! prunes an unknown field of a structural CRD without a word).
//!
//! The features are a closed set nodeimg renders ([`Feature`]); a test keeps the table
//! and the set in step, so a row cannot be missing or left over.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use strum::VariantArray;

use super::value::Version;
use crate::fault::table::{self, Meta, TableError};

const TABLE: &str = include_str!("amd-chart.csv");
const COLUMNS: [&str; 3] = ["feature", "since", "reference"];

/// A chart feature nodeimg renders only where the pinned release has it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Feature {
    /// DeviceConfig `spec.testRunner`.
    TestRunner,
    /// The chart renders `deviceConfig.spec` into its default DeviceConfig.
    DeviceconfigValues,
    /// DeviceConfig `spec.driver.tolerations` (the KMM build and driver-load pods).
    DriverTolerations,
    /// DeviceConfig `spec.driver.upgradePolicy`: how the operator rolls a driver change.
    DriverUpgradePolicy,
    /// DeviceConfig `spec.driver.upgradePolicy.nodeDrainPolicy.gracePeriodSeconds`.
    DriverDrainGracePeriod,
}

/// One feature's row: the first release with it, and where that is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    pub version: Version,
    pub reference: String,
}

#[derive(Debug, Clone)]
pub struct AmdChart {
    pub meta: Meta,
    rows: BTreeMap<Feature, Since>,
}

/// The built-in table, parsed once.
pub fn table() -> &'static AmdChart {
    static T: OnceLock<AmdChart> = OnceLock::new();
    T.get_or_init(|| parse(TABLE).expect("the built-in AMD chart table parses (tested)"))
}

pub fn parse(text: &str) -> Result<AmdChart, TableError> {
    let (meta, raw) = table::parse("amd-chart.csv", text, &COLUMNS)?;
    let mut rows = BTreeMap::new();
    for r in raw {
        let feature: Feature = r.parsed(
            &meta,
            0,
            "feature",
            &format!("one of {}", names().join(", ")),
        )?;
        let version: Version = r.parsed(&meta, 1, "since", "a release (v1.4.0)")?;
        let since = Since {
            version,
            reference: r.field(2).to_owned(),
        };
        if rows.insert(feature, since).is_some() {
            return Err(r.error(&meta, format!("{feature} is listed twice")));
        }
    }
    if let Some(f) = Feature::VARIANTS.iter().find(|f| !rows.contains_key(f)) {
        return Err(TableError {
            table: meta.name.to_owned(),
            line: text.lines().count(),
            message: format!("no row for {f}"),
        });
    }
    Ok(AmdChart { meta, rows })
}

fn names() -> Vec<&'static str> {
    Feature::VARIANTS.iter().map(|&f| f.into()).collect()
}

impl AmdChart {
    /// The first release with `feature`.
    pub fn since(&self, feature: Feature) -> &Since {
        &self.rows[&feature]
    }

    /// Whether chart release `chart` has `feature`.
    pub fn has(&self, chart: &Version, feature: Feature) -> bool {
        chart.numbers() >= self.since(feature).version.numbers()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn the_built_in_table_parses_and_gates_by_release() {
        let t = parse(TABLE).unwrap();
        assert!(t.meta.source.contains("ROCm/gpu-operator"));
        assert!(!t.has(&v("v1.2.0"), Feature::DriverTolerations));
        assert!(!t.has(&v("v1.3.0"), Feature::DriverTolerations));
        assert!(t.has(&v("v1.3.1"), Feature::DriverTolerations));
        assert!(t.has(&v("v1.4.0"), Feature::DriverTolerations));
        assert!(t.has(&v("v1.5.1"), Feature::DriverTolerations));
        assert!(t.has(&v("v1.2.0"), Feature::TestRunner));
        assert!(!t.has(&v("v1.1.0"), Feature::TestRunner));
        assert_eq!(
            t.since(Feature::DeviceconfigValues).version.to_string(),
            "v1.3.0"
        );
        assert!(!t.has(&v("v1.1.0"), Feature::DriverUpgradePolicy));
        assert!(t.has(&v("v1.2.0"), Feature::DriverUpgradePolicy));
        assert!(!t.has(&v("v1.2.1"), Feature::DriverDrainGracePeriod));
        assert!(t.has(&v("v1.2.2"), Feature::DriverDrainGracePeriod));
        assert!(t.has(&v("v1.5.1"), Feature::DriverDrainGracePeriod));
    }

    #[test]
    fn a_bad_row_is_named_by_its_line() {
        let head = "# source: s\n# version: v\n# read: r\nfeature,since,reference\n";
        let e = parse(&format!("{head}driver-tolerations,soon,x\n")).unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(e.to_string().contains("soon"), "{e}");
        let e = parse(&format!("{head}driver-tolerance,v1.4.0,x\n")).unwrap_err();
        assert!(e.to_string().contains("driver-tolerance"), "{e}");
        let e = parse(&format!(
            "{head}test-runner,v1.2.0,x\ndeviceconfig-values,v1.4.0,x\n"
        ))
        .unwrap_err();
        assert!(
            e.to_string().contains("no row for driver-tolerations"),
            "{e}"
        );
    }
}
