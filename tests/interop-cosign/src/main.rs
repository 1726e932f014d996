//! `interop-cosign verify IMAGE PUBKEY` and `interop-cosign sign IMAGE KEY PASSWORD`:
//! sigstore-rs's cosign verification (the `.sig` layers of IMAGE, one of which the public
//! key must verify over IMAGE's digest) and signing (a simple-signing layer pushed to
//! IMAGE's `.sig` tag), against a registry spoken to over plain HTTP. Exit 0 verified or
//! signed, 1 not verified, 2 anything else.

use sigstore::cosign::constraint::PrivateKeySigner;
use sigstore::cosign::verification_constraint::{PublicKeyVerifier, VerificationConstraintVec};
use sigstore::cosign::{Constraint, CosignCapabilities, SignatureLayer};
use sigstore::crypto::SigningScheme;
use sigstore::registry::{Auth, ClientConfig, ClientProtocol, OciReference};

fn client() -> Result<sigstore::cosign::Client, String> {
    let mut config = ClientConfig::default();
    config.protocol = ClientProtocol::Http;
    sigstore::cosign::ClientBuilder::default()
        .with_oci_client_config(config)
        .build()
        .map_err(|e| e.to_string())
}

async fn verify(image: &str, key: &str) -> Result<bool, String> {
    let image: OciReference = image.parse().map_err(|e| format!("{e:?}"))?;
    let key = std::fs::read(key).map_err(|e| e.to_string())?;
    let verifier = PublicKeyVerifier::new(&key, &SigningScheme::ECDSA_P256_SHA256_ASN1)
        .map_err(|e| e.to_string())?;
    let constraints: VerificationConstraintVec = vec![Box::new(verifier)];
    let layers = client()?
        .trusted_signature_layers(&Auth::Anonymous, &image)
        .await
        .map_err(|e| e.to_string())?;
    eprintln!("{} signature layer(s) for {image}", layers.len());
    Ok(sigstore::cosign::verify_constraints(&layers, constraints.iter()).is_ok())
}

async fn sign(image: &str, key: &str, password: &str) -> Result<(), String> {
    let image: OciReference = image.parse().map_err(|e| format!("{e:?}"))?;
    let mut client = client()?;
    let (sig_image, digest) = client
        .triangulate(&image, &Auth::Anonymous)
        .await
        .map_err(|e| e.to_string())?;
    let mut layer = SignatureLayer::new_unsigned(&image, &digest).map_err(|e| e.to_string())?;
    let key = std::fs::read(key).map_err(|e| e.to_string())?;
    let signer = PrivateKeySigner::new_with_raw(
        key.into(),
        password.as_bytes().to_vec().into(),
        &SigningScheme::ECDSA_P256_SHA256_ASN1,
    )
    .map_err(|e| e.to_string())?;
    signer
        .add_constraint(&mut layer)
        .map_err(|e| e.to_string())?;
    client
        .push_signature(None, &Auth::Anonymous, &sig_image, vec![layer])
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["verify", image, key] => verify(image, key).await.map(|ok| if ok { 0 } else { 1 }),
        ["sign", image, key, password] => sign(image, key, password).await.map(|()| 0),
        _ => Err("usage: interop-cosign verify IMAGE PUBKEY | sign IMAGE KEY PASSWORD".into()),
    };
    match result {
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            eprintln!("interop-cosign: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
