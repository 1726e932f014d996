//! Hostile input to the signature code: whatever bytes a registry or a layout hands over
//! as a payload, an attachment manifest, a DSSE envelope, an attestation or a key, the
//! parsers answer with an error (never a panic), a changed byte never verifies, deep
//! nesting is refused, and a descriptor claiming a huge blob is refused before anything
//! is read.

use nodeimg::package::Digest;
use nodeimg::trust::attachment::Manifest;
use nodeimg::trust::dsse::Envelope;
use nodeimg::trust::payload::Payload;
use nodeimg::trust::{PublicKey, SigningKey, attestation};
use proptest::prelude::*;

fn key(n: u8) -> SigningKey {
    use p256::pkcs8::EncodePrivateKey;
    let k = p256::ecdsa::SigningKey::from_slice(&[n; 32]).unwrap();
    SigningKey::from_pem(&k.to_pkcs8_pem(Default::default()).unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic_the_parsers(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = Payload::parse(&bytes);
        let _ = Manifest::parse(&bytes);
        let _ = Envelope::parse(&bytes);
        let image = Digest::of(b"image");
        let _ = attestation::verify(&bytes, &image, &[key(1).public().clone()]);
        let text = String::from_utf8_lossy(&bytes);
        let _ = PublicKey::from_pem(&text);
        let _ = SigningKey::from_pem(&text);
        let _ = PublicKey::from_pem(&format!("-----BEGIN PUBLIC KEY-----\n{text}\n-----END PUBLIC KEY-----\n"));
        prop_assert!(!key(1).public().verifies(b"payload", &bytes));
    }

    #[test]
    fn a_changed_byte_never_verifies(at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let k = key(3);
        let image = Digest::of(b"image");
        let payload = Payload::new(&image, "reg.example/nodes/x:v1").to_bytes();
        let sig = k.sign(&payload);
        prop_assert!(k.public().verifies(&payload, &sig));
        let mut changed = payload.clone();
        let i = at.index(changed.len());
        changed[i] ^= 1 << bit;
        prop_assert!(!k.public().verifies(&changed, &sig));
        let mut bad_sig = sig.clone();
        let j = at.index(bad_sig.len());
        bad_sig[j] ^= 1 << bit;
        prop_assert!(!k.public().verifies(&payload, &bad_sig));
    }
}

#[test]
fn deeply_nested_documents_are_refused_not_recursed() {
    for depth in [200usize, 100_000] {
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(Payload::parse(deep.as_bytes()).is_err());
        assert!(Manifest::parse(deep.as_bytes()).is_err());
        assert!(Envelope::parse(deep.as_bytes()).is_err());
        let nested = format!(
            r#"{{"payloadType":"x","payload":"","signatures":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(Envelope::parse(nested.as_bytes()).is_err());
    }
    // Larger than the bounds: refused by size.
    let big = vec![b' '; 17 * 1024 * 1024];
    assert!(Envelope::parse(&big).unwrap_err().contains("more than"));
    assert!(Payload::parse(&big).unwrap_err().contains("more than"));
}

#[test]
fn a_descriptor_claiming_a_huge_blob_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("blobs/sha256")).unwrap();
    std::fs::write(root.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    let digest = Digest::of(b"small");
    std::fs::write(root.join("blobs/sha256").join(digest.hex()), b"small").unwrap();
    let index = serde_json::json!({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": digest.to_string(), "size": 1u64 << 40,
        "annotations": {"org.opencontainers.image.ref.name": "v1"}}]});
    std::fs::write(root.join("index.json"), serde_json::to_vec(&index).unwrap()).unwrap();
    let files = nodeimg::trust::Dir(root.to_path_buf());
    let layout = nodeimg::trust::Layout::open(&files).unwrap();
    let e = nodeimg::trust::verify_image(&layout, &[key(1).public().clone()], &Default::default())
        .unwrap_err();
    assert!(e.message.contains("claims 1099511627776 bytes"), "{e}");
}
