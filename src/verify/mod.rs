//! `nodeimg verify`: check a real machine against its blueprint at first boot.
//!
//! This module holds the facts layer: [`host`] is the only way to the machine (files,
//! links, vendor commands with a timeout, kernel log), and [`facts`] turns what it returns
//! into typed values, each a [`Fact`] that is either known or unknown with a reason.
//!
//! ```no_run
//! use nodeimg::verify::{collect, CollectOptions, LiveHost};
//! let facts = collect(&LiveHost::new("/"), &CollectOptions::default());
//! println!("{}", serde_json::to_string_pretty(&facts).unwrap_or_default());
//! ```

pub mod break_glass;
pub mod capture;
pub mod checks;
pub mod fact;
pub mod facts;
pub mod history;
pub mod host;
pub mod last_good;
pub mod report;
pub mod settle;

pub use fact::Fact;
pub use facts::options::{CollectOptions, KernelLogSource, ToolOutput};
pub use facts::{Facts, collect};
pub use host::{Host, HostError, HostErrorKind, LiveHost, RecordingHost, SnapshotHost};
