//! JSON: the [`Report`] as it is, pretty-printed, with `schema`
//! `nodeimg.dev/verify-report/v1`. Top-level keys: `schema`, `nodeimg_version`,
//! `blueprint` (`name`, `version`, `id`, `file`), `hostname`, `phase`, `check_selection` (the `--checks` patterns),
//! `started_at`, `started_at_unix`, `duration_ms`, `outcome` (`pass`, `fail`,
//! `overridden`), `break_glass` (only when overriding), `counts` and `results` (one object
//! per check and subject: `id`, `subject`, `summary`, `severity`, `verdict`, `expected`,
//! `observed`, `evidence`, `fault`, `action`, `stage`).

use super::Report;

pub fn render(report: &Report) -> String {
    let mut text = serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot render the report: {e}\"}}"));
    text.push('\n');
    text
}
