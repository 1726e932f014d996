//! The whole-GPU acceptance window seen from layer 2. On a class whose GPUs the device
//! plugin shares (time-slicing, MPS), `acceptance/whole-gpus.sh` switches a node to the
//! plugin's configuration without sharing ([`WHOLE_GPUS_CONFIG`]) for layers 4 and 5 and
//! back to the class's key afterwards. A node found still carrying the whole key was left
//! in that window (the script killed, or the label set by hand): its sharing checks say
//! so and give the command that restores it, instead of a bare mismatch.

use crate::blueprint;
use crate::blueprint::model::{DEVICE_PLUGIN_CONFIG_LABEL, WHOLE_GPUS_CONFIG};
use crate::k8s::Node;

/// What to tell about a shared class's node left with whole GPUs; `None` for any other.
pub(super) fn left_whole(blueprint: &blueprint::Spec, node: &Node) -> Option<String> {
    let (_, class) = blueprint
        .sharing_labels()
        .into_iter()
        .find(|(key, _)| *key == DEVICE_PLUGIN_CONFIG_LABEL)?;
    let label = node.labels.get(DEVICE_PLUGIN_CONFIG_LABEL)?;
    (label == WHOLE_GPUS_CONFIG).then(|| {
        format!(
            "the node was left in the whole-GPU acceptance configuration \
             ({DEVICE_PLUGIN_CONFIG_LABEL}={WHOLE_GPUS_CONFIG}, acceptance/whole-gpus.sh), so \
             the device plugin hands out whole GPUs, not the class's shares; restore it: \
             kubectl label node {} {DEVICE_PLUGIN_CONFIG_LABEL}={class} --overwrite",
            node.name
        )
    })
}
