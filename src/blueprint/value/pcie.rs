//! PCIe link generation and width: the closed sets a GPU link can train to,
//! one source of truth for the schema, the documentation and the rules.
//!
//! Generations 1–6 are the released signalling rates (2.5 to 64 GT/s; Linux
//! `enum pci_bus_speed` stops at `PCIE_SPEED_64_0GT`). Widths are 1, 2, 4,
//! 8 and 16 lanes. The Link Capabilities encoding also names x12 and x32
//! (Linux `enum pcie_link_width` has `PCIE_LNK_X12` and `PCIE_LNK_X32`), but
//! no GPU endpoint is built with them, so a blueprint that expects one is
//! refused rather than checked against a link that can never exist.

use std::fmt;

macro_rules! lane_enum {
    (
        $(#[$doc:meta])* $name:ident, $what:literal, $desc:literal,
        [$($variant:ident = $n:literal),+ $(,)?]
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($variant = $n),+
        }

        impl $name {
            /// Every value, in order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The number as the PCIe specification and sysfs write it.
            pub fn get(self) -> u8 {
                self as u8
            }
        }

        impl TryFrom<u64> for $name {
            type Error = String;

            fn try_from(n: u64) -> Result<Self, String> {
                match n {
                    $($n => Ok($name::$variant),)+
                    _ => Err(format!(
                        concat!("{} is not a ", $what, " (one of {})"),
                        n,
                        [$($n.to_string()),+].join(", ")
                    )),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.get())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u8(self.get())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let n = u64::deserialize(d)?;
                $name::try_from(n).map_err(serde::de::Error::custom)
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "enum": [$($n),+],
                    "description": $desc,
                })
            }
        }
    };
}

lane_enum!(
    /// A PCIe generation (signalling rate).
    PcieGen,
    "PCIe generation",
    "PCIe generation: 1, 2, 3, 4, 5 or 6 (2.5, 5, 8, 16, 32, 64 GT/s).",
    [Gen1 = 1, Gen2 = 2, Gen3 = 3, Gen4 = 4, Gen5 = 5, Gen6 = 6]
);

lane_enum!(
    /// A PCIe link width in lanes.
    LinkWidth,
    "PCIe link width",
    "Lanes per link: 1, 2, 4, 8 or 16 (write 16, not x16).",
    [X1 = 1, X2 = 2, X4 = 4, X8 = 8, X16 = 16]
);

impl PcieGen {
    /// The signalling rate in GT/s, as sysfs `current_link_speed` prints it.
    pub fn gts(self) -> f64 {
        match self {
            PcieGen::Gen1 => 2.5,
            PcieGen::Gen2 => 5.0,
            PcieGen::Gen3 => 8.0,
            PcieGen::Gen4 => 16.0,
            PcieGen::Gen5 => 32.0,
            PcieGen::Gen6 => 64.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_sets() {
        assert_eq!(LinkWidth::try_from(16).unwrap(), LinkWidth::X16);
        for bad in [0, 3, 12, 32] {
            let e = LinkWidth::try_from(bad).unwrap_err();
            assert!(e.contains("one of 1, 2, 4, 8, 16"), "{e}");
        }
        assert_eq!(PcieGen::try_from(5).unwrap().get(), 5);
        assert!(PcieGen::try_from(7).is_err());
        assert!(PcieGen::Gen4 < PcieGen::Gen5);
        let w: LinkWidth = serde_json::from_str("8").unwrap();
        assert_eq!(serde_json::to_string(&w).unwrap(), "8");
        assert!(serde_json::from_str::<LinkWidth>("32").is_err());
    }

    #[test]
    fn the_schema_lists_what_the_parser_accepts() {
        let mut g = schemars::SchemaGenerator::default();
        let s = <LinkWidth as schemars::JsonSchema>::json_schema(&mut g);
        let listed: Vec<u64> = s.as_value()["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let parsed: Vec<u64> = (0..=64)
            .filter(|n| LinkWidth::try_from(*n).is_ok())
            .collect();
        assert_eq!(listed, parsed);
        let s = <PcieGen as schemars::JsonSchema>::json_schema(&mut g);
        assert_eq!(
            s.as_value()["enum"].as_array().unwrap().len(),
            PcieGen::ALL.len()
        );
    }
}
