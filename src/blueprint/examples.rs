//! The example blueprints, embedded at compile time with the files they
//! refer to (CA certificates, overlay trees), so that `nodeimg init` writes
//! a starter that validates without a checkout of this repository.

include!(concat!(env!("OUT_DIR"), "/examples.rs"));

/// One embedded example: its name (`h100-sxm-ubuntu`) and text.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    pub name: &'static str,
    pub text: &'static str,
}

/// Every example, by name.
pub fn all() -> impl Iterator<Item = Example> {
    EXAMPLES.iter().map(|&(name, text)| Example { name, text })
}

/// The example called `name`.
pub fn find(name: &str) -> Option<Example> {
    all().find(|e| e.name == name)
}

impl Example {
    /// The opening comment, which says what node it describes, as one line.
    pub fn summary(&self) -> String {
        self.text
            .lines()
            .map_while(|l| l.strip_prefix('#'))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The files the example refers to by a relative path (`certs/…`, a
    /// whole `overlays/NAME` tree), as (relative path, content). A file
    /// goes with it when the text names it, or names the overlay folder
    /// that holds it.
    pub fn referenced(&self) -> Vec<(&'static str, &'static [u8])> {
        REFERENCED
            .iter()
            .filter(|(path, _)| {
                let mut parts = path.split('/');
                let tree = match (parts.next(), parts.next()) {
                    (Some("overlays"), Some(name)) => format!("overlays/{name}"),
                    _ => path.to_string(),
                };
                self.text
                    .split(|c: char| c.is_whitespace() || c == ',' || c == '}')
                    .any(|word| word == tree)
            })
            .copied()
            .collect()
    }
}
