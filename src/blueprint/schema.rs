//! The blueprint's JSON Schema, derived from the model types, and the
//! structural check that runs a parsed document against it.
//!
//! One schema serves two readers: editors (`nodeimg schema`, with every
//! field's documentation) and the loader, which reports every structural
//! problem at once — unknown fields with a "did you mean", wrong types,
//! missing fields, bad enum values and bad typed values — each at its line.

use std::sync::OnceLock;

use serde_json::Value;

use super::diagnostic::{Collector, suggest};
use super::model::RawBlueprint;
use super::value::{FORMATS, check_format};
use super::yaml_path::YamlPath;

/// The schema as published: documented, draft 2020-12.
pub fn document() -> Value {
    let schema = schemars::schema_for!(RawBlueprint);
    let mut v = schema.to_value();
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "$id".into(),
            Value::String("https://nodeimg.dev/schemas/v1alpha1/blueprint.json".into()),
        );
    }
    v
}

/// The schema the loader validates with: nullable wrappers removed (a null
/// is treated as an absent field before validation) and `oneOf` lists of
/// constants folded into `enum`, so that errors name the field at fault.
fn validation_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut v = document();
        simplify(&mut v);
        v
    })
}

/// Builds the validator now (milliseconds of work that a blueprint
/// check otherwise waits for), so a command can start it on a thread of
/// its own while it reads its other inputs.
pub fn prepare() {
    validator();
}

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let mut opts = jsonschema::options().should_validate_formats(true);
        for &(format, check) in FORMATS {
            opts = opts.with_format(format, move |s: &str| check(s).is_ok());
        }
        opts.build(validation_schema())
            .expect("the derived blueprint schema is a valid JSON Schema")
    })
}

fn simplify(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(branches)) = o.get(key) else {
                    continue;
                };
                let non_null: Vec<Value> = branches
                    .iter()
                    .filter(|b| b.get("type") != Some(&Value::String("null".into())))
                    .cloned()
                    .collect();
                // Documented variants come as `const` branches, undocumented
                // ones grouped in one `enum` branch: either way a list of names.
                let names = |b: &Value| -> Option<Vec<Value>> {
                    match (b.get("const"), b.get("enum")) {
                        (Some(c), _) => Some(vec![c.clone()]),
                        (None, Some(Value::Array(e))) => Some(e.clone()),
                        _ => None,
                    }
                };
                let folded: Option<Vec<Vec<Value>>> = non_null.iter().map(names).collect();
                if let Some(folded) = folded.filter(|f| !f.is_empty()) {
                    let values = folded.into_iter().flatten().collect();
                    o.remove(key);
                    o.insert("enum".into(), Value::Array(values));
                } else if non_null.len() == 1 && non_null.len() < branches.len() {
                    o.remove(key);
                    if let Value::Object(inner) = &non_null[0] {
                        for (k, val) in inner {
                            o.entry(k.clone()).or_insert(val.clone());
                        }
                    }
                }
            }
            if let Some(Value::Array(types)) = o.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let t = types[0].clone();
                    o.insert("type".into(), t);
                }
            }
            if let Some(Value::Array(e)) = o.get_mut("enum") {
                e.retain(|x| !x.is_null());
            }
            for val in o.values_mut() {
                simplify(val);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(simplify),
        _ => {}
    }
}

/// Removes null-valued mapping entries (`firmware:` with nothing after it
/// means "absent"), recursively.
pub fn drop_nulls(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.retain(|_, x| !x.is_null());
            o.values_mut().for_each(drop_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// Checks `doc` against the schema, adding one diagnostic per problem.
pub fn check(doc: &Value, out: &mut Collector<'_>) {
    let root = validation_schema();
    for err in validator().iter_errors(doc) {
        let path = pointer_to_path(err.instance_path().as_str());
        let instance = lookup(doc, &path);
        use jsonschema::error::ValidationErrorKind as K;
        match err.kind() {
            K::AdditionalProperties { unexpected } => {
                let known = properties_at(root, doc, &path);
                for name in unexpected {
                    let field = path.key(name.clone());
                    let d = out.error_at_key(
                        "unknown-field",
                        &field,
                        format!("unknown field `{name}`"),
                    );
                    match suggest(name, known.iter().map(String::as_str)) {
                        Some(s) => d.hint = Some(format!("did you mean `{s}`?")),
                        None if !known.is_empty() => {
                            d.hint = Some(format!("known fields here: {}", known.join(", ")))
                        }
                        None => {}
                    }
                }
            }
            K::Required { property } => {
                // At the key of the mapping that lacks it, not at its first child.
                let name = property.as_str().unwrap_or_default();
                let d = out.error_at_key(
                    "missing-field",
                    &path,
                    format!("missing required field `{name}`"),
                );
                if let Some(h) = required_hint(&path, name, instance) {
                    d.hint = Some(h);
                }
            }
            K::FalseSchema => {
                // A setting that a sibling (`mode`, say) rules out.
                let field = path.last_key().unwrap_or_default().to_string();
                let parent = path.parent().unwrap_or_default();
                let mode = lookup(doc, &parent)
                    .and_then(|p| p.get("mode"))
                    .and_then(Value::as_str);
                let message = match mode {
                    Some(m) => format!("`{field}` does not apply to mode `{m}`"),
                    None => format!("`{field}` does not apply here"),
                };
                out.error_at_key("invalid-field", &path, message);
            }
            K::Type { .. } => {
                // A number where a typed text value belongs: the value's own
                // parser explains best (`85` → "write it with `%`").
                let format = schema_at(root, doc, &path)
                    .and_then(|s| s.get("format"))
                    .and_then(Value::as_str);
                if let (Some(f), Some(Value::Number(n))) = (format, instance)
                    && let Some(Err(message)) = check_format(f, &n.to_string())
                {
                    out.error("invalid-value", &path, message);
                    continue;
                }
                let want = expected_type(root, doc, &path);
                let d = out.error(
                    "wrong-type",
                    &path,
                    format!("expected {want}, found {}", describe(instance)),
                );
                if let Some(h) = type_hint(&want, instance) {
                    d.hint = Some(h);
                }
            }
            K::Enum { options } => {
                let allowed: Vec<String> = options
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|o| o.as_str().map_or(o.to_string(), str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let shown = describe(instance);
                let d = out.error(
                    "invalid-value",
                    &path,
                    format!("{shown} is not one of: {}", allowed.join(", ")),
                );
                if let Some(h) = enum_hint(&path, instance, &allowed) {
                    d.hint = Some(h);
                }
            }
            K::Format { format } => {
                let in_key = err.schema_path().as_str().contains("/propertyNames");
                let text = match (in_key, instance) {
                    (true, _) => path.last_key().unwrap_or_default().to_string(),
                    (false, v) => v.and_then(Value::as_str).unwrap_or_default().to_string(),
                };
                let message = check_format(format, &text)
                    .and_then(Result::err)
                    .unwrap_or_else(|| format!("`{text}` is not a valid {format}"));
                if in_key {
                    out.error_at_key("invalid-key", &path, message);
                } else {
                    out.error("invalid-value", &path, message);
                }
            }
            K::PropertyNames { error } => {
                // A map key that is not allowed (eviction signals, label keys).
                let key = error
                    .instance()
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_default();
                let field = path.key(key.clone());
                let names = property_name_enum(root, doc, &path);
                let d = out.error_at_key(
                    "invalid-key",
                    &field,
                    match check_key_format(root, doc, &path, &key) {
                        Some(m) => m,
                        None if !names.is_empty() => {
                            format!("`{key}` is not one of: {}", names.join(", "))
                        }
                        None => format!("`{key}` is not allowed here"),
                    },
                );
                if let Some(s) = suggest(&key, names.iter().map(String::as_str)) {
                    d.hint = Some(format!("did you mean `{s}`?"));
                }
            }
            _ => {
                out.error("invalid-value", &path, err.to_string());
            }
        }
    }
}

/// Hints for values people write out of habit (`iommu: pt`, `width: x16`,
/// `linkLayer: roce`), then "did you mean".
fn enum_hint(path: &YamlPath, got: Option<&Value>, allowed: &[String]) -> Option<String> {
    let text = match got? {
        Value::String(s) => s.clone(),
        _ => return None,
    };
    let field = path.last_key().unwrap_or_default();
    let lower = text.to_ascii_lowercase();
    match (field, lower.as_str()) {
        ("iommu", "pt") => {
            return Some(
                "`iommu=pt` on the kernel command line is `passthrough` here (nodeimg writes iommu=pt for it)".into(),
            );
        }
        ("mode", "cdi") if path.to_string() == "kubernetes.deviceInjection.mode" => {
            return Some(
                "CDI is not an injection mode: the device plugin or DRA driver hands devices to containers, and CDI is configured under `runtime.cdi` (enabled, specDirs, generator); write `mode: device-plugin` or `mode: dra`".into(),
            );
        }
        ("linkLayer", "roce" | "rocev2" | "roce v2") => {
            return Some(
                "RoCE is RDMA over Ethernet: write `linkLayer: ethernet` and `rdma: true`".into(),
            );
        }
        _ => {}
    }
    // `x16`, `Gen5`, "16": the number alone.
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    if !digits.is_empty() && allowed.contains(&digits) {
        return Some(format!("write the number alone, unquoted: {digits}"));
    }
    suggest(&text, allowed.iter().map(String::as_str)).map(|s| format!("did you mean `{s}`?"))
}

/// Example values for required fields a first blueprint tends to lack.
fn required_hint(path: &YamlPath, name: &str, _at: Option<&Value>) -> Option<String> {
    let parent = path.to_string();
    Some(match (parent.as_str(), name) {
        ("accelerators", "driver") => {
            "e.g. driver: {version: \"570.124.06\", authority: preinstalled}".into()
        }
        ("accelerators", "pcie") => "e.g. pcie: {generation: 5, width: 16}".into(),
        ("runtime", "containerd") => "e.g. containerd: {version: 2.1.4}".into(),
        ("kubernetes", "capacity") => "e.g. capacity: {cpu: 128, memory: 1Ti}".into(),
        ("", "metadata") => "e.g. metadata: {name: gpu-node, version: \"2026.1.0\"}".into(),
        _ => return None,
    })
}

fn pointer_to_path(pointer: &str) -> YamlPath {
    let mut path = YamlPath::root();
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        path = match seg.parse::<usize>() {
            Ok(i) if !seg.is_empty() => path.index(i),
            _ => path.key(seg),
        };
    }
    path
}

fn lookup<'v>(doc: &'v Value, path: &YamlPath) -> Option<&'v Value> {
    use super::yaml_path::Segment;
    let mut cur = doc;
    for seg in path.segments() {
        cur = match seg {
            Segment::Key(k) => cur.get(k)?,
            Segment::Index(i) => cur.get(*i)?,
        };
    }
    Some(cur)
}

fn resolve<'s>(root: &'s Value, mut node: &'s Value) -> &'s Value {
    for _ in 0..16 {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let Some(target) = r.strip_prefix('#').and_then(|p| root.pointer(p)) else {
                    return node;
                };
                node = target;
            }
            None => return node,
        }
    }
    node
}

/// The schema node that describes the value at `path`.
fn schema_at<'s>(root: &'s Value, doc: &Value, path: &YamlPath) -> Option<&'s Value> {
    use super::yaml_path::Segment;
    let mut node = resolve(root, root);
    let mut cur = Some(doc);
    for seg in path.segments() {
        node = match seg {
            Segment::Key(k) => node
                .get("properties")
                .and_then(|p| p.get(k))
                .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))?,
            Segment::Index(_) => node.get("items")?,
        };
        node = resolve(root, node);
        cur = cur.and_then(|c| match seg {
            Segment::Key(k) => c.get(k),
            Segment::Index(i) => c.get(*i),
        });
    }
    Some(node)
}

fn properties_at(root: &Value, doc: &Value, path: &YamlPath) -> Vec<String> {
    schema_at(root, doc, path)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn property_name_enum(root: &Value, doc: &Value, path: &YamlPath) -> Vec<String> {
    schema_at(root, doc, path)
        .and_then(|s| s.get("propertyNames"))
        .map(|p| resolve(root, p))
        .and_then(|p| p.get("enum"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn check_key_format(root: &Value, doc: &Value, path: &YamlPath, key: &str) -> Option<String> {
    let names = schema_at(root, doc, path)?.get("propertyNames")?;
    let format = resolve(root, names).get("format")?.as_str()?;
    check_format(format, key)?.err()
}

fn expected_type(root: &Value, doc: &Value, path: &YamlPath) -> String {
    let Some(s) = schema_at(root, doc, path) else {
        return "another type".into();
    };
    let name = |t: &str| match t {
        "object" => "a mapping",
        "array" => "a list",
        "string" => "text",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "true or false",
        _ => "another type",
    };
    match s.get("type") {
        Some(Value::String(t)) => name(t).to_string(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(name)
            .collect::<Vec<_>>()
            .join(" or "),
        _ if s.get("enum").is_some() => "one of the allowed values".into(),
        _ => "another type".into(),
    }
}

fn describe(v: Option<&Value>) -> String {
    match v {
        None => "nothing".into(),
        Some(Value::Null) => "nothing".into(),
        Some(Value::Bool(b)) => format!("the boolean `{b}`"),
        Some(Value::Number(n)) => format!("the number `{n}`"),
        Some(Value::String(s)) => format!("the text `{s}`"),
        Some(Value::Array(_)) => "a list".into(),
        Some(Value::Object(_)) => "a mapping".into(),
    }
}

fn type_hint(want: &str, got: Option<&Value>) -> Option<String> {
    match got? {
        Value::Number(n) if want.contains("text") => Some(format!(
            "YAML read `{n}` as a number; quote it (\"{n}\") so that e.g. 1.30 is not read as 1.3"
        )),
        Value::String(s)
            if want.contains("true or false")
                && ["yes", "no", "on", "off"].contains(&s.to_lowercase().as_str()) =>
        {
            Some("YAML 1.2 reads yes/no/on/off as text; write true or false".into())
        }
        _ => None,
    }
}

/// The blueprint reference as Markdown, one table row per field, generated
/// from the same schema (the README embeds it; a test keeps it current).
pub fn reference_markdown() -> String {
    let root = document();
    let mut rows = Vec::new();
    walk_reference(&root, &root, "", &mut rows, 0);
    let mut out =
        String::from("| field | type | | default | description |\n|---|---|---|---|---|\n");
    for (path, ty, req, default, desc) in rows {
        out.push_str(&format!(
            "| `{path}` | {ty} | {req} | {default} | {desc} |\n"
        ));
    }
    out
}

fn walk_reference(
    root: &Value,
    node: &Value,
    prefix: &str,
    rows: &mut Vec<(String, String, String, String, String)>,
    depth: usize,
) {
    if depth > 12 {
        return;
    }
    let node = resolve(root, node);
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, raw) in props {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let field = resolve(root, raw);
        let desc = raw
            .get("description")
            .or_else(|| field.get("description"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .replace('\n', " ")
            .replace('|', "\\|");
        let req = if required.contains(&name.as_str()) {
            "required"
        } else {
            ""
        };
        let (ty, child, child_path) = describe_type(root, raw, &path);
        let default = raw
            .get("default")
            .or_else(|| field.get("default"))
            .map(show_default)
            .unwrap_or_default();
        rows.push((path.clone(), ty, req.to_string(), default, desc));
        if let Some(child) = child {
            walk_reference(root, child, &child_path, rows, depth + 1);
        }
    }
}

/// A default as the reference shows it: scalars and lists of scalars;
/// a mapping's defaults appear on its own fields instead.
fn show_default(v: &Value) -> String {
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(format!("`{s}`")),
        Value::Number(n) => Some(format!("`{n}`")),
        Value::Bool(b) => Some(format!("`{b}`")),
        _ => None,
    };
    match v {
        Value::Array(a) if a.is_empty() => String::new(),
        Value::Array(a) => a
            .iter()
            .map(scalar)
            .collect::<Option<Vec<_>>>()
            .map(|items| items.join(", "))
            .unwrap_or_default(),
        other => scalar(other).unwrap_or_default(),
    }
}

/// A short type name and, for nested objects, the schema to recurse into.
fn describe_type<'s>(
    root: &'s Value,
    raw: &'s Value,
    path: &str,
) -> (String, Option<&'s Value>, String) {
    let node = resolve(root, raw);
    let branches = node
        .get("oneOf")
        .or_else(|| node.get("anyOf"))
        .and_then(Value::as_array);
    if let Some(consts) = branches.filter(|b| {
        b.iter().all(|x| {
            x.get("const").is_some() || x.get("type") == Some(&Value::String("null".into()))
        })
    }) {
        let names: Vec<String> = consts
            .iter()
            .filter_map(|c| c.get("const"))
            .map(|c| format!("`{}`", c.as_str().unwrap_or_default()))
            .collect();
        return (names.join(" \\| "), None, String::new());
    }
    if let Some(b) = branches {
        // Option<T>: the non-null branch.
        if let Some(inner) = b
            .iter()
            .find(|x| x.get("type") != Some(&Value::String("null".into())))
        {
            return describe_type(root, inner, path);
        }
    }
    if let Some(e) = node.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = e
            .iter()
            .map(|v| match v {
                Value::String(s) => format!("`{s}`"),
                other => format!("`{other}`"),
            })
            .collect();
        return (names.join(" \\| "), None, String::new());
    }
    if let Some(f) = node.get("format").and_then(Value::as_str) {
        let with_integer = node
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|t| t.iter().any(|t| t == "integer"));
        if with_integer {
            return (format!("integer or {f}"), None, String::new());
        }
        return (f.to_string(), None, String::new());
    }
    let ty = match node.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "value".into(),
    };
    match ty.as_str() {
        "object" if node.get("properties").is_some() => {
            ("mapping".into(), Some(node), path.to_string())
        }
        "object" => {
            let inner = node.get("additionalProperties").filter(|v| v.is_object());
            let name = inner
                .map(|i| describe_type(root, i, path).0)
                .unwrap_or_else(|| "value".into());
            (
                "mapping of name → ".to_string() + &name,
                None,
                String::new(),
            )
        }
        "array" => {
            let Some(items) = node.get("items") else {
                return ("list".into(), None, String::new());
            };
            let (inner, child, _) = describe_type(root, items, &format!("{path}[]"));
            (format!("list of {inner}"), child, format!("{path}[]"))
        }
        other => (other.to_string(), None, String::new()),
    }
}
