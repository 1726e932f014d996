//! A host wrapper that fails reads of chosen paths with a chosen error, to reproduce what
//! real kernels do and a file tree cannot (EINVAL on `speed` of a down NIC).

use nodeimg::verify::host::http::{HttpClient, HttpGet, HttpResponse};
use nodeimg::verify::host::{CommandOutput, HostOp, VendorCommand};
use nodeimg::verify::{Host, HostError, HostErrorKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct FaultHost<H> {
    pub inner: H,
    pub read_faults: BTreeMap<PathBuf, HostErrorKind>,
}

impl<H: Host> FaultHost<H> {
    pub fn new(inner: H) -> Self {
        FaultHost {
            inner,
            read_faults: BTreeMap::new(),
        }
    }

    pub fn fail_read(mut self, path: &str, kind: HostErrorKind) -> Self {
        self.read_faults.insert(PathBuf::from(path), kind);
        self
    }
}

impl<H: Host> Host for FaultHost<H> {
    fn read(&self, path: &Path) -> Result<Vec<u8>, HostError> {
        match self.read_faults.get(path) {
            Some(kind) => Err(HostError::new(
                HostOp::Read,
                path.display().to_string(),
                kind.clone(),
            )),
            None => self.inner.read(path),
        }
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>, HostError> {
        self.inner.list_dir(path)
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError> {
        self.inner.read_link(path)
    }

    fn canonicalize(&self, path: &Path) -> Result<PathBuf, HostError> {
        self.inner.canonicalize(path)
    }

    fn run(&self, command: &VendorCommand, timeout: Duration) -> Result<CommandOutput, HostError> {
        self.inner.run(command, timeout)
    }

    fn read_kernel_log(&self) -> Result<String, HostError> {
        self.inner.read_kernel_log()
    }

    fn get(&self, client: &mut HttpClient, request: &HttpGet) -> Result<HttpResponse, HostError> {
        self.inner.get(client, request)
    }
}
