//! A blueprint's overlay as its layer is planned: the `files.overlay` folder
//! (relative to the blueprint file), its `files.modes`, and the listing the
//! blueprint id was computed from, so the layer holds the files the id
//! describes and the folder is walked once per build. The scan itself is
//! [`crate::overlay`], below both the id and the layer.

use std::sync::Arc;

use crate::blueprint::Blueprint;
use crate::overlay::Overlay;

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
        let listed = bp
            .identity()
            .overlay()
            .and_then(|t| t.listing())
            .map(Arc::clone);
        Some(overlay.with_listing(listed))
    }
}
