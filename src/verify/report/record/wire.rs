//! How a record's values go on the wire: a machine [`Fact`] is its value or
//! `{"unknown": "<reason>"}`, and a layer's section ([`Run`]) its content or
//! `{"not_run": "<reason>"}`; a section missing from a record read back is a layer not
//! run yet. Both have a JSON Schema, so the record's schema says so too.

use super::LATER;
use crate::verify::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Fact<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr<T> {
            Unknown { unknown: String },
            Known(T),
        }
        Ok(match Repr::deserialize(d)? {
            Repr::Unknown { unknown } => Fact::Unknown { reason: unknown },
            Repr::Known(v) => Fact::Known(v),
        })
    }
}

impl<T: JsonSchema> JsonSchema for Fact<T> {
    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("Fact_{}", T::schema_name()))
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let known = generator.subschema_for::<T>();
        schemars::json_schema!({
            "description": "A value read from the machine, or why it is unknown.",
            "anyOf": [
                known,
                {
                    "type": "object",
                    "properties": {"unknown": {"type": "string"}},
                    "required": ["unknown"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// A section filled from evidence, or the reason it was not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Run<T> {
    NotRun { not_run: String },
    Done(T),
}

impl<T> Run<T> {
    pub fn not_run(reason: impl Into<String>) -> Self {
        Run::NotRun {
            not_run: reason.into(),
        }
    }

    pub fn done(&self) -> Option<&T> {
        match self {
            Run::Done(v) => Some(v),
            Run::NotRun { .. } => None,
        }
    }
}

/// A section `verify` leaves to `accept`.
pub(super) fn later<T>() -> Run<T> {
    Run::not_run(LATER)
}

/// A section missing from a record read back is a layer not run yet.
impl<T> Default for Run<T> {
    fn default() -> Self {
        later()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_and_runs_round_trip() {
        let f: Fact<String> = serde_json::from_str(r#"{"unknown": "no BMC"}"#).unwrap();
        assert_eq!(f, Fact::unknown("no BMC"));
        let f: Fact<u32> = serde_json::from_str("400").unwrap();
        assert_eq!(f, Fact::Known(400));
        let r: Run<Vec<u32>> = serde_json::from_str(r#"{"not_run": "later"}"#).unwrap();
        assert_eq!(r, Run::not_run("later"));
        assert_eq!(serde_json::to_string(&Run::<u32>::Done(3)).unwrap(), "3");
    }
}
