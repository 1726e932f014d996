//! A blueprint's overlay as its layer is planned: the `files.overlay` folder
//! (relative to the blueprint file), its `files.modes`, and the listing the
//! blueprint id was computed from, so the layer holds the files the id
//! describes and the folder is walked once per build, with the files'
//! SHA-256 the id computed (the user's layer cache finds layers by them).
//! The scan itself is [`crate::overlay`], below both the id and the layer.

use std::sync::Arc;

use crate::blueprint::Blueprint;
use crate::overlay::{Overlay, OverlayEntry, OverlayKind};

impl Overlay {
    /// The blueprint's overlay, if it has one; its folder is relative to the
    /// blueprint file's folder. It carries the listing its id was computed
    /// from (same folder, same modes), when the blueprint was read with its
    /// folder.
    pub fn from_blueprint(bp: &Blueprint) -> Option<Self> {
        let files = bp.spec().files.as_ref()?;
        let base = bp.base_dir();
        let mut overlay = Self::new(base.join(files.overlay.as_str()));
        for m in &files.modes {
            overlay = overlay.with_mode(m.path.in_layer(), m.mode.bits());
        }
        let tree = bp.identity().overlay();
        let listed = tree.and_then(|t| t.listing()).map(Arc::clone);
        let sums = match (&listed, tree.and_then(|t| t.records())) {
            (Some(listed), Some(records)) => file_sums(listed, records).map(Arc::from),
            _ => None,
        };
        Some(overlay.with_listing(listed).with_sums(sums))
    }
}

/// The file digests of `records` (the blueprint id's, made from `listed`
/// in the same order) as bytes; `None` unless they line up entry by entry.
fn file_sums(
    listed: &[OverlayEntry],
    records: &[crate::blueprint::identity::OverlayRecord],
) -> Option<Vec<Option<[u8; 32]>>> {
    use crate::blueprint::identity::RecordKind;
    if listed.len() != records.len() {
        return None;
    }
    listed
        .iter()
        .zip(records)
        .map(|(e, r)| {
            if e.path != r.path {
                return None;
            }
            match (&e.kind, &r.kind) {
                (OverlayKind::File { size, .. }, RecordKind::File { size: s, sha256 }) => {
                    (size == s).then(|| parse_sha256(sha256))?.map(Some)
                }
                (OverlayKind::File { .. }, _) => None,
                _ => Some(None),
            }
        })
        .collect()
}

/// `sha256:<64 hex>` as bytes.
fn parse_sha256(text: &str) -> Option<[u8; 32]> {
    let hex = text.strip_prefix("sha256:")?.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}
