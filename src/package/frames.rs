//! The zstd layer blob as independent frames, each holding a fixed-size
//! chunk of the tar stream ([`CHUNK`]), compressed on every core.
//!
//! One pass, on threads joined by bounded queues:
//!
//! ```text
//! tar writer (caller's thread) ─chunk─▶ workers: zstd -3 frame or raw frame ─▶ writer: sha256, file
//!   reads files straight into the chunk,                                      in chunk order,
//!   sha256 of the tar (diff_id) and of                                        writeback started as it goes
//!   each file (where asked) in one pass
//! ```
//!
//! A frame depends on its chunk alone, and chunk boundaries on the tar
//! stream alone, so the blob is the same bytes for any number of workers,
//! on any machine (with the same zstd; see `compress`). A chunk that is
//! already compressed data (`incompressible`) is stored in a raw frame
//! instead of going through a level-3 search it would not survive.
//!
//! Memory is bounded whatever the files: [`slots`] chunk buffers (input and
//! output) circulate between the stages, and the tar writer waits for a
//! free one. Written blob data is handed to the kernel's writeback while
//! later chunks compress (`sync_file_range`), so the final fsync has
//! little left to wait for.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use sha2::{Digest as _, Sha256};

use super::compress::ZSTD_LEVEL;
use super::digest::Digest;
use super::error::PackageError;
use super::incompressible::incompressible;
use super::raw_frame;
use super::sha256_pair::{self, Sha256 as StreamSha256};
use super::tar_stream::TarOut;

/// Bytes of tar stream per frame. Smaller frames spread over more cores
/// and lose more history at their starts (level 3 looks back 2 MiB): on
/// the benchmark overlays 4 MiB frames come out 0.4 % larger than one
/// stream, 2 MiB frames 0.9 %, 8 MiB frames 0.2 %. Changing it changes
/// every layer digest.
pub const CHUNK: usize = 4 << 20;
/// At most this many workers compress at once (each holds a zstd context
/// and keeps two chunks in flight).
pub const MAX_WORKERS: usize = 8;
/// Written bytes between two writeback requests.
const WRITEBACK_STEP: u64 = 16 << 20;

/// The written blob: digests and sizes of the tar and of the blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    pub diff_id: Digest,
    pub tar_size: u64,
    pub digest: Digest,
    pub size: u64,
    /// Frames stored raw (already-compressed data), of all frames.
    pub raw_frames: u64,
    pub frames: u64,
}

/// A chunk on its way through the stages.
struct Slot {
    input: Box<[u8]>,
    used: usize,
    output: Vec<u8>,
    raw: bool,
}

impl Slot {
    fn new() -> Self {
        let bound = zstd::zstd_safe::compress_bound(CHUNK).max(raw_frame::bound(CHUNK));
        Self {
            input: vec![0u8; CHUNK].into_boxed_slice(),
            used: 0,
            output: Vec::with_capacity(bound),
            raw: false,
        }
    }
}

/// How many chunk buffers circulate for `workers` workers.
pub fn slots(workers: usize) -> usize {
    workers.clamp(1, MAX_WORKERS) + 2
}

/// Writes the tar stream `produce` makes into `file` as zstd frames, with
/// `workers` workers (the bytes do not depend on it); `path` names the
/// file in errors.
pub fn pack(
    workers: u32,
    file: &mut File,
    path: &Path,
    produce: impl FnOnce(&mut Chunker) -> Result<(), PackageError>,
) -> Result<Packed, PackageError> {
    let workers = usize::try_from(workers).unwrap_or(1).clamp(1, MAX_WORKERS);
    let (free_tx, free_rx) = sync_channel::<Slot>(slots(workers));
    let (work_tx, work_rx) = sync_channel::<(u64, Slot)>(slots(workers));
    let (done_tx, done_rx) = sync_channel::<io::Result<(u64, Slot)>>(slots(workers));
    let work_rx = Arc::new(Mutex::new(work_rx));
    for _ in 0..slots(workers) {
        // The channel holds exactly this many, so this never blocks.
        let _ = free_tx.send(Slot::new());
    }
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let work_rx = Arc::clone(&work_rx);
            let done_tx = done_tx.clone();
            scope.spawn(move || compress_chunks(&work_rx, &done_tx));
        }
        drop(done_tx);
        // The workers hold the queue's only ends: once they have all
        // stopped, the tar writer's next send fails instead of waiting.
        drop(work_rx);
        let writer = scope.spawn(move || write_frames(done_rx, free_tx, file));
        let mut chunker = Chunker {
            free: free_rx,
            next: Some(work_tx),
            current: None,
            seq: 0,
            tar: StreamSha256::new(),
        };
        let produced = produce(&mut chunker)
            .and_then(|()| chunker.dispatch().map_err(|e| PackageError::io(path)(e)));
        let (diff_id, tar_size) = chunker.finish();
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the blob writer panicked")));
        // The writer's error explains a producer that found the pipeline
        // closed; otherwise the producer's own error is the cause.
        let written = match (produced, written) {
            (_, Err(e)) => return Err(PackageError::io(path)(e)),
            (Err(e), Ok(_)) => return Err(e),
            (Ok(()), Ok(w)) => w,
        };
        Ok(Packed {
            diff_id,
            tar_size,
            digest: written.digest,
            size: written.size,
            raw_frames: written.raw_frames,
            frames: written.frames,
        })
    })
}

/// The tar writer's end of the pipeline: fills chunks, hashing the tar
/// stream (the diff_id) as it goes, and hands each chunk, once complete,
/// to the workers.
pub struct Chunker {
    free: Receiver<Slot>,
    next: Option<SyncSender<(u64, Slot)>>,
    current: Option<Slot>,
    seq: u64,
    tar: StreamSha256,
}

fn closed() -> io::Error {
    io::Error::other("the layer pipeline stopped")
}

impl Chunker {
    /// The chunk being filled, with room in it.
    fn current(&mut self) -> io::Result<&mut Slot> {
        if self.current.as_ref().is_some_and(|s| s.used == CHUNK) {
            self.dispatch()?;
        }
        if self.current.is_none() {
            let mut slot = self.free.recv().map_err(|_| closed())?;
            slot.used = 0;
            self.current = Some(slot);
        }
        self.current.as_mut().ok_or_else(closed)
    }

    /// Sends the chunk being filled (if any) to the workers.
    fn dispatch(&mut self) -> io::Result<()> {
        let Some(slot) = self.current.take() else {
            return Ok(());
        };
        if slot.used == 0 {
            self.current = Some(slot);
            return Ok(());
        }
        let next = self.next.as_ref().ok_or_else(closed)?;
        next.send((self.seq, slot)).map_err(|_| closed())?;
        self.seq += 1;
        Ok(())
    }

    /// Ends the stream (the workers stop once their queue is empty);
    /// returns the digest and size of the whole tar.
    fn finish(self) -> (Digest, u64) {
        let size = self.tar.len();
        (Digest::from_bytes(self.tar.finalize()), size)
    }
}

impl TarOut for Chunker {
    fn put(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let slot = self.current()?;
            let n = bytes.len().min(CHUNK - slot.used);
            slot.input[slot.used..slot.used + n].copy_from_slice(&bytes[..n]);
            slot.used += n;
            self.tar.update(&bytes[..n]);
            bytes = &bytes[n..];
        }
        Ok(())
    }

    fn room(&mut self) -> io::Result<&mut [u8]> {
        let slot = self.current()?;
        Ok(&mut slot.input[slot.used..])
    }

    fn filled(&mut self, n: usize, file: Option<&mut StreamSha256>) -> io::Result<()> {
        if let Some(slot) = self.current.as_mut() {
            let end = (slot.used + n).min(CHUNK);
            let bytes = &slot.input[slot.used..end];
            match file {
                Some(f) => sha256_pair::update_both(&mut self.tar, f, bytes),
                None => self.tar.update(bytes),
            }
            slot.used = end;
        }
        Ok(())
    }
}

/// A worker: compresses chunks until the queue closes.
fn compress_chunks(
    work: &Mutex<Receiver<(u64, Slot)>>,
    done: &SyncSender<io::Result<(u64, Slot)>>,
) {
    let mut zstd = match frame_compressor() {
        Ok(c) => c,
        Err(e) => {
            let _ = done.send(Err(e));
            return;
        }
    };
    loop {
        let next = match work.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((seq, mut slot)) = next else {
            return;
        };
        let result = compress_slot(&mut zstd, &mut slot).map(|()| (seq, slot));
        let failed = result.is_err();
        if done.send(result).is_err() || failed {
            return;
        }
    }
}

/// The zstd context every compressed frame is made with: level 3, the
/// content size in the header, a checksum at the end, single-threaded
/// (the frames themselves are the parallelism).
pub fn frame_compressor() -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
    c.include_checksum(true)?;
    c.include_contentsize(true)?;
    Ok(c)
}

/// One chunk into one frame.
fn compress_slot(zstd: &mut zstd::bulk::Compressor<'static>, slot: &mut Slot) -> io::Result<()> {
    let input = &slot.input[..slot.used];
    slot.output.clear();
    slot.raw = incompressible(input);
    if slot.raw {
        raw_frame::write(input, &mut slot.output);
    } else {
        zstd.compress_to_buffer(input, &mut slot.output)?;
    }
    Ok(())
}

struct Written {
    digest: Digest,
    size: u64,
    frames: u64,
    raw_frames: u64,
}

/// The writer: frames in chunk order into the file, hashed on the way.
fn write_frames(
    done: Receiver<io::Result<(u64, Slot)>>,
    free: SyncSender<Slot>,
    file: &mut File,
) -> io::Result<Written> {
    let mut pending = BTreeMap::new();
    let mut next = 0u64;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut raw_frames = 0;
    let mut synced = 0u64;
    for result in done {
        let (seq, slot) = result?;
        pending.insert(seq, slot);
        while let Some(slot) = pending.remove(&next) {
            hasher.update(&slot.output);
            file.write_all(&slot.output)?;
            size += slot.output.len() as u64;
            raw_frames += u64::from(slot.raw);
            next += 1;
            if size - synced >= WRITEBACK_STEP {
                start_writeback(file, synced, size - synced);
                synced = size;
            }
            // The tar writer may have finished and stopped taking slots.
            let _ = free.send(slot);
        }
    }
    if !pending.is_empty() {
        return Err(io::Error::other(
            "a layer chunk was lost between the stages",
        ));
    }
    Ok(Written {
        digest: Digest::from_sha256(hasher),
        size,
        frames: next,
        raw_frames,
    })
}

/// Asks the kernel to start writing `len` bytes at `offset` to disk now,
/// without waiting, so the fsync that ends the blob finds little left.
/// Only a hint: a failure here surfaces at that fsync, if at all.
fn start_writeback(file: &File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
            return;
        };
        // SAFETY: a valid open descriptor and plain integers; the call
        // reads no memory of ours.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half text, half noise, in pieces of different sizes, over several chunks.
    fn stream() -> Vec<u8> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut out = Vec::new();
        let mut i = 0usize;
        while out.len() < 3 * CHUNK + 12345 {
            let len = 100_000 + (i * 7919) % 900_000;
            if i.is_multiple_of(2) {
                out.extend((0..len).map(|j| b"kubelet containerd nvidia\n"[j % 26]));
            } else {
                out.extend((0..len).map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 32) as u8
                }));
            }
            i += 1;
        }
        out
    }

    fn pack_with(workers: u32, data: &[u8]) -> (Packed, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blob");
        let mut file = File::create(&path).unwrap();
        let packed = pack(workers, &mut file, &path, |c| {
            // Uneven pieces, and some read through `room`.
            for (k, piece) in data.chunks(777_777).enumerate() {
                if k % 2 == 0 {
                    c.put(piece).map_err(PackageError::io(&path))?;
                } else {
                    let mut rest = piece;
                    while !rest.is_empty() {
                        let room = c.room().map_err(PackageError::io(&path))?;
                        let n = room.len().min(rest.len());
                        room[..n].copy_from_slice(&rest[..n]);
                        c.filled(n, None).map_err(PackageError::io(&path))?;
                        rest = &rest[n..];
                    }
                }
            }
            Ok(())
        })
        .unwrap();
        drop(file);
        (packed, std::fs::read(&path).unwrap())
    }

    #[test]
    fn same_bytes_for_any_worker_count_and_both_digests_right() {
        let data = stream();
        let (one, blob) = pack_with(1, &data);
        assert_eq!(one.diff_id, Digest::of(&data));
        assert_eq!(one.tar_size, data.len() as u64);
        assert_eq!(one.digest, Digest::of(&blob));
        assert_eq!(one.size, blob.len() as u64);
        assert_eq!(one.frames, data.len().div_ceil(CHUNK) as u64);
        assert_eq!(zstd::decode_all(blob.as_slice()).unwrap(), data);
        for workers in [2, 3, 8, 64] {
            let (p, b) = pack_with(workers, &data);
            assert_eq!((&p, &b), (&one, &blob), "{workers} workers");
        }
    }

    #[test]
    fn noise_is_stored_and_text_compressed() {
        let mut x: u64 = 1;
        let noise: Vec<u8> = (0..2 * CHUNK)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect();
        let text: Vec<u8> = (0..CHUNK).map(|j| b"etc/containerd\n"[j % 15]).collect();
        let data = [noise.as_slice(), text.as_slice()].concat();
        let (p, blob) = pack_with(2, &data);
        assert_eq!((p.frames, p.raw_frames), (3, 2));
        assert!(blob.len() < 2 * CHUNK + CHUNK / 100, "{}", blob.len());
        assert_eq!(zstd::decode_all(blob.as_slice()).unwrap(), data);
    }

    #[test]
    fn a_failing_producer_stops_the_pipeline_with_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blob");
        let mut file = File::create(&path).unwrap();
        let err = pack(2, &mut file, &path, |c| {
            c.put(&vec![7u8; 3 * CHUNK])
                .map_err(PackageError::io(&path))?;
            Err(PackageError::Invalid {
                what: "x".into(),
                message: "the file shrank".into(),
            })
        })
        .unwrap_err();
        assert!(err.to_string().contains("shrank"), "{err}");
    }
}
