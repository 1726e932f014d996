//! Terminal styling for text reports: colour only on a terminal, never when
//! NO_COLOR is set (unless forced with `--color always`).

use std::io::IsTerminal;

use crate::blueprint::diagnostic::{Diagnostic, Severity};
use crate::cli::ColorChoice;

#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    color: bool,
}

impl Style {
    pub fn detect(choice: ColorChoice, stream: &impl IsTerminal) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !no_color && stream.is_terminal(),
        };
        Self { color }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn error(&self, text: &str) -> String {
        self.paint("1;31", text)
    }

    pub fn warning(&self, text: &str) -> String {
        self.paint("1;33", text)
    }

    pub fn ok(&self, text: &str) -> String {
        self.paint("1;32", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    /// A blueprint diagnostic with its severity word coloured.
    pub fn diagnostic(&self, d: &Diagnostic) -> String {
        let mut text = String::new();
        let _ = d.write_styled(&mut text, |severity, word| match severity {
            Severity::Error => self.error(word),
            Severity::Warning => self.warning(word),
        });
        text
    }
}
