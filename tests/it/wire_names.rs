//! Enum wire names have one source: strum derives the text (`Display`, `as_str`) with
//! the same spelling serde uses. This checks, for every variant of every such enum,
//! that the two agree, and that no enum with a strum name is missing from the list.

use nodeimg::blueprint::model::{Distro, EvictionSignal, NicRole, Vendor};
use nodeimg::blueprint::value::TaintEffect;
use nodeimg::fault::{Action, FaultClass, Severity};
use nodeimg::package::Compression;
use nodeimg::render::plan::Impact;
use nodeimg::verify::checks::{Phase, Stage, Verdict};
use nodeimg::verify::report::{Format, Outcome};
use serde::Serialize;
use std::fmt::{Debug, Display};
use strum::VariantArray;

/// Checks one enum; returns its name for the completeness check.
fn agree<T>(serde: bool) -> &'static str
where
    T: VariantArray + Serialize + Display + Debug + Copy,
    &'static str: From<T>,
{
    for &v in T::VARIANTS {
        let name: &'static str = v.into();
        assert_eq!(
            v.to_string(),
            name,
            "{v:?}: Display and the static name differ"
        );
        if serde {
            assert_eq!(
                serde_json::to_value(v).unwrap(),
                serde_json::Value::String(name.to_owned()),
                "{v:?}: serde and strum spell it differently"
            );
        }
    }
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

/// `Format` has no serde form; its name is clap's value name, checked the same way.
fn format_names_are_clap_values() -> &'static str {
    use clap::ValueEnum;
    for &f in Format::VARIANTS {
        let value = f.to_possible_value().unwrap();
        assert_eq!(value.get_name(), f.name(), "{f:?}");
    }
    agree_without_serde::<Format>()
}

fn agree_without_serde<T>() -> &'static str
where
    T: VariantArray + Display + Debug + Copy,
    &'static str: From<T>,
{
    for &v in T::VARIANTS {
        let name: &'static str = v.into();
        assert_eq!(v.to_string(), name, "{v:?}");
    }
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

#[test]
fn serde_and_display_spell_every_variant_the_same() {
    let mut checked = vec![
        agree::<Vendor>(true),
        agree::<Distro>(true),
        agree::<EvictionSignal>(true),
        agree::<NicRole>(true),
        agree::<TaintEffect>(true),
        agree::<Compression>(true),
        agree::<Impact>(true),
        agree::<Severity>(true),
        agree::<Verdict>(true),
        agree::<FaultClass>(true),
        agree::<Action>(true),
        agree::<nodeimg::fault::overrides::Catalog>(true),
        agree::<nodeimg::fault::amd_ras::Signal>(true),
        agree::<nodeimg::fault::sxid::Kind>(true),
        agree::<Stage>(true),
        agree::<Phase>(true),
        agree::<Outcome>(true),
        format_names_are_clap_values(),
        // The AMD chart table's keys (no serde form: read from amd-chart.csv only).
        agree_without_serde::<nodeimg::blueprint::amd_chart::Feature>(),
    ];
    checked.sort_unstable();

    // Every enum that derives a strum name is listed above.
    let mut declared = Vec::new();
    for entry in walkdir::WalkDir::new(crate::support::root().join("src")) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let mut strum = false;
        // A derive list may span lines (rustfmt merges and wraps derives).
        let mut in_derive = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with("#[derive(") || in_derive {
                strum |= line.contains("strum::IntoStaticStr");
                in_derive = !line.ends_with(")]");
            } else if let Some(rest) = line.strip_prefix("pub enum ") {
                if strum {
                    declared.push(rest.split([' ', '<', '{']).next().unwrap().to_owned());
                }
                strum = false;
            } else if [
                "struct ",
                "pub struct ",
                "enum ",
                "impl",
                "fn ",
                "pub fn ",
                "}",
            ]
            .iter()
            .any(|item| line.starts_with(item))
            {
                strum = false;
            }
        }
    }
    declared.sort_unstable();
    assert_eq!(
        declared, checked,
        "an enum with a strum name is not checked here"
    );
}

#[test]
fn wire_names_read_as_before() {
    // The spellings reports, rendered files and users rely on.
    assert_eq!(
        EvictionSignal::NodefsInodesFree.as_str(),
        "nodefs.inodesFree"
    );
    assert_eq!(FaultClass::OsMemoryDisk.to_string(), "os-memory-disk");
    assert_eq!(Action::Service.to_string(), "service");
    assert_eq!(Action::CheckCoolingPower.to_string(), "check-cooling-power");
    assert_eq!(
        TaintEffect::PreferNoSchedule.to_string(),
        "PreferNoSchedule"
    );
    assert_eq!(Distro::Almalinux.as_str(), "almalinux");
    assert_eq!(Format::Prometheus.name(), "prometheus");
}
