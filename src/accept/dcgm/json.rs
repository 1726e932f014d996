//! `dcgmi diag -j` output.
//!
//! DCGM 3.x: `{"DCGM GPU Diagnostic": {"test_categories": [{"category", "tests": [{"name",
//! "results": [{"gpu_ids": "0", "status", "info", "warnings"}]}]}], "version", ...}}`.
//! DCGM 4.x: `{"DCGM Diagnostic": {"test_categories": [... results: [{"entity_group":
//! "GPU", "entity_id": 0, "status", "warnings": [{"warning"}]}]]}, "entity_groups": [...],
//! "metadata": {"Driver Version Detected", "version"}}`. dcgmi may print a banner line
//! (`Successfully ran diagnostic for group.`) before the document; it is skipped.
//!
//! Fields this version does not use are ignored, so a DCGM release that adds some still
//! parses; the fields a verdict needs (category, name, results, status) are required.

use super::{DcgmDiag, DcgmFormat, DcgmResult, DcgmTest, GpuScope, Status, gpu_list};
use crate::line_error::LineError;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Document {
    #[serde(rename = "DCGM GPU Diagnostic")]
    v3: Option<Body>,
    #[serde(rename = "DCGM Diagnostic")]
    v4: Option<Body>,
    metadata: Option<BTreeMap<String, serde_json::Value>>,
    entity_groups: Option<Vec<EntityGroup>>,
}

#[derive(Deserialize)]
struct Body {
    test_categories: Vec<Category>,
    #[serde(flatten)]
    rest: BTreeMap<String, serde_json::Value>,
}

#[derive(Deserialize)]
struct Category {
    category: String,
    tests: Vec<Test>,
}

#[derive(Deserialize)]
struct Test {
    name: String,
    results: Vec<RawResult>,
}

#[derive(Deserialize)]
struct RawResult {
    status: String,
    /// 3.x: `"0"` or `"0,1"`.
    gpu_ids: Option<String>,
    /// 4.x: the entity.
    entity_group: Option<String>,
    entity_id: Option<u32>,
    info: Option<Info>,
    warnings: Option<Vec<Warning>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Info {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Warning {
    Text(String),
    Object { warning: String },
}

#[derive(Deserialize)]
struct EntityGroup {
    entity_group: Option<String>,
    entities: Option<Vec<Entity>>,
}

#[derive(Deserialize)]
struct Entity {
    device_id: Option<String>,
}

/// Parses a `dcgmi diag -j` document (with or without the banner before it).
pub fn parse(text: &str) -> Result<DcgmDiag, LineError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let start = text
        .find('{')
        .ok_or_else(|| LineError::new(1, "no JSON document (no `{`)"))?;
    let skipped_lines = text[..start].matches('\n').count();
    let document: Document = serde_json::from_str(&text[start..]).map_err(|e| {
        LineError::new(
            e.line() + skipped_lines,
            format!("not a dcgmi diag JSON document: {e}"),
        )
    })?;
    let (body, version_key) = match (document.v3, document.v4) {
        (Some(b), None) => (b, "3"),
        (None, Some(b)) => (b, "4"),
        (Some(_), Some(_)) => {
            return Err(LineError::new(
                1 + skipped_lines,
                "both `DCGM GPU Diagnostic` and `DCGM Diagnostic` roots",
            ));
        }
        (None, None) => {
            return Err(LineError::new(
                1 + skipped_lines,
                "neither a `DCGM GPU Diagnostic` (DCGM 3) nor a `DCGM Diagnostic` (DCGM 4) root",
            ));
        }
    };
    let text_value = |map: &BTreeMap<String, serde_json::Value>, keys: &[&str]| {
        keys.iter()
            .find_map(|k| map.get(*k).and_then(|v| v.as_str()).map(str::to_owned))
    };
    let metadata = document.metadata.unwrap_or_default();
    let version =
        text_value(&metadata, &["version"]).or_else(|| text_value(&body.rest, &["version"]));
    let driver =
        text_value(&metadata, &["Driver Version Detected", "driver_version"]).or_else(|| {
            text_value(
                &body.rest,
                &["Driver Version Detected", "driver_version_detected"],
            )
        });
    let mut gpu_device_ids: Vec<String> = document
        .entity_groups
        .unwrap_or_default()
        .into_iter()
        .filter(|g| g.entity_group.as_deref().is_none_or(|e| e == "GPU"))
        .flat_map(|g| g.entities.unwrap_or_default())
        .filter_map(|e| e.device_id)
        .collect();
    if gpu_device_ids.is_empty()
        && let Some(ids) = body.rest.get("GPU Device IDs").and_then(|v| v.as_array())
    {
        gpu_device_ids = ids
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
    }
    // Line numbers of each test name, for evidence.
    let line_of = |name: &str, from: usize| -> usize {
        let needle = format!("\"{name}\"");
        text[start..]
            .lines()
            .enumerate()
            .skip(from)
            .find(|(_, l)| l.contains(&needle))
            .map_or(from + 1, |(i, _)| i + 1)
    };
    let mut tests = Vec::new();
    let mut cursor = 0;
    for category in body.test_categories {
        for test in category.tests {
            let line = line_of(&test.name, cursor);
            cursor = line;
            let results = test
                .results
                .into_iter()
                .map(|r| result(r, version_key))
                .collect::<Result<Vec<_>, String>>()
                .map_err(|e| {
                    LineError::new(line + skipped_lines, format!("test `{}`: {e}", test.name))
                })?;
            tests.push(DcgmTest {
                category: category.category.clone(),
                name: test.name,
                results,
                line: line + skipped_lines,
            });
        }
    }
    if tests.is_empty() {
        return Err(LineError::new(
            1 + skipped_lines,
            "the diagnostic lists no tests",
        ));
    }
    Ok(DcgmDiag {
        format: DcgmFormat::Json,
        version,
        driver,
        gpu_device_ids,
        tests,
    })
}

fn result(raw: RawResult, _release: &str) -> Result<DcgmResult, String> {
    let gpus = match (&raw.gpu_ids, &raw.entity_group, raw.entity_id) {
        (Some(ids), _, _) => GpuScope::Gpus(
            gpu_list(ids).ok_or_else(|| format!("gpu_ids `{ids}` is not a list of GPU ids"))?,
        ),
        (None, Some(group), Some(id)) if group == "GPU" => GpuScope::Gpus(vec![id]),
        (None, Some(group), Some(_)) => {
            return Err(format!("entity group `{group}` is not a GPU"));
        }
        _ => GpuScope::All,
    };
    let mut detail = match raw.info {
        Some(Info::One(s)) => vec![s],
        Some(Info::Many(v)) => v,
        None => Vec::new(),
    };
    detail.extend(
        raw.warnings
            .unwrap_or_default()
            .into_iter()
            .map(|w| match w {
                Warning::Text(s) | Warning::Object { warning: s } => s,
            }),
    );
    Ok(DcgmResult {
        gpus,
        status: Status::parse(&raw.status),
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shaped like the DCGM 4.2.3 document a GB10 printed (published in a public test
    /// suite), reduced by this project to one test.
    const V4: &str = r#"Successfully ran diagnostic for group.
{
  "DCGM Diagnostic" : {
    "test_categories" : [
      { "category" : "Hardware",
        "tests" : [
          { "name" : "memory",
            "results" : [
              { "entity_group" : "GPU", "entity_group_id" : 1, "entity_id" : 0, "status" : "Pass" },
              { "entity_group" : "GPU", "entity_group_id" : 1, "entity_id" : 1, "status" : "Fail",
                "warnings" : [ { "error_category" : 8, "error_id" : 29, "error_severity" : 5,
                                 "warning" : "Uncorrectable ECC error on GPU 1" } ] }
            ],
            "test_summary" : { "status" : "Fail" } } ] } ] },
  "entity_groups" : [ { "entity_group" : "GPU", "entity_group_id" : 1,
                        "entities" : [ { "device_id" : "2330", "entity_id" : 0 }, { "device_id" : "2330", "entity_id" : 1 } ] } ],
  "metadata" : { "Driver Version Detected" : "580.82.09", "version" : "4.2.3" }
}
"#;

    #[test]
    fn dcgm4_entities_and_metadata() {
        let diag = parse(V4).unwrap();
        assert_eq!(diag.version.as_deref(), Some("4.2.3"));
        assert_eq!(diag.driver.as_deref(), Some("580.82.09"));
        assert_eq!(diag.gpu_device_ids, ["2330", "2330"]);
        let memory = &diag.tests[0];
        assert_eq!(memory.status(), Status::Fail);
        assert_eq!(memory.failed_gpus(), [1]);
        assert_eq!(memory.line, 7);
        assert!(memory.results[1].detail[0].contains("ECC"));
    }

    #[test]
    fn broken_documents_are_located() {
        let cut = &V4[..V4.find("\"metadata\"").unwrap()];
        let err = parse(cut).unwrap_err();
        assert!(err.line >= 17, "{err}");
        let err = parse("{\"tests\": []}").unwrap_err();
        assert!(err.message.contains("root"), "{err}");
        let bad = V4.replace(
            "\"entity_id\" : 1, \"status\"",
            "\"entity_id\" : \"one\", \"status\"",
        );
        assert!(parse(&bad).is_err());
    }
}
