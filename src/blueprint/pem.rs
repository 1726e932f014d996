//! PEM certificate files (RFC 7468): what a CA file the blueprint names must
//! hold before it is copied into the image's trust stores.
//!
//! Every `-----BEGIN X-----` block must be a `CERTIFICATE` whose base64
//! body decodes to a DER SEQUENCE of the length it declares; text between
//! blocks (the `subject=` lines openssl writes) is allowed. A private key,
//! a CSR, an empty file or anything that is not PEM at all is refused, so a
//! mistyped path or a secret never ends up trusted on every node.

/// Checks `bytes` and returns how many certificates it holds.
pub fn certificates(bytes: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "is not PEM text (not UTF-8)".to_string())?;
    let mut count = 0;
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let line = line.trim();
        let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        else {
            if line.starts_with("-----END ") {
                return Err(format!("line {}: END without BEGIN", n + 1));
            }
            continue;
        };
        if label != "CERTIFICATE" && label != "TRUSTED CERTIFICATE" {
            let what = if label.contains("PRIVATE KEY") {
                "a private key, which must never be copied into an image"
            } else {
                "not a certificate"
            };
            return Err(format!(
                "line {}: holds a `{label}` block, {what}; a CA file holds only certificates",
                n + 1
            ));
        }
        let mut body = String::new();
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            let l = l.trim();
            if l == format!("-----END {label}-----") {
                closed = true;
                break;
            }
            body.push_str(l);
        }
        if !closed {
            return Err(format!("line {}: `{label}` block is never closed", n + 1));
        }
        let der = base64(&body).map_err(|e| format!("line {}: {e}", n + 1))?;
        der_sequence(&der).map_err(|e| format!("line {}: not a DER certificate ({e})", n + 1))?;
        count += 1;
    }
    if count == 0 {
        return Err("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into());
    }
    Ok(count)
}

/// Checks that `bytes` hold one ECDSA P-256 public key (PEM `PUBLIC KEY`, as `openssl pkey
/// -pubout` and `cosign generate-key-pair` write it): the key a trust policy names. A
/// private key is refused, so it never ends up in an image.
pub fn public_key(bytes: &[u8]) -> Result<(), String> {
    use p256::pkcs8::DecodePublicKey;
    let text = std::str::from_utf8(bytes).map_err(|_| "is not PEM text (not UTF-8)".to_string())?;
    if text.contains("PRIVATE KEY-----") {
        return Err(
            "holds a private key, which must never be copied into an image; name the public key (`openssl pkey -pubout`)"
                .into(),
        );
    }
    let start = text
        .find("-----BEGIN PUBLIC KEY-----")
        .ok_or("holds no `PUBLIC KEY` block")?;
    p256::PublicKey::from_public_key_pem(text[start..].trim_end())
        .map(|_| ())
        .map_err(|e| format!("is not an ECDSA P-256 public key ({e})"))
}

/// Standard base64 with `=` padding, as PEM bodies are written.
fn base64(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    if text.is_empty() {
        return Err("the base64 body is empty".into());
    }
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("the body is not base64: {e}"))
}

/// The bytes are one DER SEQUENCE whose length covers exactly the rest.
fn der_sequence(der: &[u8]) -> Result<(), String> {
    let (&tag, rest) = der.split_first().ok_or("empty")?;
    if tag != 0x30 {
        return Err(format!("starts with tag 0x{tag:02x}, not a SEQUENCE"));
    }
    let (&first, rest) = rest.split_first().ok_or("no length")?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return Err("bad length".into());
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |a, &b| (a << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if len != rest.len() {
        return Err(format!("declares {len} bytes, holds {}", rest.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &str = include_str!("../../blueprints/certs/corp-root-ca.pem");

    #[test]
    fn real_certificates_pass() {
        assert_eq!(certificates(CERT.as_bytes()), Ok(1));
        let two = format!("subject=CN=x\n{CERT}\n{CERT}");
        assert_eq!(certificates(two.as_bytes()), Ok(2));
    }

    #[test]
    fn everything_else_is_refused() {
        let key =
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n";
        assert!(
            certificates(key.as_bytes())
                .unwrap_err()
                .contains("private key")
        );
        assert!(
            certificates(b"")
                .unwrap_err()
                .contains("no PEM certificate")
        );
        assert!(certificates(b"MY_TOKEN=supersecret\0PATH=/bin\0").is_err());
        let cut = CERT.replace("-----END CERTIFICATE-----", "");
        assert!(
            certificates(cut.as_bytes())
                .unwrap_err()
                .contains("never closed")
        );
        let garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert!(
            certificates(garbage.as_bytes())
                .unwrap_err()
                .contains("not a DER")
        );
        let mut bad = CERT.to_string();
        let at = bad.find('\n').unwrap() + 5;
        bad.replace_range(at..at + 1, "!");
        assert!(certificates(bad.as_bytes()).is_err());
    }
}
