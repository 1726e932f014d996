//! The capture archive: a zstd-compressed tar with `manifest.json`, `journal.json` and the
//! content itself, laid out for a person too (`tar --zstd -xf capture.tar.zst`):
//!
//! - `files/<machine path>`: each file read (`files/proc/cmdline`, `files/sys/...`);
//! - `commands/<NN>-<program>.stdout|.stderr`: each command's output;
//! - `kernel/kmsg`: the kernel log;
//! - `journal.json`: every host answer, error included, pointing at those entries.
//!
//! Entries have fixed mode and time, so the same recording makes the same archive.

use super::manifest::{FORMAT, Manifest};
use crate::verify::host::{Content, HostError, NotCaptured, RecordedOutput, Recording};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;

/// Why an archive could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what}: {message}")]
    Invalid { what: String, message: String },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ArchiveError {
    let what = what.into();
    move |source| ArchiveError::Io { what, source }
}

fn invalid(what: &str, message: impl Into<String>) -> ArchiveError {
    ArchiveError::Invalid {
        what: what.to_owned(),
        message: message.into(),
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredCommand {
    #[serde(flatten)]
    output: RecordedOutput,
    stdout: String,
    stderr: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Journal {
    reads: BTreeMap<String, Result<String, HostError>>,
    dirs: BTreeMap<String, Result<Vec<String>, HostError>>,
    links: BTreeMap<String, Result<String, HostError>>,
    resolved: BTreeMap<String, Result<String, HostError>>,
    commands: BTreeMap<String, Result<StoredCommand, HostError>>,
    kernel_log: Option<Result<String, HostError>>,
    not_captured: Vec<NotCaptured>,
}

/// Packs a recording and its manifest into `.tar.zst` bytes.
pub fn pack(recording: &Recording, manifest: &Manifest) -> Result<Vec<u8>, ArchiveError> {
    let mut entries: Vec<(String, Content)> = Vec::new();
    let mut journal = Journal {
        dirs: recording.dirs.clone(),
        links: recording.links.clone(),
        resolved: recording.resolved.clone(),
        not_captured: recording.not_captured.clone(),
        ..Journal::default()
    };
    for (path, result) in &recording.reads {
        let stored = result.as_ref().map(|bytes| {
            let name = format!("files/{}", path.trim_start_matches('/'));
            entries.push((name.clone(), bytes.clone()));
            name
        });
        journal
            .reads
            .insert(path.clone(), stored.map_err(Clone::clone));
    }
    for (index, (command, result)) in recording.commands.iter().enumerate() {
        let program = command
            .split_whitespace()
            .next()
            .unwrap_or("command")
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
        let stored = result.as_ref().map(|output| {
            let base = format!("commands/{index:02}-{program}");
            let stdout = format!("{base}.stdout");
            let stderr = format!("{base}.stderr");
            entries.push((stdout.clone(), output.stdout.clone()));
            entries.push((stderr.clone(), output.stderr.clone()));
            StoredCommand {
                output: output.clone(),
                stdout,
                stderr,
            }
        });
        journal
            .commands
            .insert(command.clone(), stored.map_err(Clone::clone));
    }
    journal.kernel_log = recording.kernel_log.as_ref().map(|result| {
        result
            .as_ref()
            .map(|text| {
                entries.push(("kernel/kmsg".to_owned(), Content::from(text.as_bytes())));
                "kernel/kmsg".to_owned()
            })
            .map_err(Clone::clone)
    });
    let manifest_json =
        serde_json::to_vec_pretty(manifest).map_err(|e| invalid("manifest.json", e.to_string()))?;
    let journal_json =
        serde_json::to_vec_pretty(&journal).map_err(|e| invalid("journal.json", e.to_string()))?;

    let encoder = zstd::Encoder::new(Vec::new(), 9).map_err(io("start zstd"))?;
    let mut tar = tar::Builder::new(encoder);
    let mut append = |name: &str, bytes: &[u8]| -> Result<(), ArchiveError> {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, name, bytes)
            .map_err(io(format!("archive entry {name}")))
    };
    append("manifest.json", &manifest_json)?;
    append("journal.json", &journal_json)?;
    for (name, bytes) in &entries {
        append(name, bytes)?;
    }
    let encoder = tar.into_inner().map_err(io("finish tar"))?;
    encoder.finish().map_err(io("finish zstd"))
}

/// The four bytes every zstd frame starts with (RFC 8878, section 3.1.1).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Largest `manifest.json` read back; a real one is a few KiB.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;
/// Largest `journal.json` read back; a real one is well under a MiB.
const MAX_JOURNAL_BYTES: u64 = 64 * 1024 * 1024;
/// Largest content member replay reads, whatever the manifest says: one file, one
/// command's output or the kernel log (the live kernel log's own limit).
pub const MAX_ITEM_BYTES: u64 = crate::verify::host::KERNEL_LOG_LIMIT;
/// Most content replay reads in all, whatever the manifest says; `capture` keeps no more.
pub const MAX_CONTENT_BYTES: u64 = 1024 * 1024 * 1024;
/// Longest member name (a GNU long-name record); paths are at most `PATH_MAX` on Linux.
const MAX_NAME_BYTES: u64 = 4096;
/// The whole decompressed stream: content, the two JSON members, and tar headers.
const MAX_STREAM_BYTES: u64 =
    MAX_CONTENT_BYTES + MAX_JOURNAL_BYTES + MAX_MANIFEST_BYTES + 64 * 1024 * 1024;

/// What replay allows the members still to come, tightened once the manifest and the
/// journal have been read.
struct Budget {
    item: u64,
    content: u64,
    content_seen: u64,
    /// The member names the journal points at, once it has been read.
    named: Option<HashSet<String>>,
}

impl Budget {
    /// Checks a member from its header alone, before any of its content is expanded.
    fn admit(&mut self, name: &str, size: u64) -> Result<(), ArchiveError> {
        let content = !matches!(name, "manifest.json" | "journal.json");
        let limit = match name {
            "manifest.json" => MAX_MANIFEST_BYTES,
            "journal.json" => MAX_JOURNAL_BYTES,
            _ => self.item,
        };
        if size > limit {
            return Err(invalid(
                name,
                format!("{size} bytes; this capture member may be at most {limit} bytes"),
            ));
        }
        if !content {
            return Ok(());
        }
        if let Some(named) = &self.named
            && !named.contains(name)
        {
            return Err(invalid(
                name,
                "journal.json does not name this member; refusing to read it",
            ));
        }
        self.content_seen = self.content_seen.saturating_add(size);
        if self.content_seen > self.content {
            return Err(invalid(
                name,
                format!(
                    "{size} bytes, past the capture's content limit ({} bytes in all)",
                    self.content
                ),
            ));
        }
        Ok(())
    }
}

fn read_manifest(data: &[u8]) -> Result<Manifest, ArchiveError> {
    let manifest: Manifest =
        serde_json::from_slice(data).map_err(|e| invalid("manifest.json", e.to_string()))?;
    if manifest.format != FORMAT {
        return Err(invalid(
            "manifest.json",
            format!(
                "format {:?}; this nodeimg reads {FORMAT:?}",
                manifest.format
            ),
        ));
    }
    Ok(manifest)
}

impl Journal {
    /// Every archive member the journal points at.
    fn member_names(&self) -> HashSet<String> {
        let mut names: HashSet<String> = self.reads.values().flatten().cloned().collect();
        for stored in self.commands.values().flatten() {
            names.insert(stored.stdout.clone());
            names.insert(stored.stderr.clone());
        }
        if let Some(Ok(name)) = &self.kernel_log {
            names.insert(name.clone());
        }
        names
    }
}

/// Reads `.tar.zst` bytes back into the manifest and the recording.
///
/// Nothing in an archive is trusted. It must be zstd holding a tar of regular files with
/// unique names. Each member is judged by its header before any of its content is
/// expanded: one member at most [`MAX_ITEM_BYTES`] (or the manifest's smaller per-item
/// limit), all of them at most [`MAX_CONTENT_BYTES`] (or the manifest's smaller total),
/// and, once `journal.json` has been read (`nodeimg capture` writes it second), only the
/// members it names. The content the journal points at is shared, not copied, and
/// counted each time it is named, so a journal that names one member many times cannot
/// make replay hold or parse more than [`MAX_CONTENT_BYTES`].
pub fn unpack(bytes: &[u8]) -> Result<(Manifest, Recording), ArchiveError> {
    if !bytes.starts_with(&ZSTD_MAGIC) {
        return Err(invalid(
            "capture",
            "not a nodeimg capture: it is not zstd-compressed (a capture is the `.tar.zst` \
             archive `nodeimg capture -o FILE` writes)",
        ));
    }
    let decoder = zstd::Decoder::new(bytes).map_err(io("open zstd stream"))?;
    let mut tar = tar::Archive::new(decoder.take(MAX_STREAM_BYTES));
    let mut contents: HashMap<String, Content> = HashMap::new();
    let not_tar = |e: std::io::Error| {
        invalid(
            "capture",
            format!("not a nodeimg capture: the zstd stream does not hold a tar archive ({e})"),
        )
    };
    let mut budget = Budget {
        item: MAX_ITEM_BYTES,
        content: MAX_CONTENT_BYTES,
        content_seen: 0,
        named: None,
    };
    let mut manifest: Option<Manifest> = None;
    let mut journal: Option<Journal> = None;
    // Raw entries: the tar crate would read a GNU long-name record whole, whatever its
    // size; here it is bounded like everything else.
    let mut long_name: Option<String> = None;
    let mut seen: HashSet<String> = HashSet::new();
    for entry in tar.entries().map_err(not_tar)?.raw(true) {
        let mut entry = entry.map_err(not_tar)?;
        let kind = entry.header().entry_type();
        let size = entry.header().entry_size().map_err(not_tar)?;
        if kind.is_gnu_longname() {
            if long_name.is_some() || size > MAX_NAME_BYTES {
                return Err(invalid(
                    "capture",
                    format!("a member name record of {size} bytes (or two for one member)"),
                ));
            }
            let mut name = Vec::new();
            (&mut entry)
                .take(size)
                .read_to_end(&mut name)
                .map_err(not_tar)?;
            while name.last() == Some(&0) {
                name.pop();
            }
            long_name = Some(String::from_utf8_lossy(&name).into_owned());
            continue;
        }
        let name = match long_name.take() {
            Some(name) => name,
            None => String::from_utf8_lossy(&entry.path_bytes()).into_owned(),
        };
        if !kind.is_file() {
            return Err(invalid(
                &name,
                format!("a tar {kind:?} entry; a capture holds only regular files"),
            ));
        }
        if !seen.insert(name.clone()) {
            return Err(invalid(
                &name,
                "appears twice in the archive; which one is meant is ambiguous",
            ));
        }
        budget.admit(&name, size)?;
        let mut data = Vec::with_capacity(usize::try_from(size.min(1 << 20)).unwrap_or(0));
        (&mut entry)
            .take(size)
            .read_to_end(&mut data)
            .map_err(io(format!("tar entry {name}")))?;
        if (data.len() as u64) < size {
            return Err(invalid(&name, "the archive ends inside this member"));
        }
        match name.as_str() {
            "manifest.json" => {
                let read = read_manifest(&data)?;
                // The limits the capture was made with bound what it can hold.
                budget.item = budget.item.min(read.max_item_bytes);
                budget.content = budget.content.min(read.max_total_bytes);
                if budget.content_seen > budget.content {
                    return Err(invalid(
                        "manifest.json",
                        format!(
                            "the archive holds more content than the capture's limit of {} bytes",
                            budget.content
                        ),
                    ));
                }
                manifest = Some(read);
            }
            "journal.json" => {
                let read: Journal = serde_json::from_slice(&data)
                    .map_err(|e| invalid("journal.json", e.to_string()))?;
                let named = read.member_names();
                for seen in contents.keys() {
                    if seen != "manifest.json" && !named.contains(seen.as_str()) {
                        return Err(invalid(
                            seen,
                            "journal.json does not name this member; refusing to read it",
                        ));
                    }
                }
                budget.named = Some(named);
                journal = Some(read);
            }
            _ => {
                contents.insert(name, Content::from(data));
            }
        }
    }
    let manifest =
        manifest.ok_or_else(|| invalid("capture", "no manifest.json: not a nodeimg capture"))?;
    let journal = journal.ok_or_else(|| invalid("capture", "no journal.json"))?;
    let mut named: u64 = 0;
    let mut take = |name: &str| -> Result<Content, ArchiveError> {
        let content = contents.get(name).cloned().ok_or_else(|| {
            invalid(
                "journal.json",
                format!("names {name}, which is not in the archive"),
            )
        })?;
        named = named.saturating_add(content.len() as u64);
        if named > MAX_CONTENT_BYTES {
            return Err(invalid(
                "journal.json",
                format!(
                    "names more than {MAX_CONTENT_BYTES} bytes of content in all \
                     (it names some members many times); refusing to replay it"
                ),
            ));
        }
        Ok(content)
    };
    let mut recording = Recording {
        dirs: journal.dirs,
        links: journal.links,
        resolved: journal.resolved,
        not_captured: journal.not_captured,
        ..Recording::default()
    };
    for (path, result) in journal.reads {
        let value = match result {
            Ok(name) => Ok(take(&name)?),
            Err(err) => Err(err),
        };
        recording.reads.insert(path, value);
    }
    for (command, result) in journal.commands {
        let value = match result {
            Ok(stored) => {
                let mut output = stored.output;
                output.stdout = take(&stored.stdout)?;
                output.stderr = take(&stored.stderr)?;
                Ok(output)
            }
            Err(err) => Err(err),
        };
        recording.commands.insert(command, value);
    }
    recording.kernel_log = match journal.kernel_log {
        None => None,
        Some(Ok(name)) => Some(Ok(String::from_utf8_lossy(&take(&name)?).into_owned())),
        Some(Err(err)) => Some(Err(err)),
    };
    Ok((manifest, recording))
}
