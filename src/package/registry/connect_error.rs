//! Why a connection to a registry failed, in plain words. The HTTP client's own text is
//! a chain of layers (`error sending request for url (…): client error (Connect): tcp
//! connect error: Connection refused (os error 111)`); an operator needs the cause and
//! what to check, and a hint only where it fits: plain HTTP is suggested when the TLS
//! handshake met something that is not TLS, not when the name does not resolve.

use std::error::Error;
use std::io::ErrorKind;

/// The cause of a failed connection to `host`, with the client's innermost message last.
pub fn describe(e: &(dyn Error + 'static), host: &str, insecure: bool) -> String {
    let mut texts = Vec::new();
    let mut io_kind = None;
    let mut cur: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(c) = cur {
        texts.push(c.to_string());
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            io_kind = Some(io.kind());
        }
        cur = c.source();
    }
    let all = texts.join(": ").to_ascii_lowercase();
    let detail = texts.last().cloned().unwrap_or_default();
    let cause = if all.contains("dns error") || all.contains("lookup address") {
        format!(
            "the host name {host} does not resolve (DNS); check the name and this machine's resolver"
        )
    } else if io_kind == Some(ErrorKind::ConnectionRefused) || all.contains("connection refused") {
        format!(
            "{host} refused the connection: nothing listens on that port (check the port in the reference)"
        )
    } else if matches!(
        io_kind,
        Some(ErrorKind::NetworkUnreachable | ErrorKind::HostUnreachable)
    ) || all.contains("unreachable")
    {
        format!("no route to {host}: check the network, a proxy or a firewall")
    } else if io_kind == Some(ErrorKind::TimedOut) || all.contains("timed out") {
        format!("{host} did not accept the connection in time: a firewall may drop it")
    } else if all.contains("certificate") || all.contains("unknownissuer") {
        format!(
            "{host}'s TLS certificate is not trusted here: add its CA to this machine's trust store"
        )
    } else if all.contains("corrupt message") || all.contains("invalidcontenttype") {
        if insecure {
            format!("{host} did not speak TLS")
        } else {
            format!("{host} did not speak TLS: a registry that speaks plain HTTP needs --insecure")
        }
    } else {
        format!("cannot connect to {host}")
    };
    format!("{cause} ({detail})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrap(&'static str, std::io::Error);
    impl std::fmt::Display for Wrap {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl Error for Wrap {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.1)
        }
    }

    #[test]
    fn causes_in_plain_words_and_the_plain_http_hint_only_for_non_tls() {
        let refused = Wrap(
            "client error (Connect)",
            std::io::Error::from(ErrorKind::ConnectionRefused),
        );
        let text = describe(&refused, "reg:5000", false);
        assert!(
            text.starts_with("reg:5000 refused the connection"),
            "{text}"
        );
        let dns = Wrap(
            "dns error",
            std::io::Error::other("failed to lookup address information"),
        );
        let text = describe(&dns, "reg.invalid", false);
        assert!(text.contains("does not resolve"), "{text}");
        assert!(!text.contains("--insecure"), "{text}");
        let http = Wrap(
            "tls",
            std::io::Error::other("received corrupt message of type InvalidContentType"),
        );
        assert!(describe(&http, "reg", false).contains("--insecure"));
    }
}
