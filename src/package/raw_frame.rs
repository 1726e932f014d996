//! A zstd frame that stores its content as it is: raw blocks (RFC 8878,
//! 3.1.1.2, `Raw_Block`), with the content size in the header and the
//! frame's XXH64 checksum at the end, as the frames zstd compresses carry.
//!
//! A layer chunk that is already compressed (see `incompressible`) would
//! come out of a level-3 search about as large as it went in, zstd storing
//! most of its blocks raw anyway; writing the raw frame directly costs a
//! copy and a checksum instead. Any zstd decoder reads it (tested with the
//! `zstd` program and libzstd).

use super::xxh64::xxh64;

/// The zstd frame magic number (little-endian on the wire).
const MAGIC: u32 = 0xFD2F_B528;
/// The largest block a frame may hold (`Block_Maximum_Size`).
const BLOCK_MAX: usize = 128 << 10;

/// Appends the frame holding `content` to `out`.
pub fn write(content: &[u8], out: &mut Vec<u8>) {
    out.reserve(bound(content.len()));
    out.extend_from_slice(&MAGIC.to_le_bytes());
    // Frame_Header_Descriptor: Single_Segment (the window is the content,
    // so no Window_Descriptor), Content_Checksum, and the size of the
    // Frame_Content_Size field.
    let size = content.len() as u64;
    let (fcs_flag, fcs): (u8, Vec<u8>) = if size <= 0xFF {
        (0, vec![size as u8])
    } else if size <= 0xFFFF + 256 {
        (1, ((size - 256) as u16).to_le_bytes().to_vec())
    } else if size <= u64::from(u32::MAX) {
        (2, (size as u32).to_le_bytes().to_vec())
    } else {
        (3, size.to_le_bytes().to_vec())
    };
    out.push(fcs_flag << 6 | 1 << 5 | 1 << 2);
    out.extend_from_slice(&fcs);
    let mut blocks = content.chunks(BLOCK_MAX).peekable();
    if blocks.peek().is_none() {
        // An empty frame still holds one (empty, last) block.
        out.extend_from_slice(&[1, 0, 0]);
    }
    while let Some(block) = blocks.next() {
        let last = u32::from(blocks.peek().is_none());
        // Block_Header: Last_Block, Block_Type 0 (raw), Block_Size.
        let header = last | (block.len() as u32) << 3;
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&(xxh64(content, 0) as u32).to_le_bytes());
}

/// The size of the frame [`write()`] makes for `len` bytes of content.
pub fn bound(len: usize) -> usize {
    let blocks = len.div_ceil(BLOCK_MAX).max(1);
    4 + 1 + 8 + blocks * 3 + len + 4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<u8> {
        let mut x: u32 = 0x1234_5678;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect()
    }

    /// Sizes at every boundary of the content-size field and of blocks.
    const SIZES: [usize; 10] = [
        0,
        1,
        255,
        256,
        0xFFFF + 256,
        0xFFFF + 257,
        BLOCK_MAX - 1,
        BLOCK_MAX,
        BLOCK_MAX + 1,
        3 * BLOCK_MAX + 17,
    ];

    #[test]
    fn libzstd_reads_it_back_with_its_size_and_checksum() {
        for n in SIZES {
            let data = sample(n);
            let mut frame = Vec::new();
            write(&data, &mut frame);
            assert!(frame.len() <= bound(n));
            assert_eq!(
                zstd::zstd_safe::get_frame_content_size(&frame).ok(),
                Some(Some(n as u64)),
                "{n}"
            );
            assert_eq!(zstd::decode_all(frame.as_slice()).unwrap(), data, "{n}");
            // A flipped content byte fails the frame's checksum.
            if n > 0 {
                let at = frame.len() - 5;
                frame[at] ^= 1;
                assert!(zstd::decode_all(frame.as_slice()).is_err(), "{n}");
            }
        }
    }

    #[test]
    fn frames_concatenate_with_compressed_ones() {
        let a = sample(300_000);
        let b = b"hello hello hello hello".repeat(1000);
        let mut out = zstd::bulk::compress(&b, 3).unwrap();
        write(&a, &mut out);
        let back = zstd::decode_all(out.as_slice()).unwrap();
        assert_eq!(back, [b.as_slice(), a.as_slice()].concat());
    }
}
