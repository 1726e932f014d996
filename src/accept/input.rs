//! Reading the outputs `nodeimg accept` judges: files and folders given on the command
//! line, each recognised by its content ([`recognise`]) and parsed by its tool's parser.
//! Errors name the file and the line.
//!
//! Reading is bounded: regular files only (a FIFO would block forever), at most
//! [`MAX_FILE_BYTES`] per file and [`MAX_FILES`] files, UTF-8 text. Folders are walked
//! in name order without following links to folders; hidden entries (`.name`) are
//! skipped. A file whose format nodeimg does not read is an error, never silently
//! dropped.

use super::dcgm::{self, DcgmDiag};
use super::dcgm_exporter::{self, Scrape};
use super::fio::{self, FioRun};
use super::ibstat::{self, Ibstat};
use super::nccl::{self, NcclRun};
use super::nvbandwidth::{self, Nvbandwidth};
use super::p2p::{self, P2pTest};
use super::perftest::{self, PerftestRun};
use super::power::{self, Samples};
use super::probe::{self, Step};
use super::proftester::{self, FieldRun};
pub use super::recognise::{Format, recognise};
use super::topo::{self, Topology};
use crate::k8s::{self, Node, Pod, RuntimeClass};
use crate::line_error::LineError;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest tool output read (NCCL_DEBUG=INFO logs of many ranks are large).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Most files read from all arguments together.
pub const MAX_FILES: usize = 10_000;

/// A parsed output.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Nccl(Vec<NcclRun>),
    Dcgm(Vec<DcgmDiag>),
    Proftester(Vec<FieldRun>),
    Perftest(Vec<PerftestRun>),
    Nvbandwidth(Nvbandwidth),
    P2p(P2pTest),
    Probe(Vec<Step>),
    Nodes(Vec<Node>),
    Pods(Vec<Pod>),
    RuntimeClasses(Vec<RuntimeClass>),
    Ibstat(Ibstat),
    Topology(Topology),
    Fio(FioRun),
    /// Power samples: a sampler's CSV alone, or the section a Job printed after its
    /// workload's output (then a second input of the same file).
    Power(Samples),
    /// dcgm-exporter's metrics page: the pod each GPU is allocated to.
    Exporter(Scrape),
}

/// One input file and what it held.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    pub path: PathBuf,
    pub output: Output,
}

/// A problem with an input: the file, the line when known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
        } else {
            write!(f, "{}: {}", self.path.display(), self.message)
        }
    }
}

impl std::error::Error for InputError {}

impl InputError {
    fn at(path: &Path, e: LineError) -> Self {
        InputError {
            path: path.to_owned(),
            line: e.line,
            message: e.message,
        }
    }

    fn whole(path: &Path, message: impl Into<String>) -> Self {
        InputError {
            path: path.to_owned(),
            line: 0,
            message: message.into(),
        }
    }
}

/// Every file under `paths` (files as given, folders walked), in order.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| InputError::whole(path, e.to_string()))?;
        if meta.is_dir() {
            let walk = walkdir::WalkDir::new(path)
                .follow_links(false)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.')
                });
            for entry in walk {
                let entry = entry
                    .map_err(|e| InputError::whole(e.path().unwrap_or(path), e.to_string()))?;
                if entry.file_type().is_dir() {
                    continue;
                }
                out.push(entry.into_path());
                if out.len() > MAX_FILES {
                    return Err(InputError::whole(
                        path,
                        format!("more than {MAX_FILES} files"),
                    ));
                }
            }
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// Reads one file: a regular file, within the size limit, UTF-8.
pub fn read(path: &Path) -> Result<String, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::whole(path, e.to_string()))?;
    if !meta.is_file() {
        return Err(InputError::whole(path, "not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(InputError::whole(
            path,
            format!(
                "{} bytes: larger than the {MAX_FILE_BYTES}-byte limit for one output",
                meta.len()
            ),
        ));
    }
    // Opened without blocking and checked again: a FIFO swapped in after the check above
    // is refused, not waited on.
    let file = crate::input::open(path, 0).map_err(|e| InputError::whole(path, e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::whole(path, e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(InputError::whole(
            path,
            format!("grew past the {MAX_FILE_BYTES}-byte limit while read"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1;
        InputError {
            path: path.to_owned(),
            line,
            message: format!("not UTF-8 text (byte {at})"),
        }
    })
}

/// Parses `text` as `format`; `name` hints the collective of an nccl-tests output.
pub fn parse(format: Format, text: &str, name: &str) -> Result<Output, LineError> {
    Ok(match format {
        Format::DcgmJson => Output::Dcgm(vec![dcgm::json::parse(text)?]),
        Format::DcgmText => Output::Dcgm(dcgm::text::parse(text)?),
        Format::NvbandwidthJson => Output::Nvbandwidth(nvbandwidth::json::parse(text)?),
        Format::NvbandwidthText => Output::Nvbandwidth(nvbandwidth::text::parse(text)?),
        Format::KubernetesNodes => Output::Nodes(k8s::node::parse(text)?),
        Format::KubernetesPods => Output::Pods(k8s::pod::parse(text)?),
        Format::KubernetesRuntimeClasses => {
            Output::RuntimeClasses(k8s::runtime_class::parse(text)?)
        }
        Format::Probe => Output::Probe(probe::parse(text)?),
        Format::Nccl => Output::Nccl(nccl::parse(text, Some(name))?),
        Format::Proftester => Output::Proftester(proftester::parse(text)?),
        Format::Perftest => Output::Perftest(perftest::parse(text)?),
        Format::P2p => Output::P2p(p2p::parse(text)?),
        Format::Ibstat => Output::Ibstat(ibstat::parse(text)?),
        Format::Topology => Output::Topology(topo::parse(text)?),
        Format::Fio => Output::Fio(fio::parse(text)?),
        Format::PowerSamples => Output::Power(power::parse(text)?),
        Format::DcgmExporter => Output::Exporter(dcgm_exporter::parse(text)?),
    })
}

/// Reads, recognises and parses one file.
pub fn load(path: &Path) -> Result<Input, InputError> {
    let text = read(path)?;
    load_text(path, &text)
}

fn load_text(path: &Path, text: &str) -> Result<Input, InputError> {
    let format = recognise(text).ok_or_else(|| {
        InputError::whole(
            path,
            "not an output nodeimg accept reads (nccl-tests/rccl-tests, dcgmi diag, dcgmproftester, perftest, nvbandwidth, p2pBandwidthLatencyTest, ibstat/ibstatus, nvidia-smi topo -m, nvidia-smi --query-gpu power samples, fio JSON, probe JSON lines, Kubernetes Node, Pod or RuntimeClass JSON)",
        )
    })?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let output = parse(format, text, &name).map_err(|e| {
        let mut err = InputError::at(path, e);
        err.message = format!("{} output: {}", format.describe(), err.message);
        err
    })?;
    Ok(Input {
        path: path.to_owned(),
        output,
    })
}

/// One file: its output and, where a Job printed power samples after its workload's
/// output ([`power::SECTION`]), those samples as further inputs of the same file (one per
/// section: a multi-node run's log has one per node), with the load they were taken under.
pub fn load_with_samples(path: &Path) -> Result<Vec<Input>, InputError> {
    let text = read(path)?;
    let main = load_text(path, &text)?;
    let load = match &main.output {
        Output::Power(_) => None,
        // The framework Job's matmul load; the multi-node PyTorch and JAX runs are not.
        Output::Probe(steps)
            if steps
                .iter()
                .any(|s| s.suite == probe::Suite::Framework && s.name == "load") =>
        {
            Some(power::Load::Gemm)
        }
        Output::Probe(_) => Some(power::Load::Framework),
        Output::Nccl(_) => Some(power::Load::Nccl),
        _ => Some(power::Load::Unknown),
    };
    let Some(load) = load else {
        return Ok(vec![main]);
    };
    let samples = power::section(&text, load).map_err(|e| {
        let mut err = InputError::at(path, e);
        err.message = format!("power samples: {}", err.message);
        err
    })?;
    let mut out = vec![main];
    out.extend(samples.into_iter().map(|samples| Input {
        path: path.to_owned(),
        output: Output::Power(samples),
    }));
    Ok(out)
}

/// Loads every file under `paths`.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Input>, InputError> {
    let mut out = Vec::new();
    for p in files(paths)? {
        out.extend(load_with_samples(&p)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_inputs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let unknown = dir.path().join("notes.txt");
        std::fs::write(&unknown, "just notes").unwrap();
        let err = load(&unknown).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("{}: not an output", unknown.display()))
        );
        let binary = dir.path().join("b.log");
        std::fs::write(&binary, b"ok\n\xff\xfe").unwrap();
        assert_eq!(load(&binary).unwrap_err().line, 2);
        let hidden = dir.path().join(".keep");
        std::fs::write(&hidden, "x").unwrap();
        let listed = files(&[dir.path().to_owned()]).unwrap();
        assert_eq!(listed.len(), 2, "hidden files are skipped: {listed:?}");
    }

    #[cfg(unix)]
    #[test]
    fn fifos_are_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read(&fifo).unwrap_err().message.contains("regular file"));
    }
}
