//! Whether a chunk of a layer is already compressed (or encrypted, or
//! random): data a level-3 search cannot shrink, which the layer therefore
//! stores in a raw frame (`raw_frame`) instead of searching it.
//!
//! The test looks at the bytes, not at names or magic numbers, so it
//! covers every compressed format (gzip, xz, zstd, bzip2, zip, JPEG…) and
//! data with no header at all. The output of a compressor is close to
//! uniformly distributed bytes; text, code, binaries and tables are far
//! from it. For each 128 KiB block (zstd's block size) four 4 KiB samples
//! are counted, and the block looks compressed when the byte counts pass a
//! chi-squared test for uniformity: 256·Σcᵢ²/n − n ≤ [`LIMIT`]. For
//! uniform bytes the statistic is about 255 ± 23; measured per block, xz
//! output gives 200–320, deflate and zstd -19 output of varied data
//! 250–800, text and ELF binaries 10⁵ and more. Compressed data that zstd
//! can still shrink is not uniform either: gzip of a periodic text (which
//! zstd -3 takes to a quarter, its window being larger than deflate's)
//! measured 10⁴ and more, so a test by magic number would have stored it
//! and this one compresses it. A chunk is stored only when every one of
//! its blocks passes, so a chunk holding anything else is compressed as
//! usual. The arithmetic is on integers: the decision, and with it the
//! blob, is the same on every machine.
//!
//! What a false "compressed" costs is compression ratio, never
//! correctness: a chunk of random-looking bytes that repeats itself within
//! zstd's window would have come out smaller. Sampling a sixteenth of each
//! block keeps the test about fifty times cheaper than the search it
//! replaces.

/// zstd's block size: the unit the test judges.
const BLOCK: usize = 128 << 10;
/// Samples per block and their size.
const SAMPLES: usize = 4;
const SAMPLE: usize = 4 << 10;
/// The most the chi-squared statistic of a block's samples may reach for
/// the block to count as compressed.
pub const LIMIT: u64 = 1024;
/// Fewer sampled bytes than this say too little; such a block is compressed.
const MIN_SAMPLED: u64 = 2048;

/// True when every block of `chunk` looks like compressed data.
pub fn incompressible(chunk: &[u8]) -> bool {
    !chunk.is_empty() && chunk.chunks(BLOCK).all(block_looks_compressed)
}

fn block_looks_compressed(block: &[u8]) -> bool {
    let mut counts = [0u32; 256];
    let mut n = 0u64;
    for piece in block.chunks(BLOCK / SAMPLES) {
        let sample = &piece[..piece.len().min(SAMPLE)];
        for &b in sample {
            counts[usize::from(b)] += 1;
        }
        n += sample.len() as u64;
    }
    if n < MIN_SAMPLED {
        return false;
    }
    let squares: u64 = counts.iter().map(|&c| u64::from(c) * u64::from(c)).sum();
    // 256·Σc²/n − n ≤ LIMIT, without division.
    256 * squares <= n * (n + LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (x >> 56) as u8
            })
            .collect()
    }

    /// Lines of log-like text whose numbers come from `noise`.
    fn text(n: usize) -> Vec<u8> {
        let r = noise(n / 8, 11);
        let mut out = Vec::new();
        for w in r.chunks(4) {
            let v = u32::from_le_bytes([w[0], w[1], w[2], w.get(3).copied().unwrap_or(0)]);
            out.extend(
                format!("gpu{} xid={} pcie=gen{} {:08x}\n", v % 8, v % 120, v % 5, v).bytes(),
            );
            if out.len() >= n {
                break;
            }
        }
        out.truncate(n);
        out
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut gz, data).unwrap();
        gz.finish().unwrap()
    }

    /// Whole blocks of `data`.
    fn blocks(data: &[u8]) -> &[u8] {
        &data[..data.len() / BLOCK * BLOCK]
    }

    #[test]
    fn compressor_output_passes_and_plain_data_does_not() {
        assert!(incompressible(&noise(4 << 20, 7)));
        let text = text(8 << 20);
        assert!(!incompressible(&text));
        assert!(!incompressible(&[0u8; 1 << 20]));
        assert!(!incompressible(&[]));
        for (name, packed) in [
            ("gzip", gzip(&text)),
            ("zstd -19", zstd::bulk::compress(&text, 19).unwrap()),
        ] {
            assert!(packed.len() > 2 * BLOCK, "{name}: {}", packed.len());
            assert!(incompressible(blocks(&packed)), "{name}");
        }
    }

    #[test]
    fn a_compressed_file_that_zstd_still_shrinks_is_compressed() {
        // gzip of a periodic text: deflate's 32 KiB window leaves repeats
        // that zstd's larger one finds, so its bytes are far from uniform.
        let periodic: Vec<u8> = (0..1u32 << 20)
            .flat_map(|i| format!("{} mtu={} numa_node={}\n", i, i % 9001, i % 7).into_bytes())
            .take(6 << 20)
            .collect();
        let gz = gzip(&periodic);
        let again = zstd::bulk::compress(blocks(&gz), 3).unwrap();
        assert!(again.len() < blocks(&gz).len() / 2);
        assert!(!incompressible(blocks(&gz)));
    }

    #[test]
    fn one_plain_block_keeps_the_chunk_compressed() {
        let mut chunk = noise(4 << 20, 3);
        chunk[BLOCK * 9..BLOCK * 10].fill(b'a');
        assert!(!incompressible(&chunk));
        // A tail too short to judge is compressed.
        let short = noise(BLOCK + 100, 5);
        assert!(!incompressible(&short));
        assert!(incompressible(&short[..BLOCK]));
    }
}
