//! Standard output whose reader went away (`nodeimg schema | head`) is not
//! an error: the rest of the output is dropped quietly, as `cat` and `git`
//! behave, instead of `error: … Broken pipe (os error 32)` and exit 2.

use std::io::{self, ErrorKind, Write};

/// A writer that swallows the writes after its reader closed the pipe.
pub struct ClosedPipeIsDone<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> ClosedPipeIsDone<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            closed: false,
        }
    }
}

impl<W: Write> Write for ClosedPipeIsDone<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Gone;
    impl Write for Gone {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(ErrorKind::BrokenPipe.into())
        }
    }

    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(ErrorKind::StorageFull.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_ends_quietly_and_other_errors_stay() {
        let mut w = ClosedPipeIsDone::new(Gone);
        assert!(w.write_all(b"schema").is_ok());
        assert!(w.flush().is_ok());
        assert!(ClosedPipeIsDone::new(Full).write_all(b"x").is_err());
    }
}
